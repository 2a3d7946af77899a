/**
 * Options of a `replicate` engine: a video model hosted on Replicate (https://replicate.com), with the model's
 * input written as a template (hosted/input-template.ts) since every model names its inputs its own way, and
 * what `model` names: an official model (`owner/name`) or one version of any model (`owner/name:version`).
 */
import { type Static, Type } from '@sinclair/typebox';
import { CallbackOptionFields } from '../callbacks/callback-options.js';
import { HostedOptionFields } from '../hosted/hosted-options.js';

export const REPLICATE_BASE_URL = 'https://api.replicate.com';

const NAME = '[A-Za-z0-9][A-Za-z0-9._-]*';
/** Replicate's version ids are 64 hex digits (the SHA-256 of the model's image). */
const VERSION = '[0-9a-f]{64}';

export const ReplicateOptionsSchema = Type.Object(
  {
    type: Type.Literal('replicate'),
    ...HostedOptionFields,
    ...CallbackOptionFields,
    /**
     * The account's webhook signing secret (`whsec_…`), for `callbacks`; fetched with the key from
     * `GET /v1/webhooks/default/secret` when absent.
     */
    webhook_secret: Type.Optional(Type.String({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' })),
    /** `owner/name` (an official model, run at its latest version) or `owner/name:version`. */
    model: Type.String({ pattern: `^${NAME}/${NAME}(:${VERSION})?$` }),
    /** The model's input, with `{{placeholders}}` (hosted/input-template.ts). */
    input: Type.Record(Type.String(), Type.Unknown()),
    /** Durations (seconds) the model takes, for `{{duration}}`; default: the request's own. */
    durations: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1 })),
    /** Aspect ratios the model takes (`16:9`), for `{{aspect_ratio}}`; default: the request's own. */
    aspect_ratios: Type.Optional(
      Type.Array(Type.String({ pattern: '^[1-9][0-9]*:[1-9][0-9]*$' }), { minItems: 1 }),
    ),
    /** Resolutions the model takes (`480p`, `720p`, `1080p`), for `{{resolution}}`; default: the request's quality. */
    resolutions: Type.Optional(Type.Array(Type.String({ pattern: '^[1-9][0-9]*p$' }), { minItems: 1 })),
    /** Frame sizes the model takes (`1280x720`), for `{{size}}`, `{{width}}`, `{{height}}`; default: the request's frame. */
    sizes: Type.Optional(Type.Array(Type.String({ pattern: '^[1-9][0-9]*x[1-9][0-9]*$' }), { minItems: 1 })),
  },
  { additionalProperties: false },
);

export type ReplicateOptions = Static<typeof ReplicateOptionsSchema>;

export interface ReplicateModel {
  readonly owner: string;
  readonly name: string;
  /** Set for `owner/name:version`, which is run with `POST /v1/predictions`. */
  readonly version?: string;
}

/** What a (schema-checked) `model` option names. */
export function replicateModel(model: string): ReplicateModel {
  const [path = '', version] = model.split(':');
  const [owner = '', name = ''] = path.split('/');
  return version === undefined ? { owner, name } : { owner, name, version };
}
