/** Options every hosted provider's engine has, spread into each provider's own options schema. */
import { Type } from '@sinclair/typebox';

export const HostedOptionFields = {
  /** Default: the provider's public address. */
  base_url: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /** The provider's key; write `${ENV_VAR}` to take it from the environment. */
  api_key: Type.String({ minLength: 1 }),
  /** The provider's model. */
  model: Type.String({ minLength: 1 }),
  /** How often to poll the provider's task; default 2000 ms (5000 for some providers, as each says). */
  poll_interval_ms: Type.Optional(Type.Integer({ minimum: 10 })),
  /**
   * `refuse` (default): a request with an input the provider's model cannot take is refused at creation
   * (`input_not_supported`). `drop`: the input is left out and the rest of the request is rendered.
   */
  unsupported_inputs: Type.Optional(Type.Union([Type.Literal('refuse'), Type.Literal('drop')])),
};

/** `path` under a base URL that may itself have a path (a proxy's prefix). */
export function urlUnder(base: string, path: string): URL {
  return new URL(path.replace(/^\//, ''), base.endsWith('/') ? base : `${base}/`);
}
