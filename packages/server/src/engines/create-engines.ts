/** Builds the engines an engines file names, and the router that picks one per model ID. */

import { requestBudget } from '../outbound/request-budget.js';
import type { Engine } from '../ports/engine.js';
import { ArkEngine } from './ark/ark-engine.js';
import { callbackEngines, providerCallbackUrl } from './callbacks/provider-callbacks.js';
import { ComfyUiEngine } from './comfyui/comfyui-engine.js';
import type { EngineContext } from './engine-context.js';
import { EngineRouter } from './engine-router.js';
import {
  DEFAULT_REQUESTS_PER_SECOND,
  type EngineOptions,
  type EnginesConfig,
  EnginesFileError,
} from './engines-file.js';
import { ExecEngine } from './exec/exec-engine.js';
import { FalEngine } from './fal/fal-engine.js';
import { GeminiEngine } from './gemini/gemini-engine.js';
import { LocalEngine } from './local/local-engine.js';
import { OpenAiEngine } from './openai/openai-engine.js';
import { RelayEngine } from './relay/relay-engine.js';
import { ReplicateEngine } from './replicate/replicate-engine.js';
import { RunwayEngine } from './runway/runway-engine.js';

export function createEngine(name: string, options: EngineOptions, context: EngineContext): Engine {
  switch (options.type) {
    case 'ark':
      return new ArkEngine(name, options, context);
    case 'local':
      return new LocalEngine({ ffmpegPath: context.ffmpegPath });
    case 'exec':
      return new ExecEngine(name, options, context);
    case 'openai':
      return new OpenAiEngine(name, options, context);
    case 'comfyui':
      return new ComfyUiEngine(name, options, context);
    case 'relay':
      return new RelayEngine(name, options, context);
    case 'runway':
      return new RunwayEngine(name, options, context);
    case 'fal':
      return new FalEngine(name, options, context);
    case 'gemini':
      return new GeminiEngine(name, options, context);
    case 'replicate':
      return new ReplicateEngine(name, options, context);
  }
}

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
  const calledBack = new Set(callbackEngines(config).map(([name]) => name));
  for (const [name, options] of config.engines) {
    const perSecond = config.limits.get(name)?.maxRequestsPerSecond ?? DEFAULT_REQUESTS_PER_SECOND;
    const pollDispatcher = shared.dispatcher?.compose(requestBudget(perSecond));
    const callbackUrl =
      publicUrl !== undefined && calledBack.has(name) ? providerCallbackUrl(publicUrl, name) : undefined;
    try {
      engines.set(
        name,
        createEngine(name, options, {
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
