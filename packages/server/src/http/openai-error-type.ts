/**
 * The `type` of an error in OpenAI's envelope (the OpenAI Videos API routes, `/v1/videos`), from its HTTP status,
 * as OpenAI's API answers: `invalid_request_error` for the client's errors (a wrong API key included),
 * `insufficient_quota` for a spent budget, `requests` for the request rate, `server_error` for the server's.
 * The code stays the catalogue's.
 */
export const OPENAI_ERROR_TYPES = [
  'invalid_request_error',
  'insufficient_quota',
  'requests',
  'server_error',
] as const;

export type OpenAiErrorType = (typeof OPENAI_ERROR_TYPES)[number];

export function openAiErrorType(status: number): OpenAiErrorType {
  if (status >= 500) return 'server_error';
  if (status === 402) return 'insufficient_quota';
  if (status === 429) return 'requests';
  return 'invalid_request_error';
}
