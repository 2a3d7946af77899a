/**
 * The creation-time check of a request's inputs against the engine its model ID is routed to (by the engines
 * file this process loaded): a request that engine cannot honour is refused with `input_not_supported`.
 */
import type { GenerationParams } from '../domain/generation-request.js';
import type { ModelDefinition } from '../domain/models.js';
import { capabilitiesOf } from './capabilities-by-type.js';
import { type UnsupportedInput, unsupportedInput } from './engine-capabilities.js';
import type { EnginesConfig } from './engines-file.js';

export type InputCheck = (model: ModelDefinition, params: GenerationParams) => UnsupportedInput | undefined;

export function routedInputCheck(config: EnginesConfig): InputCheck {
  return (model, params) => {
    const name = config.models.get(model.id);
    const options = name === undefined ? undefined : config.engines.get(name);
    if (name === undefined || options === undefined) return undefined;
    return unsupportedInput(model, params, capabilitiesOf(options), name);
  };
}
