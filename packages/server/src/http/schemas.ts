/**
 * The HTTP-level schemas: what the routes answer, in TypeBox. They are attached to the routes' `response`
 * schemas, so they both serialize the answers (fast-json-stringify keeps only the properties named here: a
 * field missing from a schema disappears from the API) and document them in `/openapi.json`.
 *
 * The shared ones carry an `$id`; `openapi.ts` adds them with `app.addSchema` and the document lists them
 * under `components.schemas`. Routes point at them with `Type.Ref`.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { DELIVERY_STATUSES, type PublicDelivery } from '../domain/delivery.js';
import {
  type ApiErrorCode,
  ERROR_CATALOGUE,
  type ErrorCode,
  isApiErrorCode,
  TASK_ERROR_CODES,
} from '../domain/errors.js';
import { ASPECT_RATIOS, QUALITIES } from '../domain/frame-size.js';
import { LONGEST_DURATION, MODEL_ID_PATTERN } from '../domain/models.js';
import { type PublicTask, TASK_STATUSES } from '../domain/task.js';
import { USAGE_GROUPINGS } from '../domain/usage.js';
import type { UsageBucket, UsageReport } from '../domain/usage-report.js';
import type { PublicModel } from '../models/model-list.js';
import type { DeletedTask, PublicTaskList } from '../tasks/task-service.js';
import type { ErrorBody, OpenAiErrorBody } from './error-handler.js';
import { ERROR_STATUSES } from './error-statuses.js';
import { OPENAI_ERROR_TYPES } from './openai-error-type.js';
import { OpenAiVideoSchema } from './openai-video-object.js';
import { changesState } from './session-cookie.js';

/** A string with a fixed set of values: `{ type: 'string', enum }`, which fast-json-stringify writes as a plain string. */
function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A model ID: the catalogue is the server's (`GET /v1/models`), so no list of them is fixed here. */
const ModelIdSchema = (description: string) => Type.String({ pattern: MODEL_ID_PATTERN, description });

const UnixSeconds = (description: string) => Type.Integer({ minimum: 0, description });

/** Every code an error body can carry: the routes' (`API_ERRORS`) and the connection's (`CONNECTION_ERRORS`). */
export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];
const ERROR_TYPES = [...new Set(ERROR_CODES.map((code) => ERROR_STATUSES[code].type))];

export const ErrorBodySchema = Type.Object(
  {
    error: Type.Object({
      code: StringEnum(ERROR_CODES, { description: 'What went wrong; the catalogue is in docs/api.md.' }),
      message: Type.String({ description: 'For people; names the field and the rule where there is one.' }),
      type: StringEnum(ERROR_TYPES, { description: 'The class of the error, fixed by its code.' }),
      param: Type.Optional(
        Type.String({ description: 'The request field at fault, e.g. `duration` or `image_urls[1]`.' }),
      ),
      request_id: Type.String({
        description: 'The `x-request-id` of this answer; it finds the request in the logs.',
      }),
    }),
  },
  { $id: 'Error', description: 'The body of every non-2xx answer.' },
);

/**
 * The body of an error on the OpenAI Videos API's routes (`/v1/videos`, routes/openai-videos.ts): OpenAI's
 * envelope (`Error` of openai/openai-openapi), with this service's codes. Errors answered before a route is known
 * (`malformed_request`, `request_timeout`, `headers_too_large`) keep the `Error` shape.
 */
export const OpenAiErrorSchema = Type.Object(
  {
    error: Type.Object({
      message: Type.String({ description: 'For people; names the field and the rule where there is one.' }),
      type: StringEnum(OPENAI_ERROR_TYPES, {
        description: 'OpenAI’s class of the error, from the HTTP status.',
      }),
      param: Type.Union([Type.String(), Type.Null()], {
        description:
          'The request field at fault in OpenAI’s terms (`seconds`, `size`, `input_reference`), or null.',
      }),
      code: StringEnum(ERROR_CODES, { description: 'What went wrong: the code of docs/api.md#errors.' }),
    }),
  },
  { $id: 'OpenAIError', description: 'The body of a non-2xx answer of the OpenAI Videos API routes.' },
);

/**
 * Either error body: on the OpenAI Videos API routes, a status that both a route and the server before any route
 * answer (`400`: `invalid_parameter` in OpenAI's envelope, `malformed_request` in the service's).
 */
