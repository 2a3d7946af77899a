/** The `openai` engine type: a server of OpenAI's `/v1/videos` API, in its dialect (OpenAI, SGLang, vLLM-Omni). */
import type { EngineType } from '../engine-type.js';
import { openAiCapabilities } from './openai-capabilities.js';
import { OpenAiEngine } from './openai-engine.js';
import { OpenAiOptionsSchema } from './openai-options.js';

export const openAiEngineType: EngineType<typeof OpenAiOptionsSchema> = {
  type: 'openai',
  optionsSchema: OpenAiOptionsSchema,
  hasUpstreamJobs: true,
  create: (name, options, context) => new OpenAiEngine(name, options, context),
  capabilities: (options) => openAiCapabilities(options),
};
