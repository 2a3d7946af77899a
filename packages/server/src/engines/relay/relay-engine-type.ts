/** The `relay` engine type: another server of this API, which checks the inputs itself. */
import type { EngineType } from '../engine-type.js';
import { relayCapabilities } from './relay-capabilities.js';
import { RelayEngine } from './relay-engine.js';
import { RelayOptionsSchema } from './relay-options.js';

export const relayEngineType: EngineType<typeof RelayOptionsSchema> = {
  type: 'relay',
  optionsSchema: RelayOptionsSchema,
  hasUpstreamJobs: true,
  create: (name, options, context) => new RelayEngine(name, options, context),
  capabilities: () => relayCapabilities(),
};
