/** The `local` engine type: the built-in procedural renderer, which draws every input itself. */
import type { EngineType } from '../engine-type.js';
import { localCapabilities } from './local-capabilities.js';
import { LocalEngine } from './local-engine.js';
import { LocalOptionsSchema } from './local-options.js';

export const localEngineType: EngineType<typeof LocalOptionsSchema> = {
  type: 'local',
  optionsSchema: LocalOptionsSchema,
  hasUpstreamJobs: false,
  create: (_name, _options, context) => new LocalEngine({ ffmpegPath: context.ffmpegPath }),
  capabilities: () => localCapabilities(),
};
