/**
 * Veo's long-running operation (google.longrunning.Operation; googleapis/googleapis
 * `google/ai/generativelanguage/v1beta/prediction_service.proto`: PredictLongRunningResponse,
 * GenerateVideoResponse) read as a hosted task's status:
 *
 * - `done` missing (proto3 JSON leaves out `false`) or false: running. Veo reports no progress (its
 *   `metadata` is an empty message).
 * - `done` with `response.generateVideoResponse.generatedSamples[0].video.uri`: succeeded, with that URI.
 * - `done` with no samples: Veo's safety filters removed the video (`raiMediaFilteredCount`,
 *   `raiMediaFilteredReasons`; "You will not be charged"): refused, with the reasons.
 * - `done` with `error` (google.rpc.Status: a gRPC `code` and `message`): failed; refused when the message is
 *   a safety filter's.
 *
 * Fields not named here (`@type`, `metadata`, `video.encoding`…) are ignored.
 */
import { TaskFailure } from '../../domain/errors.js';
import type { HostedStatus } from '../hosted/hosted-task.js';
import { excerptOf } from '../upstream-request.js';

/** `models/{model}/operations/{id}`: polled as `GET /v1beta/{name}`. */
const OPERATION_NAME = /^models\/[A-Za-z0-9._-]+\/operations\/[A-Za-z0-9_-]+$/;

const GRPC_CODES: Readonly<Record<number, string>> = {
  1: 'CANCELLED',
  2: 'UNKNOWN',
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
};

/** Words of Veo's and Google's safety-filter messages ("…violate Google's Responsible AI practices…"). */
const SAFETY_MESSAGE =
  /safety|responsible ai|\brai\b|content polic|usage guidelines|prohibited|sensitive|public figure|celebrit|harmful|violat/i;

type Json = Record<string, unknown>;

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Json)[key]
    : undefined;
}

/** The operation's name from the submit's answer. */
export function operationName(answer: unknown, label: string): string {
  const name = field(answer, 'name');
  if (typeof name === 'string' && OPERATION_NAME.test(name)) return name;
  throw new TaskFailure(
    'upstream_error',
    `${label}: the Gemini API answered the submit without an operation name: ${excerptOf(answer)}`,
  );
}

function failed(refused: boolean, message: string): HostedStatus<string> {
  return { state: 'failed', failure: { refused, message } };
}

function filtered(videoResponse: unknown): HostedStatus<string> {
  const reasons = field(videoResponse, 'raiMediaFilteredReasons');
  const said = Array.isArray(reasons) ? reasons.filter((r): r is string => typeof r === 'string') : [];
  if (said.length > 0) return failed(true, `Veo's safety filters removed the video: ${said.join(' ')}`);
  const count = field(videoResponse, 'raiMediaFilteredCount');
  if (typeof count === 'number' && count > 0) {
    return failed(true, `Veo's safety filters removed the video (${count} filtered), giving no reason.`);
  }
  return failed(false, 'Veo finished the operation without a video and gave no reason.');
}

/** An operation (`GET /v1beta/{name}`'s answer) as the task's status; the result is the video's URI. */
export function veoStatus(answer: unknown, label: string): HostedStatus<string> {
  if (typeof field(answer, 'name') !== 'string') {
    throw new TaskFailure(
      'upstream_error',
      `${label}: the Gemini API answered a poll with something that is not an operation: ${excerptOf(answer)}`,
    );
  }
  if (field(answer, 'done') !== true) return { state: 'running' };
  const error = field(answer, 'error');
  if (error !== undefined) {
    const code = field(error, 'code');
    const message = field(error, 'message');
    const text = typeof message === 'string' && message ? message : 'no message';
    const name = typeof code === 'number' ? (GRPC_CODES[code] ?? `code ${code}`) : 'no code';
    return failed(SAFETY_MESSAGE.test(text), `Veo failed the video (${name}): ${text}`);
  }
  const videoResponse = field(field(answer, 'response'), 'generateVideoResponse');
  const samples = field(videoResponse, 'generatedSamples');
  if (!Array.isArray(samples) || samples.length === 0) return filtered(videoResponse);
  const uri = field(field(samples[0], 'video'), 'uri');
  if (typeof uri === 'string' && uri) return { state: 'succeeded', result: uri };
  throw new TaskFailure(
    'upstream_error',
    `${label}: Veo finished the video but gave no URI to download it from: ${excerptOf(answer)}`,
  );
}
