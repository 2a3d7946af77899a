/**
 * The creation-time check of a request's inputs against the engine its model ID is routed to (by the engines
 * file this process loaded): a request that any engine of the route cannot honour is refused with
 * `input_not_supported`.
 */
import { routeEngines } from '../domain/engine-route.js';
import type { GenerationParams } from '../domain/generation-request.js';
import type { ModelDefinition } from '../domain/models.js';
import { capabilitiesOf } from './capabilities-by-type.js';
import { type UnsupportedInput, unsupportedInput } from './engine-capabilities.js';
import type { EnginesConfig } from './engines-file.js';

export type InputCheck = (model: ModelDefinition, params: GenerationParams) => UnsupportedInput | undefined;

export function routedInputCheck(config: EnginesConfig): InputCheck {
  return (model, params) => {
    const route = config.models.get(model.id);
    if (route === undefined) return undefined;
    // Any engine of the route may end up rendering the task, so every one of them must be able to honour it.
    for (const name of routeEngines(route)) {
      const options = config.engines.get(name);
      const unsupported = options && unsupportedInput(model, params, capabilitiesOf(options), name);
      if (unsupported) return unsupported;
    }
    return undefined;
  };
}
