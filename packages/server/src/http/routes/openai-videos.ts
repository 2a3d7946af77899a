/**
 * OpenAI's Videos API, beside this service's own, on the same tasks, keys and limits: `POST /v1/videos` (JSON, or
 * `multipart/form-data` with `input_reference` as a file, as OpenAI's SDKs send every creation), `GET /v1/videos`,
 * `GET|DELETE /v1/videos/{video_id}`, `GET /v1/videos/{video_id}/content` (`variant` `video`, `thumbnail`,
 * `spritesheet`) and `POST /v1/videos/{video_id}/remix`. A translation onto the task use cases: the request into
 * a generation request (openai-video-request.ts), the task into OpenAI's Video object (openai-video-object.ts),
 * errors into OpenAI's envelope (`config.errorEnvelope`, error-handler.ts). A video's id is its task's id.
 *
 * Written from, and only from:
 * - openai/openai-node, tag v6.49.0 (the last 6.x, the one this service's test installs): src/resources/videos.ts
 *   (the resource, `Video`, `VideoCreateParams`, `VideoListParams`, `VideoDownloadContentParams`,
 *   `VideoRemixParams`), src/internal/uploads.ts (`create` always sends a form, `remix` JSON unless a file is
 *   given; an object field is sent as `input_reference[image_url]`), src/core/pagination.ts
 *   (`ConversationCursorPage`: the next page is `after=<last_id>` while `has_more`);
 * - openai/openai-openapi at f85dbe2 (2026-08-21), openapi.yaml: `/videos`, `/videos/{video_id}`,
 *   `/videos/{video_id}/content`, `/videos/{video_id}/remix`, and the schemas `VideoResource`,
 *   `VideoListResource`, `DeletedVideoResource`, `CreateVideoJsonBody`, `CreateVideoMultipartBody`,
 *   `ImageRefParam-2`, `VideoSize`, `VideoSeconds`, `VideoContentVariant`, `CreateVideoRemixBody`, `Error`;
 * - OpenAI's guide "Video generation with Sora" (developers.openai.com/api/docs/guides/video-generation), for the
 *   shutdown of the Videos API on 2026-09-24 and the thumbnail (WebP) and sprite sheet (JPEG) downloads.
 */
import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { resultKey } from '../../domain/storage-keys.js';
import { MAX_PAGE_SIZE, type TaskListQuery } from '../../domain/task-list-query.js';
import { fileContentPath } from '../../domain/uploaded-file.js';
import type { Storage } from '../../ports/storage.js';
import type { TaskService } from '../../tasks/task-service.js';
import { type StillVariant, type ThumbnailFormat, videoStill } from '../../tasks/video-stills.js';
import { principalOf } from '../authentication.js';
import { emptyBody } from '../error-handler.js';
import { parseIdempotencyKey } from '../idempotency-key-header.js';
import {
  DeletedOpenAiVideoSchema,
  type OpenAiVideo,
  OpenAiVideoListSchema,
  OpenAiVideoSchema,
  toOpenAiVideo,
} from '../openai-video-object.js';
import {
  generationBody,
  type OpenAiCreation,
  openAiParam,
  type ReferenceFile,
} from '../openai-video-request.js';
import { requestOrigin } from '../request-origin.js';
import {
  API_KEY_SECURITY,
  AUTHENTICATED_ERRORS,
  BODY_ERRORS,
  CREATION_ERRORS,
  errorResponsesIn,
  WRITE_ERRORS,
} from '../schemas.js';
import { sendStoredVideo } from '../stored-video.js';
import { VideoResponse } from './results.js';

export interface OpenAiVideoDependencies {
  readonly tasks: TaskService;
  /** Where the result videos are, for `content`. */
  readonly storage: Pick<Storage, 'stat' | 'read'>;
  readonly authenticate: preHandlerAsyncHookHandler;
  /** The creation's body limit, as `POST /v1/videos/generations` has it; it bounds an uploaded reference too. */
  readonly maxBodyBytes: number;
  /** The base of this server's URLs in the answer to a request sent to `requestOrigin` (uploaded files'). */
  readonly publicUrl: (requestOrigin?: string) => string;
  /** How long a completed task's video is kept (`VIDEOGEN_RETENTION_DAYS`), for `expires_at`; 0: for ever. */
  readonly retentionSeconds: number;
}

