/** What a `gemini` engine can hand Veo (engine-capabilities.ts): decided by the configured model. */
import { ANY_INPUT, type EngineCapabilities } from '../../domain/engine-capabilities.js';
import { veoModel } from './gemini-models.js';
import type { GeminiOptions } from './gemini-options.js';

export function geminiCapabilities(options: GeminiOptions): EngineCapabilities {
  if (options.unsupported_inputs === 'drop') return ANY_INPUT;
  const veo = veoModel(options.model);
  return {
    firstFrame: true,
    lastFrame: veo.lastFrame,
    referenceImages: veo.referenceImages,
    referenceVideos: 0,
    referenceAudios: 0,
    // Veo 3.x always makes sound (the Gemini API refuses `generateAudio`): false has it removed in conforming.
    audio: veo.generation !== '2.0',
  };
}