export const AnyErrorSchema = Type.Union([Type.Ref(OpenAiErrorSchema), Type.Ref(ErrorBodySchema)], {
  $id: 'AnyError',
  description: 'OpenAI’s envelope (`OpenAIError`) for errors a route answers, else the service’s (`Error`).',
});

/** Which body an error answer has: the service's own, or OpenAI's envelope (on `/v1/videos`). */
export type ErrorEnvelope = 'videogen' | 'openai';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The envelope of this route's error answers; the service's own when absent. */
    errorEnvelope?: ErrorEnvelope;
  }
}

export const TaskErrorSchema = Type.Object(
  {
    code: StringEnum(TASK_ERROR_CODES),
    message: Type.String({
      description: 'Names the field and index where there is one: `image_urls[1]: HTTP 404`.',
    }),
  },
  { $id: 'TaskError', description: 'Why a task failed.' },
);

export const TaskSchema = Type.Object(
  {
    id: Type.String({ description: '`task-unified-` and a ULID.' }),
    object: StringEnum(['video.generation.task']),
    model: ModelIdSchema('The model ID (an alias in the request is its model ID here).'),
    status: StringEnum(TASK_STATUSES, {
      description: '`pending` → `processing` → `completed` or `failed`; the last two are final.',
    }),
    progress: Type.Integer({
      minimum: 0,
      maximum: 100,
      description: 'Whole percent, never decreasing; 100 only when completed.',
    }),
    created_at: UnixSeconds('Unix seconds.'),
    updated_at: UnixSeconds('Unix seconds of the last change.'),
    completed_at: Type.Optional(UnixSeconds('Unix seconds; once the task is completed or failed.')),
    duration: Type.Integer({ minimum: 1, maximum: LONGEST_DURATION, description: 'Seconds.' }),
    quality: StringEnum(QUALITIES),
    aspect_ratio: StringEnum(ASPECT_RATIOS),
    seed: Type.Integer({
      minimum: 0,
      description: 'The seed used: the requested one, or the random one drawn.',
    }),
    return_last_frame: Type.Boolean({
      description: "The request's `return_last_frame`: whether `results[1]` is the video's last frame.",
    }),
    generate_audio: Type.Boolean({
      description:
        "Whether the model makes a soundtrack of its own: the requested value, or when left out whether the model's engines make sound. The video has AAC audio when this is true or the request had an audio reference.",
    }),
    results: Type.Optional(
      Type.Array(Type.String({ format: 'uri' }), {
        description:
          'Only when completed: `results[0]` is a signed, expiring link to the video; with `return_last_frame`, ' +
          "`results[1]` one to its last frame, a PNG of the video's size.",
      }),
    ),
    error: Type.Optional(Type.Ref(TaskErrorSchema, { description: 'Only when failed.' })),
    task_info: Type.Object(
      {
        can_cancel: Type.Boolean({
          description:
            'Whether `POST /v1/tasks/{task_id}/cancel` would succeed now: while pending or processing.',
        }),
        estimated_time: Type.Optional(
          Type.Integer({
            minimum: 1,
            description:
              "Whole seconds until the task is likely done: the median run (claim to completion) of the model's " +
              'last 20 completed tasks of the last 24 hours, times the share of progress still to make; the wait ' +
              'in the queue is not counted. Only while pending or processing, and only when the model has such runs.',
          }),
        ),
        video_duration: Type.Integer({
          minimum: 1,
          description: 'The requested length of the video, in seconds.',
        }),
      },
      { description: 'What the task allows and how long it is likely to take.' },
    ),
    usage: Type.Object(
      {
        video_seconds: Type.Integer({
          minimum: 0,
          description:
            'Seconds of video the task uses, as `GET /v1/usage` counts them: its duration (reserved until it ' +
            'completes, then used), 0 once failed.',
        }),
        cost: Type.Optional(
          Type.Number({
            minimum: 0,
            description:
              "In `currency`: the model's price per second at the task's quality when it was created, times its " +
              'duration; 0 once failed. Only when prices are configured and cover the model and quality.',
          }),
        ),
        currency: Type.Optional(
          Type.String({ description: "The prices' currency (ISO 4217), with `cost`." }),
        ),
      },
      { description: 'What the task uses.' },
    ),
  },
  { $id: 'Task', description: 'A video generation task.' },
);

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'The `webhook-id`: the same on every retry of this message.' }),
    object: StringEnum(['webhook.delivery']),
    task_id: Type.String(),
    event: StringEnum(
      TASK_STATUSES.map((status) => `task.${status}` as const),
      { description: 'The status change that caused the message.' },
    ),
    url: Type.String({ format: 'uri', description: "The task's `callback_url`." }),
    status: StringEnum(DELIVERY_STATUSES, {
      description: '`pending` (will be attempted at `next_attempt_at`), `succeeded` or `failed` (given up).',
    }),
    created_at: UnixSeconds('Unix seconds.'),
    next_attempt_at: Type.Optional(UnixSeconds('Unix seconds of the next attempt, while pending.')),
    attempts: Type.Array(
      Type.Object({
        attempted_at: UnixSeconds('Unix seconds.'),
        duration_ms: Type.Integer({ minimum: 0 }),
        http_status: Type.Optional(Type.Integer({ description: "The receiver's answer." })),
        error: Type.Optional(Type.String({ description: 'Why no answer arrived.' })),
      }),
      { description: 'Oldest first.' },
    ),
  },
  { $id: 'Delivery', description: 'A callback message and its attempts.' },
);

