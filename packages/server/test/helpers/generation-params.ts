import type { GenerationParams } from '../../src/domain/generation-request.js';

/** A text task's params as the API stores them, with `fields` changed: for tests that make tasks without the API. */
export function generationParams(fields: Partial<GenerationParams> = {}): GenerationParams {
  return {
    prompt: 'p',
    image_urls: [],
    video_urls: [],
    audio_urls: [],
    duration: 5,
    quality: '720p',
    aspect_ratio: '16:9',
    seed: 7,
    callback_url: null,
    generate_audio: true,
    ...fields,
  };
}
