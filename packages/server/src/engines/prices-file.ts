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
import { MODEL_IDS, type ModelId } from '../domain/models.js';
import { type Prices, toMicros } from '../domain/prices.js';

/** Per second of video; kept in micro-units, so rounded to six decimals. */
const Amount = Type.Number({ minimum: 0, maximum: 1_000_000 });

export const PricesSchema = Type.Object(
  {
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'An ISO 4217 code, e.g. USD.' }),
    models: Type.Partial(
      Type.Record(
        Type.Union(MODEL_IDS.map((id) => Type.Literal(id))),
        Type.Partial(
          Type.Record(Type.Union(QUALITIES.map((quality) => Type.Literal(quality))), Amount, {
            additionalProperties: false,
          }),
        ),
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export function toPrices(parsed: Static<typeof PricesSchema>): Prices {
  const perSecond = new Map<ModelId, Partial<Record<Quality, number>>>();
  for (const id of MODEL_IDS) {
    const byQuality = (parsed.models as Partial<Record<ModelId, Partial<Record<Quality, number>>>>)[id];
    if (!byQuality) continue;
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