export const TaskListSchema = Type.Object(
  {
    object: StringEnum(['list']),
    data: Type.Array(Type.Ref(TaskSchema), { description: 'Newest first.' }),
    has_more: Type.Boolean({ description: 'Whether more tasks follow this page.' }),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'The `after` of the next page; null on the last page.',
    }),
  },
  { description: 'A page of tasks.' },
);

export const DeletedTaskSchema = Type.Object(
  {
    id: Type.String(),
    object: StringEnum(['video.generation.task']),
    deleted: Type.Literal(true),
  },
  { description: 'The task and its files are gone.' },
);

/** `{ object: 'list', data: [...] }`. */
export function ListOf(item: TSchema & { $id?: string }, description: string) {
  return Type.Object(
    {
      object: StringEnum(['list']),
      data: Type.Array(item.$id ? Type.Ref(item.$id) : item),
    },
    { description },
  );
}

export const FileSchema = Type.Object(
  {
    id: Type.String({ examples: ['file-5f0c6c1e0b9a4b2d8e1f3a7c9d2b4e6f'] }),
    object: StringEnum(['file']),
    kind: StringEnum(['image', 'video', 'audio'], {
      description: 'What the content is, recognised from the bytes.',
    }),
    content_type: Type.String({
      description:
        'The type the content has; else the one it was uploaded with, when that is of its kind; else `application/octet-stream`.',
    }),
    filename: Type.String({
      description: 'The name the client sent, without control characters, at most 255 characters.',
    }),
    bytes: Type.Integer({ minimum: 1 }),
    created_at: Type.Integer({ description: 'Unix seconds.' }),
    url: Type.String({
      description:
        'Put this in `image_urls`, `video_urls` or `audio_urls` (the field of its kind) of a request.',
    }),
  },
  { $id: 'File', description: 'An uploaded file.' },
);

const UsageFiguresSchema = Type.Object({
  tasks: Type.Integer({ minimum: 0 }),
  video_seconds: Type.Integer({ minimum: 0, description: 'Seconds of video (the tasks’ `duration`).' }),
  cost: Type.Optional(
    Type.Number({
      minimum: 0,
      description:
        'In `currency`, at the prices when each task was created; only when prices are configured. Tasks of a model and quality without a price count nothing.',
    }),
  ),
});

const ReservedFiguresSchema = Type.Object(UsageFiguresSchema.properties, {
  description:
    'Tasks created in the range that have not finished: reserved against the monthly limits, not yet usage.',
});

export const UsageBucketSchema = Type.Object(
  {
    object: StringEnum(['usage.bucket']),
    key: Type.Union([Type.String(), Type.Null()], {
      description:
        'By `group_by`: the UTC day (`YYYY-MM-DD`), the model ID, or the API key id (null for tasks created from the dashboard).',
    }),
    ...UsageFiguresSchema.properties,
    reserved: ReservedFiguresSchema,
  },
  { $id: 'UsageBucket', description: 'The completed tasks of one day, model or API key.' },
);

