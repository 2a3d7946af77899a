/** Options of a `runway` engine: Runway's API (`https://api.dev.runwayml.com`), one of its video models. */
import { type Static, Type } from '@sinclair/typebox';
import { HostedOptionFields } from '../hosted/hosted-options.js';
import { RUNWAY_MODEL_IDS } from './runway-models.js';

export const RUNWAY_BASE_URL = 'https://api.dev.runwayml.com';
/** The only version Runway's OpenAPI accepts in `X-Runway-Version` (a `const` in its spec). */
export const RUNWAY_API_VERSION = '2024-11-06';

export const RunwayOptionsSchema = Type.Object(
  {
    type: Type.Literal('runway'),
    ...HostedOptionFields,
    /**
     * Runway's model. Each has its own endpoints, ratios, durations and inputs (runway-models.ts), so only the
     * models whose rules the engine knows are accepted.
     */
    model: Type.Union(RUNWAY_MODEL_IDS.map((id) => Type.Literal(id))),
    /** Sent as `X-Runway-Version`; default `2024-11-06`. */
    api_version: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
  },
  { additionalProperties: false },
);

export type RunwayOptions = Static<typeof RunwayOptionsSchema>;
