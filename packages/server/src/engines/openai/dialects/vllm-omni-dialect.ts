/**
 * vLLM-Omni's `/v1/videos` (vllm-project/vllm-omni, vllm_omni/entrypoints/openai/api_server.py
 * `_parse_video_form`, protocol/videos.py): multipart form data only (`prompt: str = Form(...)`; a JSON body
 * reads as an empty form and is refused for its missing prompt). `model` must equal the first served model
 * name ("Model mismatch"). `seconds` is a string of digits and `size` `WIDTHxHEIGHT`; form fields it does not
 * declare are ignored, so extra settings are limited to the ones it reads. An uploaded image is resized to
 * the size (stretched), so it is sent already fitted. A failed video's `GET` answers with the failure's HTTP
 * status and the video as its body. `DELETE` of a running video cancels its engine request.
 */
import { FormData } from 'undici';
import type { OpenAiOptions } from '../openai-options.js';
import {
  type CreateVideoInput,
  type CreateVideoRequest,
  formValue,
  INPUT_REFERENCE_ONLY,
  type VideoServerDialect,
} from '../video-server-dialect.js';

/** The form fields `_parse_video_form` declares, beside those the engine sets itself. */
const SETTINGS = new Set([
  'negative_prompt',
  'num_inference_steps',
  'guidance_scale',
  'guidance_scale_2',
  'boundary_ratio',
  'flow_shift',
  'true_cfg_scale',
  'generate_sound',
  'sound_duration',
  'enable_frame_interpolation',
  'frame_interpolation_exp',
  'frame_interpolation_scale',
  'frame_interpolation_model_path',
  'lora',
  'extra_params',
  'user',
]);

export const vllmOmniDialect: VideoServerDialect = {
  server: 'vllm-omni',
  title: 'vLLM-Omni',
  // `_parse_video_form` reads one `input_reference` upload (or one `image_reference`) as the reference image,
  // and no other image, video or audio.
  inputs: INPUT_REFERENCE_ONLY,
  defaultSizes: () => undefined,
  defaultSeconds: undefined,
  optionsProblem(options: OpenAiOptions): string | undefined {
    const ignored = Object.keys(options.extra_body ?? {}).filter((name) => !SETTINGS.has(name));
    if (ignored.length === 0) return undefined;
    return `extra_body: vLLM-Omni reads only the form fields ${[...SETTINGS].join(', ')} and would ignore ${ignored.join(', ')} (model-specific settings go in extra_params)`;
  },
  createRequest(input: CreateVideoInput): CreateVideoRequest {
    const form = new FormData();
    const fields: Record<string, unknown> = {
      prompt: input.prompt,
      model: input.model,
      size: input.size,
      seconds: input.seconds,
      seed: input.seed,
      ...(input.frames ? { fps: input.frames.fps, num_frames: input.frames.count } : {}),
      ...input.extra,
    };
    for (const [name, value] of Object.entries(fields)) {
      const text = formValue(value);
      if (text !== undefined) form.append(name, text);
    }
    const { image } = input;
    if (image) {
      form.append('input_reference', new Blob([image.bytes], { type: image.contentType }), image.fileName);
    }
    return { headers: {}, body: form };
  },
  runningDelete: 'stops',
  failedVideoHasErrorStatus: true,
  modelsProblem(list, model) {
    const served = list[0];
    if (served === undefined || served === model) return undefined;
    return `vLLM-Omni serves "${served}" and refuses any other model name: set model to "${served}"`;
  },
};