export const UsageReportSchema = Type.Object(
  {
    object: StringEnum(['list']),
    group_by: StringEnum(USAGE_GROUPINGS),
    start: UnixSeconds('Unix seconds, inclusive.'),
    end: UnixSeconds('Unix seconds, exclusive.'),
    currency: Type.Optional(
      Type.String({ description: 'Of every `cost`; only when prices are configured.' }),
    ),
    data: Type.Array(Type.Ref(UsageBucketSchema), {
      description: 'Days, model IDs or key ids in order (tasks created from the dashboard last).',
    }),
    totals: Type.Object({ ...UsageFiguresSchema.properties, reserved: ReservedFiguresSchema }),
  },
  {
    description:
      'Usage of the API key’s account and environment: completed tasks only (failed and cancelled tasks cost nothing).',
  },
);

const AssetLimitsSchema = Type.Object({
  min: Type.Integer({ minimum: 0 }),
  max: Type.Integer({ minimum: 1 }),
});

export const ModelSchema = Type.Object(
  {
    id: ModelIdSchema('The six built-in IDs first, then those the operator defined.'),
    object: StringEnum(['model']),
    created: Type.Integer({ description: 'Unix seconds.' }),
    owned_by: StringEnum(['videogen']),
    mode: StringEnum(['text', 'image', 'reference']),
    fast: Type.Boolean(),
    aliases: Type.Array(Type.String(), {
      description: 'Other names a request may give the model; a task names it by its ID.',
    }),
    inputs: Type.Object(
      {
        image_urls: Type.Optional(AssetLimitsSchema),
        video_urls: Type.Optional(AssetLimitsSchema),
        audio_urls: Type.Optional(AssetLimitsSchema),
      },
      {
        description:
          'The asset fields the model takes and how many of each: the catalogue narrowed by what every engine the model is routed to can take. A field absent here is refused.',
      },
    ),
    durations: Type.Array(Type.Integer(), { description: 'Seconds.' }),
    qualities: Type.Array(StringEnum(QUALITIES)),
    aspect_ratios: Type.Array(StringEnum(ASPECT_RATIOS)),
    generate_audio: Type.Boolean({
      description:
        'Whether every engine the model is routed to makes a soundtrack of its own. When false, `generate_audio: true` is refused (`input_not_supported`) and a request that leaves it out gets false.',
    }),
    web_search: Type.Boolean({
      description:
        'Whether a request may set `web_search: true`: a text model every engine of whose route can search the web (Seedance 2.x on Ark). When false, it is refused (`input_not_supported`).',
    }),
    asset_ids: Type.Boolean({
      description:
        "Whether the asset fields may hold `asset://<id>` ids of the provider's asset library: every engine of the route takes them (Ark). When false, they are refused (`input_not_supported`).",
    }),
    available: Type.Boolean({
      description:
        'Whether a task created now would be rendered: some live worker serves the model and some engine of its route is not cut off by its circuit breaker. Tasks of an unavailable model are still accepted; they wait.',
    }),
    unavailable_reason: Type.Optional(Type.String()),
  },
  { $id: 'Model', description: 'A model ID as this gateway serves it.' },
);

export const ModelListSchema = ListOf(ModelSchema, 'Every model ID, in catalogue order.');

export const ModelIdParams = Type.Object({ model_id: Type.String({ description: 'A model ID.' }) });

/** The schemas with an `$id`, added to the app once and listed under `components.schemas`. */
export const SHARED_SCHEMAS: readonly (TSchema & { $id: string })[] = [
  ErrorBodySchema,
  OpenAiErrorSchema,
  AnyErrorSchema,
  OpenAiVideoSchema,
  TaskErrorSchema,
  TaskSchema,
  DeliverySchema,
  FileSchema,
  UsageBucketSchema,
  ModelSchema,
] as (TSchema & { $id: string })[];

/**
 * The security requirement of the `/v1` routes: `Authorization: Bearer <API_KEY>`, or the dashboard's session
 * cookie (with `X-CSRF-Token` on state-changing requests).
 */
export const API_KEY_SECURITY: { [scheme: string]: string[] }[] = [{ apiKey: [] }, { dashboardSession: [] }];

/** The dashboard's own routes: the session cookie only. */
export const DASHBOARD_SECURITY: { [scheme: string]: string[] }[] = [{ dashboardSession: [] }];

export const TaskIdParams = Type.Object({ task_id: Type.String({ description: 'The id of the task.' }) });

/**
 * The response headers, as OpenAPI header objects under `components.headers`. openapi.ts puts them on the
 * responses: `x-request-id` on every one, `Retry-After` on 429 and 503 errors, `RateLimit-*` on the answers
 * of authenticated routes past authentication.
 */
