/**
 * Uploads: `POST /v1/files` (multipart, one file) stores an image, video or audio file for the key's account
 * and answers its URL for use in a request; `GET /v1/files/{file_id}` and `…/content` read it back.
 */
import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import type { FileService } from '../../files/file-service.js';
import { principalOf } from '../authentication.js';
import { requestOrigin } from '../request-origin.js';
import {
  API_KEY_SECURITY,
  AUTHENTICATED_ERRORS,
  errorResponses,
  FileSchema,
  WRITE_ERRORS,
} from '../schemas.js';

const FileIdParams = Type.Object({ file_id: Type.String({ description: 'The id of the file.' }) });

/** What the multipart parser refused, before any file began: the client's request, so a 400 naming `file`. */
function malformedForm(error: unknown): ApiError {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  const message =
    code === 'FST_FIELDS_LIMIT'
      ? 'The part named file is a plain field: send it as a file, with a filename (curl -F file=@photo.png).'
      : code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT'
        ? 'Send one part, the file.'
        : `The body is not valid multipart/form-data: ${error instanceof Error ? error.message : String(error)}.`;
  return new ApiError('invalid_parameter', message, { param: 'file' });
}

export function fileRoutes(
  app: FastifyInstance,
  deps: { files: FileService; authenticate: preHandlerAsyncHookHandler },
) {
  // Its own context: the multipart parser applies to these routes only.
  app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { files: 1, fileSize: deps.files.maxBytes, fields: 0, parts: 1 },
      throwFileSizeLimit: false,
    });
    scope.post(
      '/v1/files',
      {
        preHandler: deps.authenticate,
        schema: {
          summary: 'Upload a file',
          description:
            'One image, video or audio file as `multipart/form-data` (the part named `file`). The content decides the ' +
            'kind; the answer’s `url` goes in the field of that kind. Size limit: `VIDEOGEN_ASSET_MAX_MB`.',
          operationId: 'uploadFile',
          tags: ['Files'],
          security: API_KEY_SECURITY,
          consumes: ['multipart/form-data'],
          body: Type.Object({ file: Type.String({ format: 'binary' }) }),
          response: {
            200: Type.Ref(FileSchema),
            ...errorResponses(
              ...AUTHENTICATED_ERRORS,
              'missing_parameter',
              'invalid_parameter',
              'payload_too_large',
              'unsupported_media_type',
              ...WRITE_ERRORS,
            ),
          },
        },
        validatorCompiler: () => () => true,
      },
      async (request) => {
        if (!request.isMultipart()) {
          throw new ApiError('unsupported_media_type', 'Send the file as multipart/form-data.', {
            param: 'file',
          });
        }
        const part = await request.file().catch((error: unknown) => {
          throw error instanceof ApiError ? error : malformedForm(error);
        });
        if (!part) throw new ApiError('missing_parameter', 'The file part is missing.', { param: 'file' });
        return deps.files.upload(
          principalOf(request),
          {
            stream: part.file,
            filename: part.filename,
            mimetype: part.mimetype,
            truncated: () => part.file.truncated,
          },
          requestOrigin(request),
        );
      },
    );
  });
  app.get<{ Params: { file_id: string } }>(
    '/v1/files/:file_id',
    {
      preHandler: deps.authenticate,
      schema: {
        summary: 'Get an uploaded file',
        operationId: 'getFile',
        tags: ['Files'],
        security: API_KEY_SECURITY,
        params: FileIdParams,
        response: { 200: Type.Ref(FileSchema), ...errorResponses(...AUTHENTICATED_ERRORS, 'not_found') },
      },
    },
    async (request) => deps.files.get(principalOf(request), request.params.file_id, requestOrigin(request)),
  );
  app.get<{ Params: { file_id: string } }>(
    '/v1/files/:file_id/content',
    {
      preHandler: deps.authenticate,
      schema: {
        summary: "Download an uploaded file's content",
        operationId: 'getFileContent',
        tags: ['Files'],
        security: API_KEY_SECURITY,
        params: FileIdParams,
        response: {
          200: {
            description:
              'The file as uploaded, with the `content_type` of the file: the type its content has, else the one it ' +
              'was uploaded with when that is of its kind, else `application/octet-stream`.',
            content: Object.fromEntries(
              ['image/*', 'video/*', 'audio/*', 'application/octet-stream'].map((type) => [
                type,
                { schema: Type.String({ format: 'binary' }) },
              ]),
            ),
          },
          ...errorResponses(...AUTHENTICATED_ERRORS, 'not_found'),
        },
      },
    },
    async (request, reply) => {
      const { stream, file } = await deps.files.content(principalOf(request), request.params.file_id);
      // The type was read from the content at upload; a browser must not guess another from it.
      return reply
        .type(file.content_type)
        .header('content-length', file.bytes)
        .header('x-content-type-options', 'nosniff')
        .send(stream);
    },
  );
}
