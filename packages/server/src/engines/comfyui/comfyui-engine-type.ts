/** The `comfyui` engine type: a ComfyUI workflow, its inputs the placeholders it uses. */
import type { EngineType } from '../engine-type.js';
import { comfyUiCapabilities } from './comfyui-capabilities.js';
import { ComfyUiEngine } from './comfyui-engine.js';
import { ComfyUiOptionsSchema } from './comfyui-options.js';

export const comfyUiEngineType: EngineType<typeof ComfyUiOptionsSchema> = {
  type: 'comfyui',
  optionsSchema: ComfyUiOptionsSchema,
  hasUpstreamJobs: true,
  create: (name, options, context) => new ComfyUiEngine(name, options, context),
  capabilities: (options, baseDir) => comfyUiCapabilities(options, baseDir),
};
