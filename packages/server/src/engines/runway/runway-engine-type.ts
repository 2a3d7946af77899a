/** The `runway` engine type: Runway's API, its inputs its model's. */
import type { EngineType } from '../engine-type.js';
import { runwayCapabilities } from './runway-capabilities.js';
import { RunwayEngine } from './runway-engine.js';
import { RunwayOptionsSchema } from './runway-options.js';

export const runwayEngineType: EngineType<typeof RunwayOptionsSchema> = {
  type: 'runway',
  optionsSchema: RunwayOptionsSchema,
  hasUpstreamJobs: true,
  create: (name, options, context) => new RunwayEngine(name, options, context),
  capabilities: (options) => runwayCapabilities(options),
};
