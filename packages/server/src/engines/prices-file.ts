/**
 * The engines file's `prices`: what a second of video costs, per model ID and quality, in one currency. Kept with
 * the model routing because that is the gateway's one config file (as LiteLLM keeps prices with its model list).
 *
 *   prices:
 *     currency: USD
 *     models:
 *       videogen-2.0-text-to-video: { 480p: 0.05, 720p: 0.10, 1080p: 0.20 }
 *
 * A model or quality left out has no known price: its tasks have no cost, and a cost budget does not hold them.
 */
import { type Static, Type } from '@sinclair/typebox';
import { QUALITIES, type Quality } from '../domain/frame-size.js';
import type { ModelCatalogue } from '../domain/model-catalogue.js';
import { MODEL_ID_PATTERN, type ModelId } from '../domain/models.js';
import { type Prices, toMicros } from '../domain/prices.js';

/** Per second of video; kept in micro-units, so rounded to six decimals. */
const Amount = Type.Number({ minimum: 0, maximum: 1_000_000 });

export const PricesSchema = Type.Object(
  {
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'An ISO 4217 code, e.g. USD.' }),
    models: Type.Record(
      Type.String({ pattern: MODEL_ID_PATTERN }),
      Type.Partial(
        Type.Record(Type.Union(QUALITIES.map((quality) => Type.Literal(quality))), Amount, {
          additionalProperties: false,
        }),
      ),
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** `problem` makes the file's error for a path under `/prices`; a price names a model by its ID, not an alias. */
export function toPrices(
  parsed: Static<typeof PricesSchema>,
  catalogue: ModelCatalogue,
  problem: (path: string, message: string) => Error,
): Prices {
  const perSecond = new Map<ModelId, Partial<Record<Quality, number>>>();
  for (const [id, byQuality] of Object.entries(
    parsed.models as Record<ModelId, Partial<Record<Quality, number>>>,
  )) {
    const model = catalogue.find(id);
    if (model?.id !== id) {
      throw problem(
        `/models/${id}`,
        model
          ? `an alias of ${model.id}: price the model by its ID`
          : `not a model ID (model IDs: ${catalogue.ids().join(', ')})`,
      );
    }
    perSecond.set(
      id,
      Object.fromEntries(
        QUALITIES.flatMap((quality) => {
          const amount = byQuality[quality];
          return amount === undefined ? [] : [[quality, toMicros(amount)]];
        }),
      ),
    );
  }
  return { currency: parsed.currency, perSecond };
}
