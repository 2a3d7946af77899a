/**
 * The base of every engine whose work is a job on another server (a hosted provider, a model server, another
 * videogen): it owns the job's lifecycle, the same for all of them, and each engine supplies only its own
 * calls. Submit the job (or resume the one an earlier run submitted), poll it until it ends (hosted-task.ts:
 * backoff, the time limit, cancelling it upstream on every way out but its end unless it is stored with the
 * task), then download the video it made into the job's work directory (an upstream's URL may expire and is
 * never handed to a client) and conform it to the job. Generation is 90 % of the progress, downloading and
 * conforming the rest. The engine's key is kept out of every message, the check's included.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import { conformVideo } from '../../media/conform-video.js';
import type { Engine, RenderContext, RenderJob } from '../../ports/engine.js';
import { type EngineContext, pollDispatcherOf } from '../engine-context.js';
import { jobVideoTarget } from '../job-video-target.js';
import { withoutSecret } from '../redact-secret.js';
import type { UpstreamOptions } from '../upstream-request.js';
import { type HostedStatus, runHostedTask } from './hosted-task.js';

const GENERATION_SHARE = 0.9;
const DOWNLOADED = 0.93;

/** What bounds one render's calls: read `deadline` at each use, as it moves once the upstream has the job. */
export interface UpstreamCalls {
  readonly signal: AbortSignal;
  /** When the task's time limit runs out (epoch ms). */
  readonly deadline: number;
}

/** An engine's own calls for one job. */
export interface RemoteJobSteps<R> {
  /** Creates the job upstream; resolves with the upstream's id for it, and whatever else polls and cancels it. */
  submit(): Promise<UpstreamHandle>;
  /** From the handle alone: the next run of the task may be another process's. */
  poll(job: UpstreamHandle): Promise<HostedStatus<R>>;
  /** Writes the video `result` (what the poll that saw the job succeed gave) points at to `path`. */
  download(result: R, path: string): Promise<void>;
  /**
   * Follows the job by other means than polls while it runs (ComfyUI's websocket), from when it is submitted or
   * resumed: reports its progress, and wakes the next poll when the job may have ended. Returns what stops it.
   */
  watch?(job: UpstreamHandle, events: JobEvents): () => void;
}

/** What a job's watcher tells the run. */
export interface JobEvents {
  /** 0..1 of the generation. */
  progress(fraction: number): void;
  /** The job may have changed: poll it now rather than when the pause ends. */
  wake(): void;
}

export abstract class RemoteJobEngine<R> implements Engine {
  readonly #name: string;
  /** Names the engine in messages: `ark engine "seedance"`. */
  protected readonly label: string;
  protected readonly context: EngineContext;

  constructor(type: string, name: string, context: EngineContext) {
    this.#name = name;
    this.label = `${type} engine "${name}"`;
    this.context = context;
  }

  get name(): string {
    return this.#name;
  }

  /** The engine's key, kept out of every message; undefined for an upstream without one. */
  protected abstract get secret(): string | undefined;

  /** How often a young job is polled (hosted-task.ts slows it down as the job ages). */
  protected abstract get pollIntervalMs(): number;

  /** The calls that make, follow and fetch `job` upstream. */
  protected abstract steps(job: RenderJob, calls: UpstreamCalls): RemoteJobSteps<R>;

  /** Cancels a job from its handle alone: best effort, within its own short time limit; never rejects. */
  protected abstract cancelUpstream(job: UpstreamHandle): Promise<void>;

  /**
   * Whether the engine's model makes a soundtrack of its own when the job asks (`generate_audio`), which
   * conforming then keeps: its capabilities' `audio`. An engine whose model makes none has its tracks removed
   * unless the request had an audio reference.
   */
  protected get modelSound(): boolean {
    return false;
  }

  /** Whether the upstream can take work now (ports/engine.ts `check`). */
  protected abstract checkUpstream(signal: AbortSignal): Promise<void>;

  cancelJob(job: UpstreamHandle): Promise<void> {
    return this.cancelUpstream(job);
  }

