/** The `openai` engine's dialect for each `server` option. */
import { openAiDialect } from './dialects/openai-dialect.js';
import { sglangDialect } from './dialects/sglang-dialect.js';
import { vllmOmniDialect } from './dialects/vllm-omni-dialect.js';
import type { VideoServer } from './openai-options.js';
import type { VideoServerDialect } from './video-server-dialect.js';

export const VIDEO_SERVER_DIALECTS: Readonly<Record<VideoServer, VideoServerDialect>> = {
  openai: openAiDialect,
  sglang: sglangDialect,
  'vllm-omni': vllmOmniDialect,
};
