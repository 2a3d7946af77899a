/**
 * Each engine type's capabilities (engine-capabilities.ts), from its options. Hosted providers declare what
 * their APIs take; the engines that run the operator's own models (local, exec, openai, comfyui, relay) take
 * whatever the operator's command, workflow or server does with the inputs, so nothing is refused for them.
 */

import { ANY_INPUT, type EngineCapabilities } from '../domain/engine-capabilities.js';
import { arkCapabilities } from './ark/ark-models.js';
import type { EngineOptions } from './engines-file.js';
import { geminiCapabilities } from './gemini/gemini-capabilities.js';
import { InputTemplate } from './hosted/input-template.js';
import { replicateCapabilities } from './replicate/replicate-capabilities.js';
import { runwayCapabilities } from './runway/runway-capabilities.js';

export function capabilitiesOf(options: EngineOptions): EngineCapabilities {
  switch (options.type) {
    case 'ark':
      return arkCapabilities(options);
    case 'fal':
      return options.unsupported_inputs === 'drop'
        ? ANY_INPUT
        : new InputTemplate(options.input).capabilities();
    case 'gemini':
      return geminiCapabilities(options);
    case 'replicate':
      return replicateCapabilities(options);
    case 'runway':
      return runwayCapabilities(options);
    default:
      return ANY_INPUT;
  }
}
