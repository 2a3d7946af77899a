/**
 * Each engine type's capabilities (engine-capabilities.ts), from its options: hosted providers from what their
 * APIs take, `openai` from its server's dialect, `exec`, `comfyui`, `fal` and `replicate` from the placeholders
 * their command, workflow or template uses. `local` draws every input and `relay` hands them all to another
 * server of this API (which checks them itself), so nothing is refused for them.
 */

import { ANY_INPUT, type EngineCapabilities } from '../domain/engine-capabilities.js';
import { arkCapabilities } from './ark/ark-models.js';
import { comfyUiCapabilities } from './comfyui/comfyui-capabilities.js';
import type { EngineOptions } from './engines-file.js';
import { execCapabilities } from './exec/exec-capabilities.js';
import { geminiCapabilities } from './gemini/gemini-capabilities.js';
import { InputTemplate } from './hosted/input-template.js';
import { openAiCapabilities } from './openai/openai-capabilities.js';
import { replicateCapabilities } from './replicate/replicate-capabilities.js';
import { runwayCapabilities } from './runway/runway-capabilities.js';

/** `baseDir`: the engines file's directory, which a `comfyui` engine's `workflow` is relative to. */
export function capabilitiesOf(options: EngineOptions, baseDir = '.'): EngineCapabilities {
  switch (options.type) {
    case 'ark':
      return arkCapabilities(options);
    case 'comfyui':
      return comfyUiCapabilities(options, baseDir);
    case 'exec':
      return execCapabilities(options);
    case 'fal':
      return options.unsupported_inputs === 'drop'
        ? ANY_INPUT
        : new InputTemplate(options.input).capabilities();
    case 'gemini':
      return geminiCapabilities(options);
    case 'openai':
      return openAiCapabilities(options);
    case 'replicate':
      return replicateCapabilities(options);
    case 'runway':
      return runwayCapabilities(options);
    default:
      return ANY_INPUT;
  }
}
