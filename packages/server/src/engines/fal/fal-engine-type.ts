/**
 * The `fal` engine type: a model on fal.ai's queue, its inputs the placeholders its `input` template uses (any,
 * with `unsupported_inputs: drop`).
 */
import { ANY_INPUT } from '../../domain/engine-capabilities.js';
import type { EngineType } from '../engine-type.js';
import { InputTemplate } from '../hosted/input-template.js';
import { FalWebhookVerifier } from './fal-callback.js';
import { FalEngine } from './fal-engine.js';
import { FalOptionsSchema } from './fal-options.js';

export const falEngineType: EngineType<typeof FalOptionsSchema> = {
  type: 'fal',
  optionsSchema: FalOptionsSchema,
  hasUpstreamJobs: true,
  create: (name, options, context) => new FalEngine(name, options, context),
  capabilities: (options) =>
    options.unsupported_inputs === 'drop' ? ANY_INPUT : new InputTemplate(options.input).capabilities(),
  callbacks: {
    verifier: (name, options, dispatcher) =>
      new FalWebhookVerifier({
        label: `fal engine "${name}"`,
        ...(options.webhook_jwks_url && { jwksUrl: options.webhook_jwks_url }),
        ...(dispatcher && { dispatcher }),
      }),
  },
};
