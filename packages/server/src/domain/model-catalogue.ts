/**
 * The catalogue the server has: the six built-in models, then those the operator's engines file defines, each
 * found by its ID or an alias. Validation, `/v1/models`, routing, usage and prices all read this one object.
 */
import { ApiError } from './errors.js';
import { type AssetField, BUILT_IN_MODELS, type ModelDefinition, type ModelId } from './models.js';

export class ModelCatalogue {
  /** The six built-in models, without aliases. */
  static readonly BUILT_IN = new ModelCatalogue(BUILT_IN_MODELS);

  readonly #models: readonly ModelDefinition[];
  readonly #byName: ReadonlyMap<string, ModelDefinition>;

  /** `models` in catalogue order; IDs and aliases must be distinct (the engines file checks it first). */
  constructor(models: readonly ModelDefinition[]) {
    this.#models = models;
    const byName = new Map<string, ModelDefinition>();
    for (const model of models) {
      for (const name of [model.id, ...model.aliases]) {
        if (byName.has(name)) throw new Error(`the model name ${name} is defined twice`);
        byName.set(name, model);
      }
    }
    this.#byName = byName;
  }

  /** Every model, in catalogue order. */
  get models(): readonly ModelDefinition[] {
    return this.#models;
  }

  ids(): ModelId[] {
    return this.#models.map((model) => model.id);
  }

  /** Every name a request may use: the IDs, then the aliases. */
  names(): string[] {
    return [...this.ids(), ...this.#models.flatMap((model) => model.aliases)];
  }

  /** The model an ID or an alias names. */
  find(name: string): ModelDefinition | undefined {
    return this.#byName.get(name);
  }

  /** The model of a stored task or route: by its ID, which the catalogue must have. */
  get(id: ModelId): ModelDefinition {
    const model = this.#byName.get(id);
    if (!model || model.id !== id) throw new Error(`unknown model ${id}`);
    return model;
  }

  /** The model a request names, or `model_not_found` listing the IDs. */
  resolve(name: unknown): ModelDefinition {
    const model = typeof name === 'string' ? this.find(name) : undefined;
    if (!model) {
      throw new ApiError(
        'model_not_found',
        `The model ${JSON.stringify(name)} does not exist; use one of ${this.ids().join(', ')}.`,
        { param: 'model' },
      );
    }
    return model;
  }

  /** Model IDs whose mode accepts `field`, for error messages. */
  accepting(field: AssetField): ModelId[] {
    return this.#models.filter((model) => model.assets[field] !== undefined).map((model) => model.id);
  }
}
