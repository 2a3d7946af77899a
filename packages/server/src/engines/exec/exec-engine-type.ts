/** The `exec` engine type: a command-line generator run on this machine, once per task. */
import type { EngineType } from '../engine-type.js';
import { execCapabilities } from './exec-capabilities.js';
import { ExecEngine } from './exec-engine.js';
import { ExecOptionsSchema } from './exec-options.js';

export const execEngineType: EngineType<typeof ExecOptionsSchema> = {
  type: 'exec',
  optionsSchema: ExecOptionsSchema,
  hasUpstreamJobs: false,
  ownTimeout: 'its command has timeout_seconds',
  create: (name, options, context) => new ExecEngine(name, options, context),
  capabilities: (options) => execCapabilities(options),
};
