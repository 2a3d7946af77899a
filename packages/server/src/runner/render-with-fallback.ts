/**
 * Renders a claimed task on the engine its claim chose, and moves it along its route (fallback) when that engine
 * is unavailable before it accepted the job: the submission kept failing (`upstream_unavailable`), or it did
 * not accept within its accept timeout. Once an engine accepted, the task stays with it whatever happens (the
 * upstream may still finish the job, and nobody must pay for it twice). A content refusal (`upstream_refused`)
 * moves on only when the engines file says so. Each outcome feeds the engine's circuit breaker.
 *
 * The client sees one task: progress only rises (the reporter ignores a new engine's lower figures), the
 * `processing` callback was queued once at the claim, and the result is the last engine's.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type EngineRoute, routeEngines } from '../domain/engine-route.js';
import { TaskFailure } from '../domain/errors.js';
import type { TaskRecord } from '../domain/task.js';
import type { UpstreamJob } from '../domain/upstream-job.js';
import type { Metrics } from '../metrics.js';
import type { Engine, RenderJob } from '../ports/engine.js';
import type { EngineRouter } from '../ports/engine-router.js';
import type { Claim, ClaimStore, RoutingStore } from '../ports/store.js';
import { describeDuration, type RunDeadline } from './run-deadline.js';
import type { RunDirectory } from './run-directory.js';

/** How often a task whose next engines are all at their cap looks again. */
const CAPACITY_RETRY_MS = 1000;

/** The reason an engine's attempt was stopped: it had not accepted the job in time. */
class AcceptTimeout extends TaskFailure {
  constructor(engine: string, ms: number) {
    super(
      'upstream_unavailable',
      `Engine "${engine}" did not accept the job within ${Math.round(ms / 1000)} s.`,
    );
    this.name = 'AcceptTimeout';
  }
}

export interface FallbackDependencies {
  readonly store: RoutingStore & Pick<ClaimStore, 'recordUpstreamJob'>;
  readonly engines: EngineRouter;
  readonly leaseMs: number;
  readonly logger: Logger;
  readonly metrics?: Metrics;
}

export interface FallbackRun {
  readonly task: TaskRecord;
  readonly claim: Claim;
  /** The job without its output path and work directory, which each engine gets anew. */
  readonly job: Omit<RenderJob, 'outputPath' | 'workDir' | 'lastFramePath'>;
  /** Where each engine gets a working directory of its own. */
  readonly directory: RunDirectory;
  readonly signal: AbortSignal;
  /** Moved here to the engine's job time limit while its upstream works, and back to the task's after. */
  readonly deadline: RunDeadline;
  /** The worker's own time limit for a phase of the task (`VIDEOGEN_TASK_TIMEOUT_SECONDS`). */
  readonly taskTimeoutMs: number;
  onProgress(fraction: number): void;
  /** The run's render slot: let go while a remote engine's upstream works, taken again for the result. */
  readonly machine?: { release(): void; reacquire(signal: AbortSignal): Promise<void> };
  /** The pause before an upstream job's next poll, which a provider's callback ends early (job-wakeups.ts). */
  pauseBeforePoll?(ms: number, signal: AbortSignal): Promise<void>;
}

/**
 * Renders the task; resolves with the engine that made the video, where the video is, and where the engine
 * may have written the upstream's picture of its last frame (when the request asked for it).
 */
export async function renderWithFallback(
  run: FallbackRun,
  deps: FallbackDependencies,
): Promise<{ engine: string; outputPath: string; lastFramePath?: string }> {
  const { task } = run;
  const route: EngineRoute = deps.engines.routeFor(task.model) ?? [];
  // A job an earlier run submitted is resumed on the engine that has it, whatever the route says now.
  const resumed = task.upstreamJob ?? undefined;
  let engineName = resumed?.engine ?? task.engine ?? route[0]?.[0]?.engine;
  const tried = new Set<string>();
  for (;;) {
    const engine = engineName === undefined ? undefined : deps.engines.engine(engineName);
    if (!engine || engineName === undefined) {
      throw new TaskFailure(
        'internal_error',
        resumed
          ? `The task's job was submitted to engine "${resumed.engine}", which is no longer configured.`
          : `No engine is configured for ${task.model}.`,
      );
    }
    tried.add(engineName);
    const workDir = await run.directory.engine(tried.size);
    const outputPath = join(workDir, 'output.mp4');
    const lastFramePath = task.params.return_last_frame ? join(workDir, 'upstream-last-frame') : undefined;
    const resume = tried.size === 1 ? resumed : undefined;
    const canMoveOn = !resume && routeEngines(route).some((name) => !tried.has(name));
    const acceptMs = canMoveOn ? deps.engines.acceptTimeoutMs(engineName) : undefined;
    const attempt = await attemptRender(
      engine,
      { ...run, workDir, outputPath, resume, ...(lastFramePath && { lastFramePath }) },
      acceptMs,
      deps,
    );
    if (attempt.ok) {
      await feedCircuit(deps, engineName, 'succeeded');
      return { engine: engineName, outputPath, ...(lastFramePath && { lastFramePath }) };
    }
    const { failure, accepted } = attempt;
    const unavailable = failure instanceof TaskFailure && failure.code === 'upstream_unavailable';
    if (unavailable) await feedCircuit(deps, engineName, 'unavailable');
    const refused = failure instanceof TaskFailure && failure.code === 'upstream_refused';
    const movesOn = (unavailable && !accepted) || (refused && deps.engines.policy.fallbackOnRefusal);
    if (!movesOn || !canMoveOn) throw failure;
    const next = await nextEngine(run, route, tried, deps);
    if (next === undefined) throw failure;
    deps.logger.warn(
      { from_engine: engineName, to_engine: next, reason: failure instanceof Error ? failure.message : '' },
      'engine unavailable; moving the task to the next engine of its route',
    );
    deps.metrics?.engineFallbacks.inc({ model: task.model, from_engine: engineName, to_engine: next });
    engineName = next;
  }
}

