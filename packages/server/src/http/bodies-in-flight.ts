/**
 * A bound on the large request bodies this process holds at once. A JSON body is read whole into memory before
 * it is parsed, and a creation's inline `data:` assets are decoded besides, so 80 creations of 17 MB sent
 * together took a server from 0.9 GB to 2.9 GB, where it stayed. Each request whose body may be large takes
 * its declared length (the route's body limit when it comes chunked, without one) from the bound before the
 * body is read, and gives it back when its answer has gone, since the parsed body lives as long as the request.
 * A request that does not fit is refused at once with `503 overloaded` and `Retry-After`, its body never read
 * (Node.js discards it).
 *
 * Large means more than the small routes' limit (`VIDEOGEN_MAX_OTHER_BODY_KB`): a burst of a thousand ordinary
 * creations at once is normal use and costs little memory, so small bodies are never counted. Nor is a body
 * over its route's limit (Fastify refuses it `413` from its declared length without reading it), nor an upload,
 * streamed to a file as it arrives (routes/files.ts); a form the OpenAI Videos API's creation reads into memory
 * (routes/openai-videos.ts) is counted. A body is always admitted while no other is held,
 * whatever its size: a bound below a route's body limit makes such bodies wait their turn rather than refuses
 * them for ever.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface BodyBounds {
  /** Large bodies held at once. */
  readonly maxBodies: number;
  /** Their declared bytes, together. */
  readonly maxBytes: number;
}

export class BodiesInFlight {
  readonly #bounds: BodyBounds;
  /** Bodies of at most this many bytes are small, and not counted. */
  readonly #smallBytes: number;
  /** Told the bodies held and their bytes after each change, for `/metrics`. */
  readonly #onChange: ((bodies: number, bytes: number) => void) | undefined;
  #bodies = 0;
  #bytes = 0;

  constructor(bounds: BodyBounds, smallBytes: number, onChange?: (bodies: number, bytes: number) => void) {
    this.#bounds = bounds;
    this.#smallBytes = smallBytes;
    this.#onChange = onChange;
  }

  /**
   * Holds the request's body, if it counts, until its answer has gone; false when it does not fit, and the
   * request must be refused before its body is read.
   */
  admit(request: FastifyRequest, reply: FastifyReply): boolean {
    const bytes = this.#countedBytes(request);
    if (bytes === 0) return true;
    if (!this.#take(bytes)) return false;
    reply.raw.once('close', () => this.#give(bytes));
    return true;
  }

  /** The bytes a request's body counts for; 0 for one that does not count. */
  #countedBytes(request: FastifyRequest): number {
    const { headers } = request;
    const chunked = headers['transfer-encoding'] !== undefined;
    const length = Number(headers['content-length']);
    // Most requests are decided from their headers alone: `routeOptions` is built anew on each read.
    if (!chunked && !(length > this.#smallBytes)) return 0;
    const route = request.routeOptions;
    const consumes = route.schema?.consumes;
    // An upload streams to a file; a route that also reads JSON (the OpenAI Videos API's creation) holds either.
    if (
      Array.isArray(consumes) &&
      consumes.includes('multipart/form-data') &&
      !consumes.includes('application/json')
    )
      return 0;
    const limit = route.bodyLimit;
    if (chunked) return limit > this.#smallBytes ? limit : 0;
    return Number.isSafeInteger(length) && length <= limit ? length : 0;
  }

  #take(bytes: number): boolean {
    const fits =
      this.#bodies === 0 ||
      (this.#bodies < this.#bounds.maxBodies && this.#bytes + bytes <= this.#bounds.maxBytes);
    if (!fits) return false;
    this.#bodies += 1;
    this.#bytes += bytes;
    this.#onChange?.(this.#bodies, this.#bytes);
    return true;
  }

  #give(bytes: number): void {
    this.#bodies -= 1;
    this.#bytes -= bytes;
    this.#onChange?.(this.#bodies, this.#bytes);
  }
}
