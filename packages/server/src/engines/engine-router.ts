/** The `EngineRouter` port (ports/engine-router.ts) over the routes and engines of the engines file. */
import { type EngineRoute, routeEngines } from '../domain/engine-route.js';
import { MODEL_IDS, type ModelId } from '../domain/models.js';
import type { Engine } from '../ports/engine.js';
import type { EngineRouter as EngineRouterPort, RoutingPolicy } from '../ports/engine-router.js';
import { DEFAULT_JOB_TIMEOUT_MS, DEFAULT_ROUTING, type EngineLimits } from './engines-file.js';

export class EngineRouter implements EngineRouterPort {
  readonly #routes: ReadonlyMap<ModelId, EngineRoute>;
  readonly #engines: ReadonlyMap<string, Engine>;
  readonly #limits: ReadonlyMap<string, EngineLimits>;
  readonly policy: RoutingPolicy;

  constructor(
    routes: ReadonlyMap<ModelId, EngineRoute>,
    engines: ReadonlyMap<string, Engine>,
    options: { limits?: ReadonlyMap<string, EngineLimits>; policy?: RoutingPolicy } = {},
  ) {
    for (const [model, route] of routes) {
      for (const name of routeEngines(route)) {
        if (!engines.has(name)) throw new Error(`The route of ${model} names the unknown engine "${name}".`);
      }
    }
    this.#routes = routes;
    this.#engines = engines;
    this.#limits = options.limits ?? new Map();
    this.policy = options.policy ?? DEFAULT_ROUTING;
  }

  /** Every model ID to the same engine, under its own name. */
  static all(engine: Engine): EngineRouter {
    return new EngineRouter(
      new Map(MODEL_IDS.map((id) => [id, [[{ engine: engine.name, weight: 1 }]]])),
      new Map([[engine.name, engine]]),
    );
  }

  /** The engine a model's route starts with (the only one of a single-engine route). */
  engineFor(model: ModelId): Engine | undefined {
    const first = this.#routes.get(model)?.[0]?.[0];
    return first ? this.#engines.get(first.engine) : undefined;
  }

  routeFor(model: ModelId): EngineRoute | undefined {
    return this.#routes.get(model);
  }

  routes(): ReadonlyMap<ModelId, EngineRoute> {
    return this.#routes;
  }

  engine(name: string): Engine | undefined {
    return this.#engines.get(name);
  }

  /** `max_concurrency` of the engines that have one. */
  maxConcurrency(): ReadonlyMap<string, number> {
    const caps = new Map<string, number>();
    for (const [name, limits] of this.#limits) {
      if (limits.maxConcurrency !== undefined) caps.set(name, limits.maxConcurrency);
    }
    return caps;
  }

  acceptTimeoutMs(engine: string): number {
    return this.#limits.get(engine)?.acceptTimeoutMs ?? this.policy.acceptTimeoutMs;
  }

  jobTimeoutMs(engine: string): number {
    return this.#limits.get(engine)?.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  }

  models(): ModelId[] {
    return [...this.#routes.keys()];
  }
}
