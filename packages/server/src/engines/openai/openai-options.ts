/** Options of an `openai` engine: a server with OpenAI's video API (`/v1/videos`), such as SGLang Diffusion. */
import { type Static, Type } from '@sinclair/typebox';

export const OpenAiOptionsSchema = Type.Object(
  {
    type: Type.Literal('openai'),
    /** The server's base URL, without `/v1`: `http://gpu-1:30000`. */
    base_url: Type.String({ pattern: '^https?://[^\\s]+$' }),
    /** Sent as `Authorization: Bearer …`; write `${ENV_VAR}` to take it from the environment. */
    api_key: Type.Optional(Type.String()),
    /** The `model` the server expects: `Wan-AI/Wan2.2-T2V-A14B-Diffusers`, `sora-2`. */
    model: Type.String({ minLength: 1 }),
    /** Sizes the server accepts (`1280x720`); the request's frame is mapped to the nearest. Default: any. */
    sizes: Type.Optional(Type.Array(Type.String({ pattern: '^[0-9]+x[0-9]+$' }), { minItems: 1 })),
    /** Durations in seconds the server accepts; the request's is mapped to the nearest. Default: any. */
    seconds: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1 })),
    /** Extra fields for the create request's body (`num_inference_steps`, `guidance_scale`, …). */
    extra_body: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** How often to poll `GET /v1/videos/{id}`; default 2000. */
    poll_interval_ms: Type.Optional(Type.Integer({ minimum: 10 })),
  },
  { additionalProperties: false },
);

export type OpenAiOptions = Static<typeof OpenAiOptionsSchema>;
