/**
 * Options of an `openai` engine: a server with OpenAI's Videos API (`/v1/videos`): OpenAI itself, SGLang
 * Diffusion or vLLM-Omni, each spoken in its own dialect (`server`).
 */
import { type Static, Type } from '@sinclair/typebox';

export const VIDEO_SERVERS = ['openai', 'sglang', 'vllm-omni'] as const;
export type VideoServer = (typeof VIDEO_SERVERS)[number];

export const OpenAiOptionsSchema = Type.Object(
  {
    type: Type.Literal('openai'),
    /** Which server this is, for the fields, encodings and sizes it takes; default `openai`. */
    server: Type.Optional(Type.Union(VIDEO_SERVERS.map((server) => Type.Literal(server)))),
    /** The server's base URL, without `/v1`: `http://gpu-1:30000`. */
    base_url: Type.String({ pattern: '^https?://[^\\s]+$' }),
    /** Sent as `Authorization: Bearer …`; write `${ENV_VAR}` to take it from the environment. */
    api_key: Type.Optional(Type.String()),
    /** The `model` the server expects: `sora-2`, or the served model name of vLLM-Omni. */
    model: Type.String({ minLength: 1 }),
    /**
     * Sizes the server accepts (`1280x720`); the request's frame is mapped to the nearest. Default: OpenAI's
     * sizes for the model on `openai`, any size on the others.
     */
    sizes: Type.Optional(Type.Array(Type.String({ pattern: '^[1-9][0-9]*x[1-9][0-9]*$' }), { minItems: 1 })),
    /** Durations in seconds the server accepts; the nearest is asked for. Default: 4, 8, 12 on `openai`, any on the others. */
    seconds: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1 })),
    /** SGLang and vLLM-Omni: the frame rate to ask the model for (Wan 2.2 A14B: 16); sent as `fps` with `num_frames`. */
    fps: Type.Optional(Type.Integer({ minimum: 1, maximum: 120 })),
    /** With `fps`: the model takes frame counts of the form step × n + 1 (Wan: 4). */
    frame_step: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
    /** Further fields for the create request (`num_inference_steps`, `guidance_scale`, …), where the server takes them. */
    extra_body: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** How often to poll `GET /v1/videos/{id}`; default 2000. */
    poll_interval_ms: Type.Optional(Type.Integer({ minimum: 10 })),
  },
  { additionalProperties: false },
);

export type OpenAiOptions = Static<typeof OpenAiOptionsSchema>;