const OPENAI = { errorEnvelope: 'openai' as const };
const TAGS = ['OpenAI Videos'];
const VideoIdParams = Type.Object({
  video_id: Type.String({ description: 'The id of the video: its task’s id (`task-unified-…`).' }),
});
const VARIANTS = ['video', 'thumbnail', 'spritesheet'] as const;
const errors = (...codes: Parameters<typeof errorResponsesIn>[1]) => errorResponsesIn('openai', codes);

const ImageReference = Type.Object(
  {
    image_url: Type.Optional(
      Type.String({ description: 'An http(s) URL or a base64 `data:` URL of an image.' }),
    ),
    file_id: Type.Optional(
      Type.String({ description: 'An image uploaded with `POST /v1/files` (`file-…`).' }),
    ),
  },
  { additionalProperties: false, description: 'Exactly one of `image_url` and `file_id`.' },
);

const CreateVideoBody = Type.Object(
  {
    model: Type.Optional(
      Type.String({
        description:
          'A model ID of this service, or OpenAI’s `sora-2` (the fast variant; the default) or `sora-2-pro` (the ' +
          'standard one): image-to-video with `input_reference`, else text-to-video.',
      }),
    ),
    prompt: Type.String({ minLength: 1, maxLength: 5000 }),
    input_reference: Type.Optional(
      Type.Union(
        [Type.String({ format: 'binary', description: 'An image file (a form).' }), ImageReference],
        {
          description: 'The first frame.',
        },
      ),
    ),
    seconds: Type.Optional(
      Type.String({
        pattern: '^[0-9]+$',
        description: 'Seconds, 4 to 15 (OpenAI’s "4", "8", "12"); default "4".',
      }),
    ),
    size: Type.Optional(
      Type.String({
        pattern: '^[0-9]+x[0-9]+$',
        description:
          '`WIDTHxHEIGHT`, a frame this service renders (`720x1280`, the default; `1280x720`; `1920x1080`, …); ' +
          'OpenAI’s `1024x1792` and `1792x1024` are not.',
      }),
    ),
  },
  { additionalProperties: false },
);

const RemixBody = Type.Object(
  { prompt: Type.String({ minLength: 1, maxLength: 5000 }) },
  { additionalProperties: false },
);

/** Runs a use case, naming the parameters of its errors as OpenAI's request names them. */
async function inOpenAiTerms<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ApiError) || openAiParam(error.param) === error.param) throw error;
    const param = openAiParam(error.param);
    throw new ApiError(error.code, error.message, {
      ...(param === undefined ? {} : { param }),
      ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
    });
  }
}

/** What the form parser refused: the client's request, a 400 (or a 413 for a file over the limit). */
function formError(error: unknown, limit: number): ApiError {
  if (error instanceof ApiError) return error;
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  if (code === 'FST_REQ_FILE_TOO_LARGE') {
    return new ApiError('payload_too_large', `input_reference is larger than ${limit} bytes.`, {
      param: 'input_reference',
    });
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new ApiError('invalid_parameter', `The body is not a valid form: ${reason}.`);
}

/**
 * The form's fields: text parts by name (`input_reference[image_url]` into an object, as OpenAI's SDKs send an
 * object), and the `input_reference` file, read into memory (bounded by the creation's body limit).
 */
async function readForm(request: FastifyRequest, limit: number): Promise<OpenAiCreation> {
  const fields: Record<string, unknown> = {};
  let file: ReferenceFile | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'input_reference') {
          part.file.resume();
          throw new ApiError('unknown_parameter', `Unknown parameter: ${part.fieldname}.`, {
            param: part.fieldname,
          });
        }
        file = { bytes: await part.toBuffer(), mimetype: part.mimetype };
        continue;
      }
      const nested = /^(\w+)\[(\w+)\]$/.exec(part.fieldname);
      const value = typeof part.value === 'string' ? part.value : String(part.value);
      if (nested?.[1] && nested[2]) {
        const parent = fields[nested[1]] ?? {};
        if (typeof parent === 'object' && parent !== null) {
          fields[nested[1]] = { ...(parent as Record<string, unknown>), [nested[2]]: value };
        }
      } else {
        fields[part.fieldname] = value;
      }
    }
  } catch (error) {
    throw formError(error, limit);
  }
  return { fields, ...(file ? { file } : {}) };
}

