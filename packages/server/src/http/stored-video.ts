/**
 * Answers a video in storage, whole or one byte range of it (`Range`, RFC 9110): the signed result links
 * (routes/results.ts) and the OpenAI Videos API's content (routes/openai-videos.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import parseRange from 'range-parser';
import { ApiError } from '../domain/errors.js';
import type { Storage } from '../ports/storage.js';

export async function sendStoredVideo(
  request: FastifyRequest,
  reply: FastifyReply,
  storage: Pick<Storage, 'stat' | 'read'>,
  key: string,
): Promise<FastifyReply> {
  const object = await storage.stat(key);
  if (!object) throw new ApiError('not_found', 'This result no longer exists.');

  let range: { start: number; end: number } | undefined;
  const header = request.headers.range;
  if (header) {
    const ranges = parseRange(object.size, header, { combine: true });
    if (ranges === -1) {
      // Fastify's error handler keeps the headers set on the reply (all but its type and length).
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
  reply
    .header('content-type', object.contentType)
    .header('accept-ranges', 'bytes')
    .header('last-modified', new Date(object.modifiedAt).toUTCString())
    .header('cache-control', 'private, max-age=3600');
  reply.header('content-length', range ? range.end - range.start + 1 : object.size);
  if (request.method === 'HEAD') return reply.send();
  return reply.send(await storage.read(key, range));
}
