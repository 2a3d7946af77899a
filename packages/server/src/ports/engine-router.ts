/**
 * The `EngineRouter` port: which engines render which model ID, for the runner. Each model's route
 * (domain/engine-route.ts) and the engine instances by name; workers claim only the models they have a route
 * for, the claim picks the engine (store), the runner falls back along the route. Implementation:
 * `engines/engine-router.ts`, built from the engines file.
 */
import type { CircuitPolicy, EngineRoute } from '../domain/engine-route.js';
import type { ModelId } from '../domain/models.js';
import type { Engine } from './engine.js';

export interface RoutingPolicy {
  /**
   * How long an engine has to accept a job (ports/engine.ts `onAccepted`) when its route has somewhere left to
   * go; then the task moves on. Without a next step an engine has the task's whole time limit.
   */
  readonly acceptTimeoutMs: number;
  readonly circuit: CircuitPolicy;
  /** Move on after `upstream_refused` too (off by default: another model would most likely refuse it too). */
  readonly fallbackOnRefusal: boolean;
}

export interface EngineRouter {
  readonly policy: RoutingPolicy;
  /** The engine a model's route starts with (the only one of a single-engine route). */
  engineFor(model: ModelId): Engine | undefined;
  routeFor(model: ModelId): EngineRoute | undefined;
  routes(): ReadonlyMap<ModelId, EngineRoute>;
  engine(name: string): Engine | undefined;
  /** `max_concurrency` of the engines that have one. */
  maxConcurrency(): ReadonlyMap<string, number>;
  /** How long `engine` has to accept a job when its route has somewhere left to go. */
  acceptTimeoutMs(engine: string): number;
  /** How long a job upstream on `engine` may take, from its submission, before it is cancelled and the task fails. */
  jobTimeoutMs(engine: string): number;
  /** The model IDs with a route: the ones this process's workers claim. */
  models(): ModelId[];
}
