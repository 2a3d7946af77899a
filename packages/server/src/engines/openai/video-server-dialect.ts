/**
 * The `VideoServerDialect` port of the `openai` engine: what one server of OpenAI's Videos API takes and does,
 * where OpenAI, SGLang Diffusion and vLLM-Omni differ (the fields and encoding of `POST /v1/videos`, the sizes
 * and durations, what `DELETE` does to a running video). The engine speaks to every server the same way
 * otherwise. Implementations: dialects/openai-dialect.ts, sglang-dialect.ts, vllm-omni-dialect.ts.
 */
import type { EngineCapabilities } from '../../domain/engine-capabilities.js';
import type { UpstreamBody } from '../upstream-request.js';
import type { ImageUpload } from './image-upload.js';
import type { OpenAiOptions, VideoServer } from './openai-options.js';

/** What the engine asks one video for, already mapped onto what the server takes. */
export interface CreateVideoInput {
  readonly model: string;
  readonly prompt: string;
  /** `1280x720`. */
  readonly size: string;
  readonly seconds: number;
  readonly seed: number;
  /** With the engine's `fps` option: the frame rate and the frame count for the duration. */
  readonly frames?: { readonly fps: number; readonly count: number };
  /** The engine's `extra_body`. */
  readonly extra: Readonly<Record<string, unknown>>;
  /** The first frame, already of `size`. */
  readonly image?: ImageUpload;
}

export interface CreateVideoRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: UpstreamBody;
}

/** What `DELETE /v1/videos/{id}` does to a video still being made. */
export type RunningDelete = 'stops' | 'forgets' | 'refused';

export interface VideoServerDialect {
  readonly server: VideoServer;
  /** The server's name for people: `vLLM-Omni`. */
  readonly title: string;
  /**
   * The inputs the server takes in the fields this dialect sends, so that a request it would not honour is
   * refused at creation (engines/openai/openai-capabilities.ts).
   */
  readonly inputs: EngineCapabilities;
  /** The sizes to choose from when the engine has no `sizes` option; undefined for any size. */
  defaultSizes(model: string): readonly string[] | undefined;
  /** The durations to choose from when the engine has no `seconds` option; undefined for any. */
  readonly defaultSeconds: readonly number[] | undefined;
  /** Why these options cannot work with this server (a field it would refuse or ignore), or undefined. */
  optionsProblem(options: OpenAiOptions): string | undefined;
  createRequest(input: CreateVideoInput): CreateVideoRequest;
  readonly runningDelete: RunningDelete;
  /**
   * Whether `GET /v1/videos/{id}` of a failed video answers with an error status and the video object as its
   * body (vLLM-Omni), so that an error answer must be read before it is retried or refused.
   */
  readonly failedVideoHasErrorStatus: boolean;
  /** Why the server's `GET /v1/models` list shows it will not take `model`, or undefined. */
  modelsProblem(list: readonly string[], model: string): string | undefined;
}

/**
 * One image, `input_reference`, as the first frame (and, in reference mode, the first reference image as the
 * first frame): no last frame, no reference videos or audio, which the engine would otherwise leave out.
 */
export const INPUT_REFERENCE_ONLY: EngineCapabilities = {
  firstFrame: true,
  lastFrame: false,
  referenceImages: 1,
  referenceVideos: 0,
  referenceAudios: 0,
  audio: false,
};

/** A JSON body. */
export function jsonRequest(fields: Readonly<Record<string, unknown>>): CreateVideoRequest {
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields) };
}

/** A form value as servers read it: strings as they are, numbers and booleans written out, objects as JSON. */
export function formValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