  /** Options for a call of one render, through the engine's dispatcher; its deadline read at each use. */
  protected upstream(calls: UpstreamCalls): UpstreamOptions {
    return {
      label: this.label,
      signal: calls.signal,
      get deadline() {
        return calls.deadline;
      },
      dispatcher: this.context.dispatcher,
    };
  }

  /** The same for a poll, within the engine's request budget (engine-context.ts). */
  protected polling(calls: UpstreamCalls): UpstreamOptions {
    // Assigned, not spread: a spread would read the deadline once, here.
    return Object.assign(this.upstream(calls), { dispatcher: pollDispatcherOf(this.context) });
  }

  async check(signal: AbortSignal): Promise<void> {
    try {
      await this.checkUpstream(signal);
    } catch (error) {
      throw withoutSecret(error, this.secret);
    }
  }

  async render(job: RenderJob, context: RenderContext): Promise<void> {
    const { signal } = context;
    signal.throwIfAborted();
    let reported = 0;
    const progress = (fraction: number): void => {
      if (fraction <= reported) return;
      reported = fraction;
      context.onProgress(fraction);
    };
    const calls: UpstreamCalls = {
      signal,
      get deadline() {
        return context.deadline;
      },
    };
    try {
      await mkdir(job.workDir, { recursive: true });
      await mkdir(dirname(job.outputPath), { recursive: true });
      const steps = this.steps(job, calls);
      const woken = new Wakeups();
      let stopWatching: (() => void) | undefined;
      const follow = (upstreamJob: UpstreamHandle): void => {
        stopWatching = steps.watch?.(upstreamJob, {
          progress: (fraction) => progress(GENERATION_SHARE * Math.min(1, Math.max(0, fraction))),
          wake: () => woken.wake(),
        });
      };
      if (context.resume) follow(context.resume);
      const pause = (ms: number, pauseSignal: AbortSignal): Promise<void> =>
        woken.pause(
          (until) => context.pauseBeforePoll?.(ms, until) ?? sleep(ms, undefined, { signal: until }),
          pauseSignal,
        );
      const result = await runHostedTask(
        {
          submit: steps.submit,
          poll: steps.poll,
          cancel: (upstreamJob) => this.cancelUpstream(upstreamJob),
        },
        {
          label: this.label,
          signal,
          get deadline() {
            return context.deadline;
          },
          pollIntervalMs: this.pollIntervalMs,
          onProgress: (fraction) => progress(GENERATION_SHARE * fraction),
          onAccepted: async (accepted) => {
            follow(accepted);
            await context.onAccepted?.(accepted);
          },
          ...(context.resume ? { resume: context.resume } : {}),
          handsOver: () => context.handsOver?.() ?? false,
          pauseBeforePoll: pause,
        },
      ).finally(() => stopWatching?.());
      progress(GENERATION_SHARE);
      await context.upstreamDone?.();
      const raw = join(job.workDir, 'upstream-video');
      await steps.download(result, raw);
      progress(DOWNLOADED);
      await conformVideo(raw, job.outputPath, jobVideoTarget(job, this.modelSound), {
        signal,
        label: this.label,
        ffmpegPath: this.context.ffmpegPath,
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw withoutSecret(error, this.secret);
    }
    progress(1);
  }
}

/** Ends a pause between polls early when the job's watcher says it may have changed. */
class Wakeups {
  #woken: AbortController | undefined;
  /** A wake that came while no pause was under way: the next pause ends at once. */
  #missed = false;

  wake(): void {
    if (this.#woken) this.#woken.abort();
    else this.#missed = true;
  }

  /** Runs the pause `pausing` starts, ended early (resolving) by a wake; rejects as it does when `signal` aborts. */
  async pause(pausing: (until: AbortSignal) => Promise<void>, signal: AbortSignal): Promise<void> {
    if (this.#missed) {
      this.#missed = false;
      return;
    }
    const woken = new AbortController();
    this.#woken = woken;
    try {
      await pausing(AbortSignal.any([signal, woken.signal]));
    } catch (error) {
      if (signal.aborted || !woken.signal.aborted) throw error;
    } finally {
      this.#woken = undefined;
    }
  }
}
