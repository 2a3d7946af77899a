/**
 * OpenAI's own Videos API (Sora 2), from openai/openai-openapi `openapi.yaml` (CreateVideoMultipartBody,
 * VideoSize, VideoSeconds, DeletedVideoResource) and the openai-python/openai-node `videos.create`, which
 * always send multipart: `model`, `prompt`, `seconds` ("4", "8", "12"), `size`, and `input_reference` as a
 * JPEG, PNG or WebP file that must be exactly `size` ("Inpaint image must match the requested width and
 * height"). Any other parameter is refused (400 `unknown_parameter`), `seed` included. sora-2 makes
 * 1280x720 and 720x1280; sora-2-pro also 1024x1792 and 1792x1024 (OpenAI's Sora 2 prompting guide).
 * Only a completed or failed video can be deleted: a started video cannot be stopped.
 */
import { FormData } from 'undici';
import type { OpenAiOptions } from '../openai-options.js';
import {
  type CreateVideoInput,
  type CreateVideoRequest,
  INPUT_REFERENCE_ONLY,
  type VideoServerDialect,
} from '../video-server-dialect.js';

const SORA_2_SIZES = ['1280x720', '720x1280'] as const;
const SORA_2_PRO_SIZES = [...SORA_2_SIZES, '1792x1024', '1024x1792'] as const;
const MODELS_SHOWN = 10;

export const openAiDialect: VideoServerDialect = {
  server: 'openai',
  title: 'OpenAI',
  // `input_reference` is the one image OpenAI's create takes (CreateVideoMultipartBody); nothing else is an input.
  // Sora 2 always makes sound (no parameter turns it off): a task with generate_audio false has it removed.
  inputs: { ...INPUT_REFERENCE_ONLY, audio: true },
  defaultSizes: (model) => (model.startsWith('sora-2-pro') ? SORA_2_PRO_SIZES : SORA_2_SIZES),
  defaultSeconds: [4, 8, 12],
  optionsProblem(options: OpenAiOptions): string | undefined {
    const extra = Object.keys(options.extra_body ?? {});
    if (extra.length > 0) {
      return `extra_body: OpenAI's Videos API takes only model, prompt, seconds, size and input_reference, and refuses any other parameter (${extra.join(', ')})`;
    }
    if (options.fps !== undefined || options.frame_step !== undefined) {
      return 'fps, frame_step: OpenAI takes no frame rate or frame count, only seconds';
    }
    return undefined;
  },
  createRequest(input: CreateVideoInput): CreateVideoRequest {
    const form = new FormData();
    form.append('model', input.model);
    form.append('prompt', input.prompt);
    form.append('seconds', String(input.seconds));
    form.append('size', input.size);
    const { image } = input;
    if (image) {
      form.append('input_reference', new Blob([image.bytes], { type: image.contentType }), image.fileName);
    }
    return { headers: {}, body: form };
  },
  runningDelete: 'refused',
  failedVideoHasErrorStatus: false,
  modelsProblem(list, model) {
    if (list.includes(model)) return undefined;
    const shown = list.slice(0, MODELS_SHOWN).join(', ');
    return `the key cannot use the model "${model}" (GET /v1/models lists ${list.length}: ${shown}${list.length > MODELS_SHOWN ? ', …' : ''})`;
  },
};
