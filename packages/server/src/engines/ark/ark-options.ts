/**
 * Options of an `ark` engine: Seedance on BytePlus ModelArk or Volcengine Ark (the same API at two addresses),
 * `POST /contents/generations/tasks`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { CallbackOptionFields } from '../callbacks/callback-options.js';
import { HostedOptionFields } from '../hosted/hosted-options.js';

/** BytePlus ModelArk, ap-southeast-1; Volcengine Ark is `https://ark.cn-beijing.volces.com/api/v3`. */
export const ARK_DEFAULT_BASE_URL = 'https://ark.ap-southeast.bytepluses.com/api/v3';

/** Videos take a minute or more and Ark reports no progress, so polling more often gains nothing. */
export const ARK_DEFAULT_POLL_INTERVAL_MS = 5000;

/** The Seedance models whose limits the engine knows (ark-models.ts). */
export const ARK_MODEL_FAMILIES = [
  'seedance-2.0',
  'seedance-2.0-fast',
  'seedance-2.0-mini',
  'seedance-2.5',
  'seedance-1.5-pro',
  'seedance-1.0-pro',
  'seedance-1.0-pro-fast',
] as const;
export type ArkModelFamily = (typeof ARK_MODEL_FAMILIES)[number];

export const ArkOptionsSchema = Type.Object(
  {
    type: Type.Literal('ark'),
    ...HostedOptionFields,
    ...CallbackOptionFields,
    /**
     * Which Seedance model `model` is, for its resolutions, durations and inputs. Read from the model id
     * (`dreamina-seedance-2-0-fast-260128`, `doubao-seedance-2-0-260128`); needed for an endpoint id (`ep-…`).
     */
    model_family: Type.Optional(Type.Union(ARK_MODEL_FAMILIES.map((family) => Type.Literal(family)))),
    /** Ark's "AI generated" mark in the corner of the video; default false. */
    watermark: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export type ArkOptions = Static<typeof ArkOptionsSchema>;
