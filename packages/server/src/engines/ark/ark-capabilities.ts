/**
 * What an `ark` engine can take (engine-capabilities.ts), from its model's profile (ark-models.ts): `asset://`
 * ids of Ark's asset library always, web search where the model takes it. With `unsupported_inputs: drop` any
 * inputs (the engine leaves out what the model cannot take); for a model the engine cannot identify, anything
 * too (such an engine refuses to start, so nothing is rendered with it).
 */
import { ANY_INPUT, type EngineCapabilities } from '../../domain/engine-capabilities.js';
import { arkModelProfile } from './ark-models.js';
import type { ArkOptions } from './ark-options.js';

export function arkCapabilities(options: ArkOptions): EngineCapabilities {
  const profile = arkModelProfile(options);
  const inputs =
    options.unsupported_inputs === 'drop'
      ? ANY_INPUT
      : profile
        ? { ...profile.inputs, audio: profile.audio }
        : ANY_INPUT;
  return { ...inputs, webSearch: profile?.webSearch ?? true, assetIds: true };
}
