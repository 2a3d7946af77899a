/**
 * Options of a `fal` engine: a video model on fal.ai's queue API (`https://queue.fal.run`), such as ByteDance's
 * Seedance (`fal-ai/bytedance/seedance/v1/pro/image-to-video`). Every model on fal names its inputs its own
 * way, so the model's input is given as a template (hosted/input-template.ts) with the lists of durations,
 * aspect ratios, resolutions and sizes the model takes (hosted/template-values.ts).
 */
import { type Static, Type } from '@sinclair/typebox';
import { CallbackOptionFields } from '../callbacks/callback-options.js';
import { HostedOptionFields } from '../hosted/hosted-options.js';

export const FAL_QUEUE_URL = 'https://queue.fal.run';
/** Where a fal video model's output keeps its video (`{"video": {"url": …}}`). */
export const DEFAULT_RESULT_PATH = 'video.url';

export const FalOptionsSchema = Type.Object(
  {
    type: Type.Literal('fal'),
    /** `base_url` default `https://queue.fal.run`; `api_key` is sent as `Authorization: Key …`. */
    ...HostedOptionFields,
    ...CallbackOptionFields,
    /** Where fal's webhook keys are, for `callbacks`; default `https://rest.alpha.fal.ai/.well-known/jwks.json`. */
    webhook_jwks_url: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
    /**
     * The model's endpoint id, its full path: `fal-ai/bytedance/seedance/v1/pro/image-to-video`
     * (`owner/app`, then the endpoint's path; `workflows/` and `comfy/` ids keep their prefix).
     */
    model: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9_.-]+)+$' }),
    /** The model's input as JSON with `{{placeholders}}`, sent as the request body. */
    input: Type.Record(Type.String(), Type.Unknown()),
    /** Durations in seconds the model takes; `{{duration}}` carries the nearest. */
    durations: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1 })),
    /** Aspect ratios the model takes (`16:9`); `{{aspect_ratio}}` carries the nearest in shape. */
    aspect_ratios: Type.Optional(
      Type.Array(Type.String({ pattern: '^[1-9][0-9]*:[1-9][0-9]*$' }), { minItems: 1 }),
    ),
    /** Resolutions the model takes (`480p`, `720p`, `1080p`); `{{resolution}}` carries the nearest. */
    resolutions: Type.Optional(Type.Array(Type.String({ pattern: '^[1-9][0-9]*p$' }), { minItems: 1 })),
    /** Frame sizes the model takes (`1280x720`), for `{{size}}`, `{{width}}`, `{{height}}`. */
    sizes: Type.Optional(Type.Array(Type.String({ pattern: '^[1-9][0-9]*x[1-9][0-9]*$' }), { minItems: 1 })),
    /** Where the video's URL is in the model's output, as a dotted path; default `video.url`. */
    result_path: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)*$' })),
  },
  { additionalProperties: false },
);

export type FalOptions = Static<typeof FalOptionsSchema>;
