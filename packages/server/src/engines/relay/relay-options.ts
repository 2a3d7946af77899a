/** Options of a `relay` engine: another server of this same API (another videogen, or a provider's). */
import { type Static, Type } from '@sinclair/typebox';

export const RelayOptionsSchema = Type.Object(
  {
    type: Type.Literal('relay'),
    /** The other server's base URL: `https://video.example.com`. */
    base_url: Type.String({ pattern: '^https?://[^\\s]+$' }),
    /** Its API key; write `${ENV_VAR}` to take it from the environment. */
    api_key: Type.String({ minLength: 1 }),
    /** The model ID to ask it for; default: the task's own model ID. */
    model: Type.Optional(Type.String({ minLength: 1 })),
    /** How often to poll `GET /v1/tasks/{id}`; default 2000. */
    poll_interval_ms: Type.Optional(Type.Integer({ minimum: 10 })),
  },
  { additionalProperties: false },
);

export type RelayOptions = Static<typeof RelayOptionsSchema>;
