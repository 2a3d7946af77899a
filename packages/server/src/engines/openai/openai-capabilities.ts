/** What an `openai` engine can hand its server: what its dialect's server takes (video-server-dialect.ts). */
import type { EngineCapabilities } from '../../domain/engine-capabilities.js';
import type { OpenAiOptions } from './openai-options.js';
import { VIDEO_SERVER_DIALECTS } from './video-server-dialects.js';

export function openAiCapabilities(options: OpenAiOptions): EngineCapabilities {
  return VIDEO_SERVER_DIALECTS[options.server ?? 'openai'].inputs;
}
