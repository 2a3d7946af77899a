/**
 * The creation-time check of a request's inputs against the engine its model ID is routed to (by the engines
 * file this process loaded): a request that any engine of the route cannot honour is refused with
 * `input_not_supported`.
 */

import {
  ANY_INPUT,
  type EngineCapabilities,
  type InputCheck,
  unsupportedInput,
} from '../domain/engine-capabilities.js';
import { type EngineRoute, routeEngines } from '../domain/engine-route.js';
import { capabilitiesOf } from './engine-types.js';
import type { EnginesConfig } from './engines-file.js';

/** Each engine's capabilities, worked out once per engines file (a `comfyui` engine's reads its workflow). */
const known = new WeakMap<EnginesConfig, Map<string, EngineCapabilities>>();

function engineCapabilities(config: EnginesConfig, name: string): EngineCapabilities | undefined {
  let engines = known.get(config);
  if (!engines) {
    engines = new Map();
    known.set(config, engines);
  }
  let capabilities = engines.get(name);
  if (!capabilities) {
    const options = config.engines.get(name);
    if (!options) return undefined;
    capabilities = capabilitiesOf(options, config.baseDir);
    engines.set(name, capabilities);
  }
  return capabilities;
}

export function routedInputCheck(config: EnginesConfig): InputCheck {
  return {
    unsupported(model, params) {
      const route = config.models.get(model.id);
      if (route === undefined) return undefined;
      // Any engine of the route may end up rendering the task, so every one of them must be able to honour it.
      for (const name of routeEngines(route)) {
        const capabilities = engineCapabilities(config, name);
        const unsupported = capabilities && unsupportedInput(model, params, capabilities, name);
        if (unsupported) return unsupported;
      }
      return undefined;
    },
    makesSound(model) {
      const route = config.models.get(model.id);
      return route === undefined || routeCapabilities(config, route).audio;
    },
  };
}

/** What every engine of a route can take: the least of each capability (a route with no engines takes anything). */
export function routeCapabilities(config: EnginesConfig, route: EngineRoute): EngineCapabilities {
  return routeEngines(route).reduce<EngineCapabilities>(
    (all, name) => {
      const one = engineCapabilities(config, name);
      if (!one) return all;
      return {
        firstFrame: all.firstFrame && one.firstFrame,
        lastFrame: all.lastFrame && one.lastFrame,
        referenceImages: Math.min(all.referenceImages, one.referenceImages),
        referenceVideos: Math.min(all.referenceVideos, one.referenceVideos),
        referenceAudios: Math.min(all.referenceAudios, one.referenceAudios),
        audio: all.audio && one.audio,
        webSearch: (all.webSearch ?? false) && (one.webSearch ?? false),
        assetIds: (all.assetIds ?? false) && (one.assetIds ?? false),
      };
    },
    { ...ANY_INPUT, webSearch: true, assetIds: true },
  );
}
