/** Which engine renders which model ID. Workers claim only the models they have an engine for. */
import { MODEL_IDS, type ModelId } from '../domain/models.js';
import type { Engine } from '../ports/engine.js';

export class EngineRouter {
  readonly #routes: ReadonlyMap<ModelId, Engine>;

  constructor(routes: ReadonlyMap<ModelId, Engine>) {
    this.#routes = routes;
  }

  /** Every model ID to the same engine. */
  static all(engine: Engine): EngineRouter {
    return new EngineRouter(new Map(MODEL_IDS.map((id) => [id, engine])));
  }

  engineFor(model: ModelId): Engine | undefined {
    return this.#routes.get(model);
  }

  models(): ModelId[] {
    return [...this.#routes.keys()];
  }
}
