/** The `fal` engine type: a model on fal.ai's queue, its inputs the placeholders its `input` template uses. */
import type { EngineType } from '../engine-type.js';
import { FalWebhookVerifier } from './fal-callback.js';
import { falCapabilities } from './fal-capabilities.js';
import { FalEngine } from './fal-engine.js';
import { FalOptionsSchema } from './fal-options.js';

export const falEngineType: EngineType<typeof FalOptionsSchema> = {
  type: 'fal',
  optionsSchema: FalOptionsSchema,
  hasUpstreamJobs: true,
  create: (name, options, context) => new FalEngine(name, options, context),
  capabilities: (options) => falCapabilities(options),
  callbacks: {
    verifier: (name, options, dispatcher) =>
      new FalWebhookVerifier({
        label: `fal engine "${name}"`,
        ...(options.webhook_jwks_url && { jwksUrl: options.webhook_jwks_url }),
        ...(dispatcher && { dispatcher }),
      }),
  },
};
