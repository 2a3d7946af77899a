/**
 * Reading ComfyUI's `GET /history/{prompt_id}` answer: whether the prompt has finished or failed, and which
 * of its output files is the video. Also says a failure reported in an `execution_error` or
 * `execution_interrupted` message (websocket or history) as a `TaskFailure`.
 */
import { extname } from 'node:path';
import { TaskFailure } from '../../domain/errors.js';

/** A file a node wrote: fetched with `GET /view?filename=…&subfolder=…&type=…`. */
export interface OutputFile {
  readonly filename: string;
  readonly subfolder: string;
  readonly type: string;
}

export interface HistoryEntry {
  /** Node ID → what its UI shows: `gifs` (VideoHelperSuite), `images`, `videos`… each a list of files. */
  readonly outputs?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly status?: {
    readonly status_str?: string;
    readonly completed?: boolean;
    /** `[type, data]` pairs: `execution_start`, `execution_cached`, `execution_error`, … */
    readonly messages?: readonly (readonly [string, Readonly<Record<string, unknown>>])[];
  };
}

/** `GET /history/{prompt_id}`: empty until the prompt has finished. */
export type HistoryAnswer = Readonly<Record<string, HistoryEntry>>;

const VIDEO_EXTENSIONS = new Set(['.mp4', '.webm', '.mov', '.mkv', '.gif', '.webp']);

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** What failed, from the data of an `execution_error` or `execution_interrupted` message. */
export function executionFailure(
  label: string,
  type: string,
  data: Readonly<Record<string, unknown>>,
): TaskFailure {
  const nodeId = text(data.node_id);
  const nodeType = text(data.node_type);
  const where = nodeId
    ? ` in node ${nodeId}${nodeType ? ` (${nodeType})` : ''}`
    : nodeType
      ? ` in ${nodeType}`
      : '';
  if (type === 'execution_interrupted') {
    return new TaskFailure(
      'upstream_error',
      `${label}: the run was interrupted on the ComfyUI server${where}.`,
    );
  }
  const exception = text(data.exception_type);
  const message = text(data.exception_message) ?? 'no message';
  const reason = exception && !message.startsWith(exception) ? `${exception}: ${message}` : message;
  return new TaskFailure('upstream_error', `${label}: the workflow failed${where}: ${reason}`);
}

/**
 * `done` when the prompt finished, `pending` while it is queued or running (no entry yet); throws the
 * `TaskFailure` of a prompt that failed.
 */
export function historyOutcome(entry: HistoryEntry | undefined, label: string): 'done' | 'pending' {
  if (!entry) return 'pending';
  const status = entry.status;
  // Servers from before mid-2023 write no status: an entry there means the prompt ran.
  if (!status) return 'done';
  if (status.status_str === 'error') {
    const messages = status.messages ?? [];
    const failure = messages.find(([type]) => type === 'execution_error' || type === 'execution_interrupted');
    if (failure) throw executionFailure(label, failure[0], failure[1] ?? {});
    throw new TaskFailure('upstream_error', `${label}: the workflow failed on the ComfyUI server.`);
  }
  return status.completed === false ? 'pending' : 'done';
}

function filesOf(output: Readonly<Record<string, unknown>>): OutputFile[] {
  const files: OutputFile[] = [];
  for (const list of Object.values(output)) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      if (item === null || typeof item !== 'object') continue;
      const { filename, subfolder, type } = item as Record<string, unknown>;
      if (typeof filename !== 'string' || filename === '') continue;
      files.push({
        filename,
        subfolder: typeof subfolder === 'string' ? subfolder : '',
        type: typeof type === 'string' && type !== '' ? type : 'output',
      });
    }
  }
  return files;
}

export function isVideoFile(file: OutputFile): boolean {
  return VIDEO_EXTENSIONS.has(extname(file.filename).toLowerCase());
}

/**
 * The video among a finished prompt's outputs: `outputNode`'s first video file (or its first file of any
 * kind), else the first video file of any node.
 */
export function pickOutputFile(
  entry: HistoryEntry,
  outputNode: string | undefined,
  label: string,
): OutputFile {
  const outputs = entry.outputs ?? {};
  if (outputNode !== undefined) {
    const output = outputs[outputNode];
    const files = output ? filesOf(output) : [];
    const file = files.find(isVideoFile) ?? files[0];
    if (!file) {
      throw new TaskFailure(
        'upstream_error',
        `${label}: the workflow's output node ${outputNode} produced no file (nodes with output: ${Object.keys(outputs).join(', ') || 'none'}).`,
      );
    }
    return file;
  }
  const all = Object.values(outputs).flatMap(filesOf);
  const video = all.find(isVideoFile);
  if (!video) {
    const seen = all.map((file) => file.filename).slice(0, 5);
    throw new TaskFailure(
      'upstream_error',
      `${label}: the workflow produced no video file (${seen.length > 0 ? `only ${seen.join(', ')}` : 'no output files'}); add a video-saving node such as VHS_VideoCombine or SaveVideo, or set output_node.`,
    );
  }
  return video;
}
