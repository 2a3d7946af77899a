/** The `gemini` engine type: Veo on the Gemini API, its inputs its model's. */
import type { EngineType } from '../engine-type.js';
import { geminiCapabilities } from './gemini-capabilities.js';
import { GeminiEngine } from './gemini-engine.js';
import { GeminiOptionsSchema } from './gemini-options.js';

export const geminiEngineType: EngineType<typeof GeminiOptionsSchema> = {
  type: 'gemini',
  optionsSchema: GeminiOptionsSchema,
  hasUpstreamJobs: true,
  create: (name, options, context) => new GeminiEngine(name, options, context),
  capabilities: (options) => geminiCapabilities(options),
};