export const RESPONSE_HEADERS = {
  'x-request-id': {
    description: "The request's id (`req_…`), on every answer; error bodies quote it as `request_id`.",
    required: true,
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Limit': {
    description: "Requests this API key may make per window (when the server's rate limit is on).",
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current window (when the rate limit is on).',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window ends (when the rate limit is on).',
    schema: { type: 'integer', minimum: 0 },
  },
} as const;

/** The codes behind an error response made by `errorResponses`, for the document to add to (openapi.ts). */
const ERROR_RESPONSE_CODES = Symbol('error codes');
type ErrorResponse = TSchema & { [ERROR_RESPONSE_CODES]?: readonly ErrorCode[] };

/**
 * The error answers of a route, from the catalogue: one response per HTTP status, with the error body and a
 * description listing that status's codes. The document adds the codes every route of its kind answers
 * (`implicitErrorCodes`); a route lists its own.
 */
export function errorResponses(...codes: ErrorCode[]): Record<number, TSchema> {
  return errorResponsesIn('videogen', codes);
}

/**
 * The body of an error answer of `status` in `envelope`: OpenAI's where the route answers it, the service's own
 * for the codes answered before any route (both, where a status has codes of each).
 */
function errorBodyRef(envelope: ErrorEnvelope, codes: readonly ErrorCode[], description: string): TSchema {
  if (envelope === 'videogen') return Type.Ref(ErrorBodySchema, { description });
  const routed = codes.some(isApiErrorCode);
  const unrouted = codes.some((code) => !isApiErrorCode(code));
  if (!unrouted) return Type.Ref(OpenAiErrorSchema, { description });
  if (!routed) return Type.Ref(ErrorBodySchema, { description });
  return Type.Ref(AnyErrorSchema, { description });
}

