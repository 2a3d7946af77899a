/** A fetch that passes requests on (or answers some itself) and records what the client sent. */
import type { FetchFunction } from '../../src/index.js';

export interface SentRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: Headers;
}

/** Answers a request instead of the network, or `undefined` to let it through. */
export type Interceptor = (
  request: SentRequest,
  attempt: number,
) => Promise<Response | undefined> | Response | undefined;

export interface RecordingFetch {
  readonly fetch: FetchFunction;
  readonly sent: SentRequest[];
  /** Paths (with the method) of what was sent, e.g. `GET /v1/tasks/task-unified-…`. */
  paths(): string[];
}

export function recordingFetch(intercept: Interceptor = () => undefined): RecordingFetch {
  const sent: SentRequest[] = [];
  const fetchFunction: FetchFunction = async (input, init) => {
    const request: SentRequest = {
      method: init.method ?? 'GET',
      url: new URL(input),
      headers: new Headers(init.headers),
    };
    sent.push(request);
    const answer = await intercept(request, sent.length);
    return answer ?? fetch(input, init);
  };
  return {
    fetch: fetchFunction,
    sent,
    paths: () => sent.map((request) => `${request.method} ${request.url.pathname}`),
  };
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': 'req_injected', ...headers },
  });
}

export function apiErrorResponse(
  status: number,
  code: string,
  type: string,
  headers: Record<string, string> = {},
): Response {
  return jsonResponse(
    status,
    { error: { code, message: `injected ${code}`, type, request_id: 'req_injected' } },
    headers,
  );
}
