/**
 * What a `runway` engine can take (engine-capabilities.ts), from its model's rules: a first frame always,
 * a last frame and references only where the model takes them. With `unsupported_inputs: drop` nothing is
 * refused at creation and the engine leaves out what the model cannot take.
 */
import { ANY_INPUT, type EngineCapabilities } from '../../domain/engine-capabilities.js';
import { RUNWAY_MODELS, type RunwayModel } from './runway-models.js';
import type { RunwayOptions } from './runway-options.js';

export function modelCapabilities(model: RunwayModel): EngineCapabilities {
  return {
    firstFrame: true,
    lastFrame: model.takesLastFrame,
    referenceImages: model.references.images,
    referenceVideos: model.references.videos,
    referenceAudios: model.references.audios,
    audio: model.takesAudio,
  };
}

export function runwayCapabilities(options: RunwayOptions): EngineCapabilities {
  return options.unsupported_inputs === 'drop' ? ANY_INPUT : modelCapabilities(RUNWAY_MODELS[options.model]);
}
