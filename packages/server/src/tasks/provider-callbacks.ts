/**
 * A provider's callback (`POST /v1/provider-callbacks/{engine}`): verified by the engine's verifier (its
 * signature, or for Ark, which signs nothing, only its shape), then the processing task whose stored upstream job
 * it names is found, and the job's next poll is made to happen now in whichever process follows it (the `polls`
 * work signal, hinted with the task's id: runner/job-wakeups.ts). Nothing else in the delivery is used: the poll
 * reads the job back from the provider, and polling stays the source of truth (docs/engines/README.md#provider-callbacks).
 *
 * A delivery for a job no processing task has (a finished one, another installation's, a made-up id) is taken
 * and changes nothing, answered like any other so that the provider stops sending it and a prober learns nothing.
 */
import { ApiError } from '../domain/errors.js';
import type { CallbackDelivery, CallbackVerifier } from '../ports/provider-callback.js';
import type { UpstreamJobStore } from '../ports/store.js';

/** A delivery that could not be verified for want of the provider's keys is asked for again after this. */
const UNVERIFIABLE_RETRY_SECONDS = 30;

export interface ProviderCallbacksDependencies {
  readonly store: UpstreamJobStore;
  /** By engine name: the engines with `callbacks: true`. */
  readonly verifiers: ReadonlyMap<string, CallbackVerifier>;
  /** Makes the next poll of `taskId`'s job happen now, wherever it is followed. Must not throw. */
  wake(taskId: string): void;
}

/** What a delivery that was taken did, for the log. */
export interface TakenCallback {
  readonly upstreamId: string;
  /** The task woken, or undefined when no processing task has the job. */
  readonly taskId: string | undefined;
}

export class ProviderCallbacks {
  readonly #deps: ProviderCallbacksDependencies;

  constructor(deps: ProviderCallbacksDependencies) {
    this.#deps = deps;
  }

  /** Whether `engine` takes callbacks here. */
  has(engine: string): boolean {
    return this.#deps.verifiers.has(engine);
  }

  /**
   * Takes a delivery for `engine`. Throws `not_found` (no such engine with callbacks),
   * `invalid_callback_signature`, `invalid_json` (not the provider's delivery), or `upstream_unavailable` (the
   * provider's keys could not be fetched to check it).
   */
  async receive(engine: string, delivery: CallbackDelivery): Promise<TakenCallback> {
    const verifier = this.#deps.verifiers.get(engine);
    if (!verifier) {
      throw new ApiError('not_found', `No engine named "${engine}" takes provider callbacks here.`);
    }
    const verdict = await verifier.verify(delivery);
    switch (verdict.kind) {
      case 'bad_signature':
        throw new ApiError('invalid_callback_signature', verdict.message);
      case 'bad_body':
        throw new ApiError('invalid_json', verdict.message);
      case 'unverifiable':
        throw new ApiError(
          'upstream_unavailable',
          `The delivery could not be verified now: ${verdict.message} Send it again later.`,
          { retryAfterSeconds: UNVERIFIABLE_RETRY_SECONDS },
        );
      case 'job':
        break;
    }
    const taskId = await this.#deps.store.findUpstreamJobTask(engine, verdict.upstreamId);
    if (taskId !== undefined) this.#deps.wake(taskId);
    return { upstreamId: verdict.upstreamId, taskId };
  }
}