/** `errorResponses` with the bodies of `envelope`. */
export function errorResponsesIn(
  envelope: ErrorEnvelope,
  codes: readonly ErrorCode[],
): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_STATUSES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<number, TSchema> = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const response: ErrorResponse = errorBodyRef(
      envelope,
      statusCodes,
      `Error: ${statusCodes.map((code) => `\`${code}\``).join(', ')}.`,
    );
    response[ERROR_RESPONSE_CODES] = statusCodes;
    out[status] = response;
  }
  return out;
}

/** `responses` (of `errorResponses`) with `headers` on the error answer of `status`. */
export function withErrorHeaders(
  responses: Record<number, TSchema>,
  status: number,
  headers: Record<string, TSchema>,
): Record<number, TSchema> {
  const response = responses[status];
  if (!response) throw new Error(`no error response ${status} to put headers on`);
  return { ...responses, [status]: { ...response, headers } };
}

/** The codes of a response `errorResponses` made; undefined for any other response. */
export function errorCodesOf(response: unknown): readonly ErrorCode[] | undefined {
  return typeof response === 'object' && response !== null
    ? (response as ErrorResponse)[ERROR_RESPONSE_CODES]
    : undefined;
}

/** Methods whose requests Fastify reads no body of. */
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'TRACE']);

/**
 * The errors a route answers whatever its handler does, from what every request goes through before it (app.ts):
 * - any request: `malformed_request` (not valid HTTP/1.1, no Host header, a path that is not percent-encoded
 *   UTF-8), `request_timeout`, `headers_too_large`, and `internal_error` when the route fails;
 * - any request to a server shutting down, but on the routes it keeps serving then (health checks, metrics):
 *   `overloaded`;
 * - any request of a method that may carry a body, whether or not the route takes one (body-parsers.ts):
 *   `invalid_json`, `payload_too_large`, `unsupported_media_type`;
 * - an API key (authentication.ts, rate-limit.ts): `missing_api_key`, `invalid_api_key`, `rate_limited`;
 * - the dashboard's session cookie: `not_signed_in`, and `invalid_csrf_token` on a request that changes state.
 */
export function implicitErrorCodes(route: {
  readonly method: string;
  readonly security?: readonly Readonly<Record<string, readonly string[]>>[];
  readonly servedWhileDraining: boolean;
}): ErrorCode[] {
  const method = route.method.toUpperCase();
  const schemes = new Set((route.security ?? []).flatMap((requirement) => Object.keys(requirement)));
  return [
    'malformed_request',
    'request_timeout',
    'headers_too_large',
    'internal_error',
    ...(route.servedWhileDraining ? [] : (['overloaded'] as const)),
    ...(BODYLESS_METHODS.has(method) ? [] : BODY_ERRORS),
    ...(schemes.has('apiKey') ? (['missing_api_key', 'invalid_api_key', 'rate_limited'] as const) : []),
    ...(schemes.has('dashboardSession') ? (['not_signed_in'] as const) : []),
    ...(schemes.has('dashboardSession') && changesState(method) ? (['invalid_csrf_token'] as const) : []),
  ];
}

/** The codes every route that needs an API key can answer with: authentication, the per-key rate limit, a crash. */
export const AUTHENTICATED_ERRORS: readonly ApiErrorCode[] = [
  'missing_api_key',
  'invalid_api_key',
  'rate_limited',
  'internal_error',
];
/**
 * The codes a route that writes to the store or the storage can answer with: the database stayed busy with
 * other writers, or no space is left (both `503` with `Retry-After`).
 */
export const WRITE_ERRORS: readonly ApiErrorCode[] = ['overloaded', 'storage_full'];
/** The codes of a body checked against its route's schema (strict-validation.ts) with fields it requires. */
export const FIELD_ERRORS: readonly ApiErrorCode[] = [
  'missing_parameter',
  'invalid_parameter',
  'unknown_parameter',
];
/** The same for a body that requires no field: a change of limits. */
export const LIMIT_ERRORS: readonly ApiErrorCode[] = ['invalid_parameter', 'unknown_parameter'];
/** The codes a route that reads a JSON body can answer with, besides its own. */
export const BODY_ERRORS: readonly ApiErrorCode[] = [
  'invalid_json',
  'payload_too_large',
  'unsupported_media_type',
];

/** What a task's creation may answer, on our route and OpenAI's. */
export const CREATION_ERRORS: readonly ApiErrorCode[] = [
  ...AUTHENTICATED_ERRORS,
  ...BODY_ERRORS,
  'missing_parameter',
  'invalid_parameter',
  'unknown_parameter',
  'model_not_found',
  'input_not_supported',
  'budget_exceeded',
  'idempotency_conflict',
  ...WRITE_ERRORS,
];

// The response schemas must name every property the code returns: these fail to compile when the domain's
// public shapes and the schemas part.
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never]
  ? true
  : never;
const taskKeys: SameKeys<PublicTask, Static<typeof TaskSchema>> = true;
const taskInfoKeys: SameKeys<PublicTask['task_info'], Static<typeof TaskSchema>['task_info']> = true;
const taskUsageKeys: SameKeys<PublicTask['usage'], Static<typeof TaskSchema>['usage']> = true;
const deliveryKeys: SameKeys<PublicDelivery, Static<typeof DeliverySchema>> = true;
const attemptKeys: SameKeys<
  PublicDelivery['attempts'][number],
  Static<typeof DeliverySchema>['attempts'][number]
> = true;
const errorKeys: SameKeys<ErrorBody['error'], Static<typeof ErrorBodySchema>['error']> = true;
const openAiErrorKeys: SameKeys<OpenAiErrorBody['error'], Static<typeof OpenAiErrorSchema>['error']> = true;
const taskErrorKeys: SameKeys<NonNullable<PublicTask['error']>, Static<typeof TaskErrorSchema>> = true;
const taskListKeys: SameKeys<PublicTaskList, Static<typeof TaskListSchema>> = true;
const deletedTaskKeys: SameKeys<DeletedTask, Static<typeof DeletedTaskSchema>> = true;
const usageReportKeys: SameKeys<UsageReport, Static<typeof UsageReportSchema>> = true;
const usageBucketKeys: SameKeys<UsageBucket, Static<typeof UsageBucketSchema>> = true;
const modelKeys: SameKeys<PublicModel, Static<typeof ModelSchema>> = true;
const modelInputKeys: SameKeys<PublicModel['inputs'], Static<typeof ModelSchema>['inputs']> = true;
void [
  taskKeys,
  taskInfoKeys,
  taskUsageKeys,
  deliveryKeys,
  attemptKeys,
  errorKeys,
  openAiErrorKeys,
  taskErrorKeys,
  taskListKeys,
  deletedTaskKeys,
  usageReportKeys,
  usageBucketKeys,
  modelKeys,
  modelInputKeys,
];
