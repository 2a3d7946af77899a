/** The `replicate` engine type: a model on Replicate, its inputs the placeholders its `input` template uses. */
import type { EngineType } from '../engine-type.js';
import { ReplicateWebhookVerifier } from './replicate-callback.js';
import { replicateCapabilities } from './replicate-capabilities.js';
import { ReplicateEngine } from './replicate-engine.js';
import { REPLICATE_BASE_URL, ReplicateOptionsSchema } from './replicate-options.js';

export const replicateEngineType: EngineType<typeof ReplicateOptionsSchema> = {
  type: 'replicate',
  optionsSchema: ReplicateOptionsSchema,
  hasUpstreamJobs: true,
  create: (name, options, context) => new ReplicateEngine(name, options, context),
  capabilities: (options) => replicateCapabilities(options),
  callbacks: {
    verifier: (name, options, dispatcher) =>
      new ReplicateWebhookVerifier({
        label: `replicate engine "${name}"`,
        baseUrl: options.base_url ?? REPLICATE_BASE_URL,
        apiKey: options.api_key,
        ...(options.webhook_secret && { secret: options.webhook_secret }),
        ...(dispatcher && { dispatcher }),
      }),
    httpsOnly: 'Replicate takes only HTTPS webhook URLs',
  },
};