function jsonObject(body: unknown): Record<string, unknown> {
  if (body === undefined) throw emptyBody();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_json', 'The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

function onlyParameters(query: Record<string, unknown>, known: readonly string[]): void {
  for (const name of Object.keys(query)) {
    if (!known.includes(name))
      throw new ApiError('unknown_parameter', `Unknown query parameter ${name}.`, { param: name });
    if (Array.isArray(query[name])) {
      throw new ApiError('invalid_parameter', `${name} may be given once.`, { param: name });
    }
  }
}

export function openAiVideoRoutes(app: FastifyInstance, deps: OpenAiVideoDependencies): void {
  const video = async (request: FastifyRequest, id: string): Promise<OpenAiVideo> =>
    toOpenAiVideo(await deps.tasks.record(principalOf(request), id), deps.retentionSeconds);

  // Its own context: the form parser applies to these routes only.
  app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { files: 1, fileSize: deps.maxBodyBytes, fields: 10, parts: 11, fieldSize: 64 * 1024 },
      throwFileSizeLimit: true,
    });
    scope.post(
      '/v1/videos',
      {
        preHandler: deps.authenticate,
        bodyLimit: deps.maxBodyBytes,
        config: OPENAI,
        schema: {
          summary: 'Create a video (OpenAI)',
          description:
            'OpenAI’s `POST /videos`, as a task of this service: `seconds` is `duration`, `size` the quality and ' +
            'ratio, `model` as docs/api.md#openai-videos-api says. Answers the video, `queued`.',
          operationId: 'createVideo',
          tags: TAGS,
          security: API_KEY_SECURITY,
          consumes: ['application/json', 'multipart/form-data'],
          body: CreateVideoBody,
          response: {
            200: Type.Ref(OpenAiVideoSchema),
            ...errors(...CREATION_ERRORS),
          },
        },
        validatorCompiler: () => () => true,
      },
      async (request) => {
        const origin = requestOrigin(request);
        const creation = request.isMultipart()
          ? await readForm(request, deps.maxBodyBytes)
          : { fields: jsonObject(request.body) };
        const scopeOf = principalOf(request);
        const id = await inOpenAiTerms(async () => {
          const body = generationBody(
            creation,
            (fileId) => `${deps.publicUrl(origin)}${fileContentPath(fileId)}`,
          );
          const key = parseIdempotencyKey(request.headers['idempotency-key']);
          if (key === undefined) return (await deps.tasks.create(scopeOf, body, origin)).id;
          return (await deps.tasks.createOnce(scopeOf, body, key, origin)).task.id;
        });
        return video(request, id);
      },
    );
    scope.post<{ Params: { video_id: string } }>(
      '/v1/videos/:video_id/remix',
      {
        preHandler: deps.authenticate,
        config: OPENAI,
        schema: {
          summary: 'Remix a video (OpenAI)',
          description:
            'A new reference-to-video task whose video 1 is this completed video, with its duration, size and seed ' +
            'and the new prompt.',
          operationId: 'remixVideo',
          tags: TAGS,
          security: API_KEY_SECURITY,
          consumes: ['application/json', 'multipart/form-data'],
          params: VideoIdParams,
          body: RemixBody,
          response: {
            200: Type.Ref(OpenAiVideoSchema),
            ...errors(
              ...AUTHENTICATED_ERRORS,
              ...BODY_ERRORS,
              'task_not_found',
              'missing_parameter',
              'invalid_parameter',
              'unknown_parameter',
              'input_not_supported',
              'budget_exceeded',
              ...WRITE_ERRORS,
            ),
          },
        },
        validatorCompiler: () => () => true,
      },
      async (request) => {
        const fields = request.isMultipart()
          ? (await readForm(request, deps.maxBodyBytes)).fields
          : jsonObject(request.body);
        for (const name of Object.keys(fields)) {
          if (name !== 'prompt')
            throw new ApiError('unknown_parameter', `Unknown parameter: ${name}.`, { param: name });
        }
        const task = await inOpenAiTerms(() =>
          deps.tasks.remix(principalOf(request), request.params.video_id, fields.prompt),
        );
        return toOpenAiVideo(task, deps.retentionSeconds);
      },
    );
  });

  app.get<{ Querystring: Record<string, unknown> }>(
    '/v1/videos',
    {
      preHandler: deps.authenticate,
      config: OPENAI,
      schema: {
        summary: 'List videos (OpenAI)',
        description: 'The key’s tasks, newest first, as OpenAI’s page: the next page is `after=<last_id>`.',
        operationId: 'listVideos',
        tags: TAGS,
        security: API_KEY_SECURITY,
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 20 })),
          after: Type.Optional(Type.String({ description: 'The `last_id` of the previous page.' })),
          order: Type.Optional(
            Type.Literal('desc', { description: 'Newest first, the only order served (`asc` is refused).' }),
          ),
        }),
        response: {
          200: OpenAiVideoListSchema,
          ...errors(...AUTHENTICATED_ERRORS, 'invalid_parameter', 'unknown_parameter'),
        },
      },
      validatorCompiler: () => () => true,
    },
    async (request) => {
      const { query } = request;
      onlyParameters(query, ['limit', 'after', 'order']);
      if (query.order !== undefined && query.order !== 'desc') {
        throw new ApiError('invalid_parameter', 'order must be desc: videos are listed newest first.', {
          param: 'order',
        });
      }
      const limit = query.limit === undefined ? 20 : Number(query.limit);
      if (
        !(typeof query.limit !== 'string' || /^\d+$/.test(query.limit)) ||
        !(limit >= 1 && limit <= MAX_PAGE_SIZE)
      ) {
        throw new ApiError('invalid_parameter', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`, {
          param: 'limit',
        });
      }
      const scopeOf = principalOf(request);
      let after: TaskListQuery['after'];
      if (query.after !== undefined) {
        const last = await deps.tasks.record(scopeOf, String(query.after)).catch((error: unknown) => {
          if (error instanceof ApiError && error.code === 'task_not_found') {
            throw new ApiError(
              'invalid_parameter',
              `after: no video ${String(query.after)} exists for this API key.`,
              {
                param: 'after',
              },
            );
          }
          throw error;
        });
        after = { createdAt: last.createdAt, id: last.id };
      }
      const { tasks, hasMore } = await deps.tasks.page(scopeOf, { limit, ...(after ? { after } : {}) });
      const data = tasks.map((task) => toOpenAiVideo(task, deps.retentionSeconds));
      return {
        object: 'list' as const,
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: hasMore,
      };
    },
  );
  app.get<{ Params: { video_id: string } }>(
    '/v1/videos/:video_id',
    {
      preHandler: deps.authenticate,
      config: OPENAI,
      schema: {
        summary: 'Get a video (OpenAI)',
        operationId: 'getVideo',
        tags: TAGS,
        security: API_KEY_SECURITY,
        params: VideoIdParams,
        response: { 200: Type.Ref(OpenAiVideoSchema), ...errors(...AUTHENTICATED_ERRORS, 'task_not_found') },
      },
    },
    async (request) => video(request, request.params.video_id),
  );
  app.delete<{ Params: { video_id: string } }>(
    '/v1/videos/:video_id',
    {
      preHandler: deps.authenticate,
      config: OPENAI,
      schema: {
        summary: 'Delete a video (OpenAI)',
        description: 'Deletes a completed or failed task with its video and stored assets.',
        operationId: 'deleteVideo',
        tags: TAGS,
        security: API_KEY_SECURITY,
        params: VideoIdParams,
        response: {
          200: DeletedOpenAiVideoSchema,
          ...errors(...AUTHENTICATED_ERRORS, 'task_not_found', 'task_not_deletable', ...WRITE_ERRORS),
        },
      },
    },
    async (request) => {
      const { id } = await deps.tasks.delete(principalOf(request), request.params.video_id);
      return { id, object: 'video.deleted' as const, deleted: true as const };
    },
  );
  app.get<{ Params: { video_id: string }; Querystring: Record<string, unknown> }>(
    '/v1/videos/:video_id/content',
    {
      preHandler: deps.authenticate,
      config: OPENAI,
      schema: {
        summary: 'Download a video (OpenAI)',
        description:
          'The MP4 (`Range` requests served), or `variant=thumbnail` (its first frame at its size, WebP, or JPEG ' +
          'for an `Accept` that takes image/jpeg and not image/webp) or ' +
          '`variant=spritesheet` (a frame a second at a quarter of its size, in rows of five, JPEG).',
        operationId: 'getVideoContent',
        tags: TAGS,
        security: API_KEY_SECURITY,
        params: VideoIdParams,
        querystring: Type.Object({
          variant: Type.Optional(
            Type.Union(
              VARIANTS.map((variant) => Type.Literal(variant)),
              { default: 'video' },
            ),
          ),
        }),
        headers: Type.Object({
          range: Type.Optional(
            Type.String({ description: 'One byte range of the video, e.g. `bytes=0-1023`.' }),
          ),
        }),
        response: {
          200: {
            ...VideoResponse('The video, or the image of the variant.'),
            content: {
              'video/mp4': { schema: Type.String({ format: 'binary' }) },
              'image/webp': { schema: Type.String({ format: 'binary' }) },
              'image/jpeg': { schema: Type.String({ format: 'binary' }) },
            },
            headers: {
              'content-length': Type.Integer({ minimum: 0 }),
              'cache-control': Type.String(),
              'accept-ranges': Type.String({ description: '`bytes` (the video).' }),
              'last-modified': Type.String({ description: 'The video’s.' }),
            },
          },
          206: VideoResponse('The requested range of the video.', {
            'content-range': Type.String({ description: '`bytes start-end/size`.' }),
          }),
          ...errors(
            ...AUTHENTICATED_ERRORS,
            'task_not_found',
            'not_found',
            'invalid_parameter',
            'unknown_parameter',
            'range_not_satisfiable',
          ),
        },
      },
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      onlyParameters(request.query, ['variant']);
      const variant = request.query.variant ?? 'video';
      if (!VARIANTS.includes(variant as (typeof VARIANTS)[number])) {
        throw new ApiError('invalid_parameter', `variant must be one of ${VARIANTS.join(', ')}.`, {
          param: 'variant',
        });
      }
      const task = await deps.tasks.record(principalOf(request), request.params.video_id);
      if (task.status !== 'completed') {
        throw new ApiError(
          'not_found',
          `Video ${task.id} is ${toOpenAiVideo(task, 0).status}: it has content once completed.`,
          { param: 'video_id' },
        );
      }
      if (variant === 'video') return sendStoredVideo(request, reply, deps.storage, resultKey(task.id));
      const still = await videoStill(
        deps.storage,
        resultKey(task.id),
        variant as StillVariant,
        task.params.duration,
        thumbnailFormat(request.headers.accept),
      );
      return reply
        .type(still.contentType)
        .header('content-length', still.bytes.length)
        .header('cache-control', 'private, max-age=3600')
        .send(still.bytes);
    },
  );
}

/** JPEG for a client whose `Accept` takes image/jpeg but not image/webp; OpenAI's WebP otherwise. */
function thumbnailFormat(accept: string | undefined): ThumbnailFormat {
  const types = (accept ?? '').split(',').map((part) => part.split(';')[0]?.trim().toLowerCase() ?? '');
  return types.includes('image/jpeg') && !types.includes('image/webp') ? 'jpeg' : 'webp';
}
