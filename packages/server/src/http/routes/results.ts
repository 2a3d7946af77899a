/**
 * `GET|HEAD /v1/results/{task_id}.mp4`: the result video behind a signed link (decisions.md §6).
 * The signature is the credential, so a browser or video player can fetch it without an API key.
 */
import type { FastifyInstance } from 'fastify';
import parseRange from 'range-parser';
import { ApiError } from '../../errors.js';
import type { Storage } from '../../ports/storage.js';
import type { ResultLinks } from '../../result-links.js';

interface ResultRequest {
  Params: { file: string };
  Querystring: { expires?: string; signature?: string };
}

export function resultRoutes(app: FastifyInstance, deps: { links: ResultLinks; storage: Storage }) {
  // GET and HEAD declared together: Fastify's generated HEAD route would answer Content-Length: 0.
  app.route<ResultRequest>({
    method: ['GET', 'HEAD'],
    url: '/v1/results/:file',
    handler: async (request, reply) => {
      const taskId = request.params.file.replace(/\.mp4$/, '');
      const link = deps.links.verify(taskId, request.query.expires ?? '', request.query.signature ?? '');
      if (!link)
        throw new ApiError(
          'invalid_signature',
          'This result link is invalid or has expired; query the task for a fresh one.',
        );
      const object = await deps.storage.stat(link.key);
      if (!object) throw new ApiError('not_found', 'This result no longer exists.');

      reply
        .header('content-type', object.contentType)
        .header('accept-ranges', 'bytes')
        .header('last-modified', new Date(object.modifiedAt).toUTCString())
        .header('cache-control', 'private, max-age=3600');

      let range: { start: number; end: number } | undefined;
      const header = request.headers.range;
      if (header) {
        const ranges = parseRange(object.size, header, { combine: true });
        if (ranges === -1) {
          reply.header('content-range', `bytes */${object.size}`);
          throw new ApiError(
            'range_not_satisfiable',
            `The range ${header} is outside the ${object.size}-byte file.`,
          );
        }
        // A malformed Range header (-2) or a multi-range request is answered with the whole file, as RFC 9110 allows.
        if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1 && ranges[0]) {
          range = { start: ranges[0].start, end: ranges[0].end };
          reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${object.size}`);
        }
      }
      reply.header('content-length', range ? range.end - range.start + 1 : object.size);
      if (request.method === 'HEAD') return reply.send();
      return reply.send(await deps.storage.read(link.key, range));
    },
  });
}
