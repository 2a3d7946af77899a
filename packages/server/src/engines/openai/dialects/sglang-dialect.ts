/**
 * SGLang Diffusion's `/v1/videos` (sgl-project/sglang, python/sglang/multimodal_gen/runtime/entrypoints/openai/
 * video_api.py and protocol.py). A JSON body is read into `VideoGenerationsRequest`, which keeps any field
 * (`seed`, `num_inference_steps`, …: extra="allow"). A multipart body, needed for an uploaded image, is read
 * from form fields, and the first releases read only `prompt`, `input_reference`, `model`, `seconds`,
 * `size`, `fps`, `num_frames` and `extra_body` (a JSON string, whose keys later releases honour as settings):
 * so the seed and every other setting go inside `extra_body`, which every release reads, rather than as
 * fields that some releases drop (the seed would then silently be the server's default). Without `fps` and
 * `num_frames` SGLang makes 24 fps × seconds, whatever the model's own rate.
 * `DELETE /v1/videos/{id}` only forgets the video ("TODO: support aborting a job"): the GPU finishes it.
 */
import { FormData } from 'undici';
import type { OpenAiOptions } from '../openai-options.js';
import {
  type CreateVideoInput,
  type CreateVideoRequest,
  formValue,
  INPUT_REFERENCE_ONLY,
  jsonRequest,
  type VideoServerDialect,
} from '../video-server-dialect.js';

export const sglangDialect: VideoServerDialect = {
  server: 'sglang',
  title: 'SGLang Diffusion',
  // `create_video` reads one `input_reference` (the form's upload; a path in JSON) as the sampling's
  // `image_path`, and no other image, video or audio.
  inputs: INPUT_REFERENCE_ONLY,
  defaultSizes: () => undefined,
  defaultSeconds: undefined,
  optionsProblem: (_options: OpenAiOptions) => undefined,
  createRequest(input: CreateVideoInput): CreateVideoRequest {
    const frames = input.frames ? { fps: input.frames.fps, num_frames: input.frames.count } : {};
    const settings = { seed: input.seed, ...input.extra };
    const { image } = input;
    if (!image) {
      return jsonRequest({
        model: input.model,
        prompt: input.prompt,
        size: input.size,
        seconds: input.seconds,
        ...frames,
        ...settings,
      });
    }
    const form = new FormData();
    const fields: Record<string, unknown> = {
      prompt: input.prompt,
      model: input.model,
      seconds: input.seconds,
      size: input.size,
      ...frames,
    };
    for (const [name, value] of Object.entries(fields)) {
      const text = formValue(value);
      if (text !== undefined) form.append(name, text);
    }
    form.append('extra_body', JSON.stringify(settings));
    form.append('input_reference', new Blob([image.bytes], { type: image.contentType }), image.fileName);
    return { headers: {}, body: form };
  },
  runningDelete: 'forgets',
  failedVideoHasErrorStatus: false,
  modelsProblem: () => undefined,
};
