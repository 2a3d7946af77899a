/** The `ark` engine type: Seedance on BytePlus ModelArk or Volcengine Ark, its inputs its model's. */
import type { EngineType } from '../engine-type.js';
import { ArkCallbackVerifier } from './ark-callback.js';
import { arkCapabilities } from './ark-capabilities.js';
import { ArkEngine } from './ark-engine.js';
import { ArkOptionsSchema } from './ark-options.js';

export const arkEngineType: EngineType<typeof ArkOptionsSchema> = {
  type: 'ark',
  optionsSchema: ArkOptionsSchema,
  hasUpstreamJobs: true,
  create: (name, options, context) => new ArkEngine(name, options, context),
  capabilities: (options) => arkCapabilities(options),
  callbacks: { verifier: () => new ArkCallbackVerifier() },
};
