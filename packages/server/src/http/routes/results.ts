/**
 * `GET|HEAD /v1/results/{task_id}.mp4`: the result video behind a signed link
 * (docs/decisions.md#result-videos); `/v1/results/{task_id}-last-frame.png`, its last frame (`results[1]` with
 * `return_last_frame`), signed the same way. The signature is the credential, so a browser or video player can fetch
 * it without an API key.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import type { Storage } from '../../ports/storage.js';
import type { ResultLinks } from '../../tasks/result-links.js';
import { errorResponses, withErrorHeaders } from '../schemas.js';
import { sendStoredVideo } from '../stored-video.js';

interface ResultRequest {
  Params: { file: string };
  Querystring: { expires?: string; signature?: string };
}

export const VideoResponse = (description: string, headers: Record<string, TSchema> = {}) => ({
  description,
  headers: {
    'content-length': Type.Integer({ minimum: 0 }),
    'accept-ranges': Type.String({ description: '`bytes`.' }),
    'last-modified': Type.String(),
    'cache-control': Type.String(),
    ...headers,
  },
  content: { 'video/mp4': { schema: Type.String({ format: 'binary' }) } },
});

/** A result file: the video, or its last frame. */
const ResultFileResponse = (description: string, headers: Record<string, TSchema> = {}) => ({
  ...VideoResponse(description, headers),
  content: {
    'video/mp4': { schema: Type.String({ format: 'binary' }) },
    'image/png': { schema: Type.String({ format: 'binary' }) },
  },
});

export function resultRoutes(app: FastifyInstance, deps: { links: ResultLinks; storage: Storage }) {
  // GET and HEAD declared together: Fastify's generated HEAD route would answer Content-Length: 0.
  app.route<ResultRequest>({
    method: ['GET', 'HEAD'],
    url: '/v1/results/:file',
    schema: {
      summary: 'Download a result video or its last frame',
      description:
        "The link in a completed task's `results[0]` (the MP4), or `results[1]` (the last frame, a PNG, when the " +
        'request set `return_last_frame`). Its query string is the credential (no API key), valid for at least ' +
        '`VIDEOGEN_RESULT_URL_TTL_SECONDS`. Supports `Range` requests.',
      operationId: 'getResult',
      tags: ['Results'],
      params: Type.Object({
        file: Type.String({
          description: '`{task_id}.mp4`, or `{task_id}-last-frame.png`.',
          examples: ['task-unified-01JD7V3Q6M8Z5S9K2T4W6Y8A0C.mp4'],
        }),
      }),
      querystring: Type.Object({
        expires: Type.String({ description: 'Unix seconds; part of the signed link.' }),
        signature: Type.String({ description: 'Part of the signed link.' }),
      }),
      headers: Type.Object({
        range: Type.Optional(Type.String({ description: 'One byte range, e.g. `bytes=0-1023`.' })),
      }),
      response: {
        200: ResultFileResponse('The whole file.'),
        206: ResultFileResponse('The requested range.', {
          'content-range': Type.String({ description: '`bytes start-end/size`.' }),
        }),
        ...withErrorHeaders(
          errorResponses('invalid_signature', 'not_found', 'range_not_satisfiable', 'internal_error'),
          416,
          { 'content-range': Type.String({ description: '`bytes */size`: the size of the video.' }) },
        ),
      },
    },
    // The request schemas document; the handler checks, so that any bad link is 403 invalid_signature.
    validatorCompiler: () => () => true,
    handler: async (request, reply) => {
      const link = deps.links.verify(
        request.params.file,
        request.query.expires ?? '',
        request.query.signature ?? '',
      );
      if (!link)
        throw new ApiError(
          'invalid_signature',
          'This result link is invalid or has expired; query the task for a fresh one.',
        );
      return sendStoredVideo(request, reply, deps.storage, link.key);
    },
  });
}
