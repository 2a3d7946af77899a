/**
 * The `Engine` port: turns one generation into an MP4 file. Engines never touch the store; the runner
 * hands them downloaded assets and an output path, and reads progress and failures back.
 * Implementations, one per engine type (`engines/engine-types.ts` lists them): `local` (procedural renderer) and
 * `exec` (a command-line generator) render on this machine; the engines whose work is a job on another server
 * extend `engines/hosted/remote-job-engine.ts`: `openai` (an OpenAI-style `/v1/videos` server), `comfyui` (a
 * ComfyUI workflow), `relay` (another server of this API), and the hosted providers `ark`, `gemini`, `runway`,
 * `fal`, `replicate`. `engines/engines-file.ts` chooses them per model ID.
 */
import type { FrameSize } from '../domain/frame-size.js';
import type { GenerationParams } from '../domain/generation-request.js';
import type { AssetField, ModelDefinition } from '../domain/models.js';
import type { UpstreamHandle } from '../domain/upstream-job.js';

export interface LocalAsset {
  readonly field: AssetField;
  readonly index: number;
  /** The URL the client gave. */
  readonly url: string;
  /** Where the downloaded bytes are; empty for an `asset://` id (Ark's asset library), which is not downloaded. */
  readonly path: string;
  /** Set for images and videos. */
  readonly width?: number;
  readonly height?: number;
  /** Seconds, for videos and audio. */
  readonly duration?: number;
}

export interface RenderJob {
  readonly taskId: string;
  readonly model: ModelDefinition;
  readonly params: GenerationParams;
  /** Output size, `adaptive` already resolved. */
  readonly frame: FrameSize;
  readonly fps: number;
  readonly images: readonly LocalAsset[];
  readonly videos: readonly LocalAsset[];
  readonly audios: readonly LocalAsset[];
  /** Where the finished MP4 must be written. */
  readonly outputPath: string;
  /**
   * Set when the request asks for the video's last frame (`return_last_frame`): where an engine whose upstream
   * makes that picture itself (Ark's `last_frame_url`) writes it as it came. The runner brings it to the frame's
   * size; when nothing is written there, it takes the last frame from the video.
   */
  readonly lastFramePath?: string;
  /** A private scratch directory, removed by the runner afterwards. */
  readonly workDir: string;
}

export interface RenderContext {
  /** Aborted on cancel, lost lease, shutdown or the time limit: stop promptly and reject. */
  readonly signal: AbortSignal;
  /**
   * When the task's time limit runs out (epoch ms); the signal aborts then. Retries must not outlast it. Read it
   * at each use: once the job is accepted upstream and stored, it becomes the engine's job time limit.
   */
  readonly deadline: number;
  /** Fraction 0..1 of the render done. */
  onProgress(fraction: number): void;
  /**
   * Called once, when the upstream has taken the job (the model server answered the submission with a job id,
   * the command started, the local renderer began). Until then a failure to reach the upstream may move the
   * task to the next engine of its route; from then on it never does, since the upstream may still finish.
   * A remote engine passes the job's handle and waits for the promise: the handle is then stored with the
   * task, and the next run of the task resumes the job (`resume`) rather than submitting another.
   */
  onAccepted?(handle?: UpstreamHandle): void | Promise<void>;
  /**
   * A remote engine calls it when its upstream has finished the job, before it fetches and conforms the result,
   * and waits: the run let the machine's render slot go while the upstream worked, and takes one again here.
   */
  upstreamDone?(): Promise<void>;
  /** The job an earlier run of the task submitted: poll it to its end, never submit again (not even on failure). */
  readonly resume?: UpstreamHandle;
  /**
   * Whether the engine leaves the upstream job as it is on its way out, whatever ended the render: true once the
   * job is stored with the task, whose end then decides it (a later run resumes it after a shutdown or a lost
   * lease; a task that fails has its job cancelled through `cancelJob`). Otherwise, or absent, the engine cancels
   * the job upstream on every way out but its end, as nobody else knows of it.
   */
  handsOver?(): boolean;
  /**
   * Waits `ms` before the engine asks its upstream about the job again, ending early when a provider's callback
   * hinted that the job changed (runner/job-wakeups.ts); rejects with the signal's reason when it aborts. A
   * plain timer when absent.
   */
  pauseBeforePoll?(ms: number, signal: AbortSignal): Promise<void>;
}

export interface Engine {
  readonly name: string;
  /** Throws `TaskFailure` for failures the client should see; anything else is `generation_failed`. */
  render(job: RenderJob, context: RenderContext): Promise<void>;
  /**
   * Cancels upstream a job this engine submitted, from its handle alone (the run that submitted it may be
   * another process's, long gone): best effort, within its own short time limit; never rejects. Remote engines
   * have it.
   */
  cancelJob?(job: UpstreamHandle): Promise<void>;
  /**
   * Whether the engine can work now: its server answers, its command and files exist. Rejects with an Error
   * whose message says what is wrong (and never contains a secret). `videogen engines check` calls it.
   */
  check(signal: AbortSignal): Promise<void>;
}

/** Frames per second of every result (docs/decisions.md#result-videos). */
export const OUTPUT_FPS = 24;