type Attempt =
  | { readonly ok: true }
  | { readonly ok: false; readonly failure: unknown; readonly accepted: boolean };

async function attemptRender(
  engine: Engine,
  run: FallbackRun & {
    readonly workDir: string;
    readonly outputPath: string;
    readonly lastFramePath?: string;
    /** The job an earlier run submitted to this engine. */
    readonly resume: UpstreamJob | undefined;
  },
  /** How long the engine has to accept the job; undefined: the task's whole time limit. */
  acceptMs: number | undefined,
  deps: FallbackDependencies,
): Promise<Attempt> {
  // A stop that came during the steps before this attempt (assets, the reroute): an abort event already fired
  // never reaches a listener added now, so the engine would wait for it for ever.
  run.signal.throwIfAborted();
  const attempt = new AbortController();
  const forward = () => attempt.abort(run.signal.reason);
  run.signal.addEventListener('abort', forward, { once: true });
  let accepted = run.resume !== undefined;
  // Whether the store has the job: from then on the task's end decides it, not this attempt's.
  let stored = run.resume !== undefined;
  const acceptTimer =
    acceptMs !== undefined
      ? setTimeout(() => {
          if (!accepted) attempt.abort(new AcceptTimeout(engine.name, acceptMs));
        }, acceptMs)
      : undefined;
  const jobTimeoutMs = deps.engines.jobTimeoutMs(engine.name);
  const upstreamWorks = (submittedAt: number) =>
    run.deadline.moveTo(
      submittedAt + jobTimeoutMs,
      `The job upstream on engine "${engine.name}" did not finish within ${describeDuration(jobTimeoutMs)} of its submission`,
    );
  // A resumed job is upstream already: the slot is not the run's until the job is done.
  if (run.resume) {
    upstreamWorks(run.resume.submittedAt);
    run.machine?.release();
  }
  const { deadline } = run;
  try {
    await engine.render(
      {
        ...run.job,
        outputPath: run.outputPath,
        workDir: run.workDir,
        ...(run.lastFramePath && { lastFramePath: run.lastFramePath }),
      },
      {
        signal: attempt.signal,
        // Read at each use: the limit moves with the phase.
        get deadline() {
          return deadline.at;
        },
        onProgress: run.onProgress,
        onAccepted: async (handle) => {
          accepted = true;
          clearTimeout(acceptTimer);
          if (!handle) return;
          const job: UpstreamJob = { ...handle, engine: engine.name, submittedAt: Date.now() };
          stored = await storeJob(deps, run.claim, job);
          if (stored) upstreamWorks(job.submittedAt);
          run.machine?.release();
        },
        upstreamDone: async () => {
          if (stored) {
            deadline.moveTo(
              Date.now() + run.taskTimeoutMs,
              `The result of the job on engine "${engine.name}" was not fetched and stored within ${describeDuration(run.taskTimeoutMs)}`,
            );
          }
          await run.machine?.reacquire(attempt.signal);
        },
        ...(run.resume && { resume: run.resume }),
        handsOver: () => stored,
        ...(run.pauseBeforePoll && { pauseBeforePoll: run.pauseBeforePoll }),
      },
    );
    run.signal.throwIfAborted();
    return { ok: true };
  } catch (error) {
    // The task itself was stopped (cancel, lease lost, shutdown, time limit): the caller handles that.
    if (run.signal.aborted) throw run.signal.reason;
    const reason: unknown = attempt.signal.aborted ? attempt.signal.reason : undefined;
    return { ok: false, failure: reason instanceof AcceptTimeout ? reason : error, accepted };
  } finally {
    clearTimeout(acceptTimer);
    run.signal.removeEventListener('abort', forward);
  }
}

/** Stores the job the engine's upstream accepted; false when it could not be (the job then ends with this run). */
async function storeJob(deps: FallbackDependencies, claim: Claim, job: UpstreamJob): Promise<boolean> {
  try {
    const stored = await deps.store.recordUpstreamJob(claim, job);
    if (!stored)
      deps.logger.warn({ upstream_id: job.id }, 'the claim was lost before the upstream job was stored');
    return stored;
  } catch (error) {
    deps.logger.warn({ err: error, upstream_id: job.id }, 'could not store the upstream job');
    return false;
  }
}

/** The next engine for the task, waiting while the usable ones are all at their cap; undefined when none is left. */
async function nextEngine(
  run: FallbackRun,
  route: EngineRoute,
  tried: ReadonlySet<string>,
  deps: FallbackDependencies,
): Promise<string | undefined> {
  for (;;) {
    const choice = await deps.store.rerouteTask(run.claim, route, tried, {
      maxConcurrency: deps.engines.maxConcurrency(),
      circuit: deps.engines.policy.circuit,
      leaseMs: deps.leaseMs,
    });
    if (choice.kind === 'engine') return choice.engine;
    if (choice.kind === 'none') return undefined;
    const remaining = run.deadline.at - Date.now();
    if (remaining <= 0) return undefined;
    await sleep(Math.min(CAPACITY_RETRY_MS, remaining), undefined, { signal: run.signal }).catch(() => {
      throw run.signal.reason;
    });
  }
}

async function feedCircuit(
  deps: FallbackDependencies,
  engine: string,
  outcome: 'succeeded' | 'unavailable',
): Promise<void> {
  await deps.store
    .recordEngineOutcome(engine, outcome, deps.engines.policy.circuit)
    .catch((error: unknown) => {
      deps.logger.warn({ err: error, engine }, 'could not record the engine outcome for its circuit breaker');
    });
}
