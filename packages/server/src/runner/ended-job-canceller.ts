/**
 * Cancels upstream the jobs of tasks that failed while their job ran (the client's cancel, the time limit, a
 * worker lost for good, a provider that stopped answering), whichever process ran them: an engine leaves a job
 * stored with its task alone (ports/engine.ts `handsOver`), so that a shutdown or a lost lease hands it over,
 * and the task's end decides it here. Each job is taken from the store once, by one worker.
 */
import type { Logger } from 'pino';
import { routeEngines } from '../domain/engine-route.js';
import type { EngineRouter } from '../ports/engine-router.js';
import type { ClaimStore } from '../ports/store.js';

/** Jobs taken at a time. */
const BATCH = 20;

export interface EndedJobCancellerOptions {
  readonly store: Pick<ClaimStore, 'takeEndedUpstreamJobs'>;
  readonly engines: EngineRouter;
  readonly logger: Logger;
}

export class EndedJobCanceller {
  readonly #options: EndedJobCancellerOptions;
  /** The engines of this process's routes that can cancel a job: whose jobs it takes. */
  readonly #cancelling: string[];
  #running: Promise<void> | undefined;
  #again = false;

  constructor(options: EndedJobCancellerOptions) {
    this.#options = options;
    const { engines } = options;
    const names = new Set([...engines.routes().values()].flatMap((route) => routeEngines(route)));
    this.#cancelling = [...names].filter((name) => engines.engine(name)?.cancelJob !== undefined);
  }

  /** Looks for such jobs now (or once more after the look under way). */
  trigger(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#cancelAll().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.trigger();
      }
    });
  }

  /** Waits for the look under way. */
  async settle(): Promise<void> {
    this.#again = false;
    await this.#running;
  }

  async #cancelAll(): Promise<void> {
    const { store, engines, logger } = this.#options;
    for (;;) {
      const taken = await store.takeEndedUpstreamJobs(this.#cancelling, BATCH).catch((error: unknown) => {
        logger.warn({ err: error }, 'could not take the upstream jobs of failed tasks');
        return [];
      });
      await Promise.all(
        taken.map(async ({ taskId, job }) => {
          await engines
            .engine(job.engine)
            ?.cancelJob?.(job)
            .catch((error: unknown) =>
              logger.warn({ err: error, task_id: taskId }, 'cancelling upstream failed'),
            );
          logger.info({ task_id: taskId, engine: job.engine, upstream_id: job.id }, 'upstream job cancelled');
        }),
      );
      if (taken.length < BATCH) return;
    }
  }
}
