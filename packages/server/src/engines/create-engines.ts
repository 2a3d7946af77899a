/** Builds the engines an engines file names, and the router that picks one per model ID. */

import { requestBudget } from '../outbound/request-budget.js';
import type { Engine } from '../ports/engine.js';
import { callbackEngines, providerCallbackUrl } from './callbacks/provider-callbacks.js';
import type { EngineContext } from './engine-context.js';
import { EngineRouter } from './engine-router.js';
import { engineTypeOf } from './engine-types.js';
import { DEFAULT_REQUESTS_PER_SECOND, type EnginesConfig, EnginesFileError } from './engines-file.js';

/**
 * Every engine the config uses, by name (one instance however many model IDs share it). An engine whose
 * options are wrong in a way the schema cannot see (an unknown placeholder, an unreadable workflow) throws
 * here, naming itself. Each engine polls its jobs within a request budget of its own (`max_requests_per_second`).
 * With `publicUrl`, an engine with `callbacks: true` gives its provider the address to call back at.
 */
export function createEngines(
  config: EnginesConfig,
  context: Omit<EngineContext, 'baseDir' | 'callbackUrl'> & { readonly publicUrl?: string } = {},
): Map<string, Engine> {
  const engines = new Map<string, Engine>();
  const { publicUrl, ...shared } = context;
  const calledBack = new Set(callbackEngines(config).map(({ name }) => name));
  for (const [name, options] of config.engines) {
    const perSecond = config.limits.get(name)?.maxRequestsPerSecond ?? DEFAULT_REQUESTS_PER_SECOND;
    const pollDispatcher = shared.dispatcher?.compose(requestBudget(perSecond));
    const callbackUrl =
      publicUrl !== undefined && calledBack.has(name) ? providerCallbackUrl(publicUrl, name) : undefined;
    try {
      engines.set(
        name,
        engineTypeOf(options).create(name, options, {
          ...shared,
          ...(pollDispatcher && { pollDispatcher }),
          ...(callbackUrl && { callbackUrl }),
          baseDir: config.baseDir,
        }),
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new EnginesFileError(config.file ?? 'engines', `/engines/${name}: ${reason}`);
    }
  }
  return engines;
}

export function routeEngines(config: EnginesConfig, engines: ReadonlyMap<string, Engine>): EngineRouter {
  return new EngineRouter(config.models, engines, { limits: config.limits, policy: config.routing });
}
