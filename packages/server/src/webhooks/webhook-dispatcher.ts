/**
 * Sends queued callbacks. It claims due deliveries from the store's outbox, signs and posts them, and records
 * each attempt. Concurrency is bounded overall and per receiver host, and a host at its limit is left out of
 * the next claim, so one slow or dead receiver holds at most its own slots and never delays the others.
 *
 * Per delivery, the store sees a share of one claim and of one commit: a receiver's claims take up to four times
 * its in-flight limit, the rest ready to start as attempts end; a receiver is claimed for alone once none of
 * its claimed deliveries is left waiting; a slot is free again once its receiver has answered, and outcomes
 * are committed in groups (attempt-recorder.ts); the account's secrets come from a cache of at most a second
 * (signing-secrets.ts).
 * A claim of every receiver runs when a delivery is queued (`notify`), after a full claim, and at least every
 * `pollIntervalMs`, so that a busy receiver's claims do not keep others' deliveries waiting.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { type DeliveryRecord, deliveryBody } from '../domain/delivery.js';
import type { Metrics } from '../metrics.js';
import type { DeliveryClaim, DeliveryOutcome, DeliveryStore } from '../ports/store.js';
import { settlesWithin } from '../process/settles-within.js';
import type { ResultUrl } from '../tasks/result-links.js';
import { type RunTimeEstimates, taskInfoContext } from '../tasks/run-time-estimates.js';
import { VERSION } from '../version.js';
import { AttemptRecorder } from './attempt-recorder.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, retryDelay } from './retry-policy.js';
import { type AttemptResult, sendWebhook } from './send-webhook.js';
import { SigningSecrets } from './signing-secrets.js';
import { signatureHeader } from './webhook-signature.js';

export const USER_AGENT = `videogen/${VERSION} (webhooks)`;

/** Time allowed beyond an attempt's own limit for signing and recording it. */
const LEASE_MARGIN_MS = 5_000;

/**
 * Deliveries claimed per slot, in flight or ready to follow: a claim for a receiver that has used up its ready
 * ones takes about three per slot (1 in 12 deliveries of a busy receiver is a claim, from 1 in 1; at twice,
 * 1 in 4, throughput was half). With the same factor overall, the count of hanging receivers that holds up
 * the others stays `concurrency / perHostConcurrency`.
 */
const CLAIMS_PER_SLOT = 4;

/** How long outcomes are collected before their group is committed (attempt-recorder.ts). */
const RECORDING_GROUP_MS = 5;

export interface WebhookDispatcherOptions {
  readonly store: DeliveryStore;
  /** The guarded outbound dispatcher shared with asset downloads. */
  readonly dispatcher: Dispatcher;
  readonly logger: Logger;
  /** The signed result link of a completed task, made when its callback is sent. */
  readonly resultUrl: ResultUrl;
  /** The prices' currency, for the `usage.cost` of the body (domain/task-info.ts); none without prices. */
  readonly currency?: string | undefined;
  /** The models' recent run times, for the `task_info.estimated_time` of a body sent while the task ran. */
  readonly runTimes?: RunTimeEstimates;
  /**
   * Deliveries in flight at once in this process. With `perHostConcurrency` it bounds how many stuck receivers
   * it takes before others wait: 64 / 4 = 16 receivers all hanging at once.
   */
  readonly concurrency?: number;
  /** Deliveries in flight at once to one receiver (`host:port`). */
  readonly perHostConcurrency?: number;
  /** One attempt's limit, response included (docs/decisions.md#callbacks: 15 s). */
  readonly timeoutMs?: number;
  readonly pollIntervalMs?: number;
  readonly retry?: RetryPolicy;
  readonly metrics?: Metrics;
  /** Epoch milliseconds for the signing secrets' cache; injectable so that its lifetime can be tested. */
  readonly now?: () => number;
}

interface Ready {
  readonly delivery: DeliveryRecord;
  /** `performance.now()` when it was claimed. */
  readonly claimedAt: number;
}

interface InFlight {
  readonly host: string;
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

export class WebhookDispatcher {
  readonly workerId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}-webhooks`;
  readonly #store: DeliveryStore;
  readonly #options: WebhookDispatcherOptions;
  readonly #concurrency: number;
  readonly #perHost: number;
  readonly #timeoutMs: number;
  /**
   * A claim's lease: an attempt's limit (the request, signing and recording the outcome) plus as long again for
   * waiting ready, so that only a sender that died lets it lapse; then the delivery is due again. A ready
   * delivery that has waited longer than that is handed back unsent (`#startReady`).
   */
  readonly #leaseMs: number;
  /** Attempts whose request is under way. */
  readonly #inFlight = new Set<InFlight>();
  /** Attempts not yet recorded: under way, or answered and waiting for their group to commit. */
  readonly #unfinished = new Set<InFlight>();
  /** Claimed, waiting for a slot at their receiver, oldest claim first. */
  #ready: Ready[] = [];
  readonly #recorder: AttemptRecorder;
  readonly #secrets: SigningSecrets;
  #wake: (() => void) | undefined;
  /** Set by `notify` (and at start), so that a wake-up arriving while a claim is under way is not lost. */
  #claimAll = true;
  /** When the last claim of every receiver began (`performance.now()`). */
  #claimedAllAt = Number.NEGATIVE_INFINITY;
  /** Receivers an attempt to which has ended since their last claim: each has room again. */
  readonly #freedHosts = new Set<string>();
  #loop: Promise<void> | undefined;
  #stopping = false;

  constructor(options: WebhookDispatcherOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#concurrency = options.concurrency ?? 64;
    this.#perHost = options.perHostConcurrency ?? 4;
    this.#timeoutMs = options.timeoutMs ?? 15_000;
    this.#leaseMs = 2 * this.#timeoutMs + 2 * LEASE_MARGIN_MS;
    this.#recorder = new AttemptRecorder(options.store, RECORDING_GROUP_MS);
    this.#secrets = new SigningSecrets(
      (accountId) => options.store.getWebhookSecrets(accountId),
      options.now ?? Date.now,
    );
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** A delivery may have been queued: look now rather than at the next poll. */
  notify(): void {
    this.#claimAll = true;
    this.#wake?.();
  }

  /**
   * Stops claiming; deliveries claimed but not started are handed back uncounted, and attempts in flight get
   * `graceMs` to finish, then are abandoned uncounted.
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    this.notify();
    await this.#loop;
    const unsent = this.#ready;
    this.#ready = [];
    for (const { delivery } of unsent) {
      await this.#store.releaseDelivery(this.#claimOf(delivery)).catch(() => false);
    }
    const all = Promise.all([...this.#unfinished].map((f) => f.done));
    if (!(await settlesWithin(all, graceMs))) {
      for (const flight of this.#inFlight) flight.abort.abort();
      await all;
    }
  }

  /** Attempts started and not yet recorded. */
  get inFlight(): number {
    return this.#unfinished.size;
  }

  async #run(): Promise<void> {
    const pollIntervalMs = this.#options.pollIntervalMs ?? 1000;
    while (!this.#stopping) {
      if (this.#claimAll || performance.now() - this.#claimedAllAt >= pollIntervalMs) {
        this.#claimAll = false;
        this.#claimedAllAt = performance.now();
        // It takes the room of every receiver, those just freed included.
        this.#freedHosts.clear();
        // Again at once only after a full claim: a short one means nothing more is due that has room now, and
        // a finishing attempt or a new delivery will wake the loop when that changes.
        if (await this.#claimAndStart()) this.#claimAll = true;
      } else {
        const hosts = [...this.#freedHosts];
        this.#freedHosts.clear();
        for (const host of hosts) await this.#claimAndStart(host);
      }
      if (!this.#claimAll && this.#freedHosts.size === 0 && !this.#stopping) {
        await this.#sleep(Math.max(0, this.#claimedAllAt + pollIntervalMs - performance.now()));
      }
    }
  }

  /** Deliveries claimed by this process, in flight and ready, by host. */
  #hostClaims(): Map<string, number> {
    const claims = new Map<string, number>();
    for (const { host } of this.#inFlight) claims.set(host, (claims.get(host) ?? 0) + 1);
    for (const { delivery } of this.#ready) claims.set(delivery.host, (claims.get(delivery.host) ?? 0) + 1);
    return claims;
  }

  /**
   * Claims for every receiver with room, or for `host` alone, and starts what it may; true when the claim
   * filled every free place. Claims hold up to `CLAIMS_PER_SLOT` times the in-flight limits, overall and per
   * receiver: the rest wait, ready, for a slot, so that claims come once per batch rather than once per
   * delivery.
   */
  async #claimAndStart(host?: string): Promise<boolean> {
    const claims = this.#hostClaims();
    const perHostClaims = CLAIMS_PER_SLOT * this.#perHost;
    const free = Math.min(
      CLAIMS_PER_SLOT * this.#concurrency - this.#inFlight.size - this.#ready.length,
      // A claim of every receiver, which runs on every `notify`, takes no more than can start, as before:
      // its candidates are four times its limit. Receivers' own claims fill what waits.
      host === undefined ? this.#concurrency - this.#inFlight.size : perHostClaims - (claims.get(host) ?? 0),
    );
    if (free <= 0) return false;
    const full = [...claims].filter(([, count]) => count >= perHostClaims).map(([h]) => h);
    let claimed: DeliveryRecord[];
    try {
      claimed = await this.#store.claimDeliveries({
        workerId: this.workerId,
        leaseMs: this.#leaseMs,
        limit: free,
        excludeHosts: full,
        ...(host === undefined ? {} : { host }),
        perHostLimit: perHostClaims,
        hostsInFlight: Object.fromEntries(claims),
      });
    } catch (error) {
      this.#options.logger.error({ err: error }, 'claiming webhook deliveries failed');
      return false;
    }
    const claimedAt = performance.now();
    for (const delivery of claimed) {
      const count = claims.get(delivery.host) ?? 0;
      if (count >= perHostClaims) {
        // Only if the store ignored the per-host room (it is a hint); handed back uncounted.
        await this.#store.releaseDelivery(this.#claimOf(delivery)).catch(() => false);
        continue;
      }
      claims.set(delivery.host, count + 1);
      this.#ready.push({ delivery, claimedAt });
    }
    this.#startReady();
    return claimed.length === free;
  }

  /** Starts ready deliveries, oldest claim first, as far as the overall and per-receiver limits allow. */
  #startReady(): void {
    if (this.#ready.length === 0 || this.#stopping) return;
    const load = new Map<string, number>();
    for (const { host } of this.#inFlight) load.set(host, (load.get(host) ?? 0) + 1);
    const waiting: Ready[] = [];
    for (const ready of this.#ready) {
      const { delivery } = ready;
      const count = load.get(delivery.host) ?? 0;
      if (this.#inFlight.size >= this.#concurrency || count >= this.#perHost) {
        waiting.push(ready);
        continue;
      }
      if (performance.now() - ready.claimedAt > this.#leaseMs - this.#timeoutMs - LEASE_MARGIN_MS) {
        // Waited so long that its claim could lapse during the attempt (receivers hanging everywhere): handed
        // back uncounted rather than sent while another sender may claim it.
        void this.#store.releaseDelivery(this.#claimOf(delivery)).catch(() => false);
        continue;
      }
      load.set(delivery.host, count + 1);
      this.#launch(delivery);
    }
    this.#ready = waiting;
  }

  #launch(delivery: DeliveryRecord): void {
    const claim = this.#claimOf(delivery);
    const abort = new AbortController();
    // The receiver's slot is free once it has answered: recording the outcome is no request to it.
    const answered = () => {
      if (!this.#inFlight.delete(flight)) return;
      this.#startReady();
      // More for this receiver once none of its claimed deliveries is left waiting.
      if (!this.#ready.some((ready) => ready.delivery.host === delivery.host)) {
        this.#freedHosts.add(delivery.host);
        this.#wake?.();
      }
    };
    const flight: InFlight = {
      host: delivery.host,
      abort,
      done: this.#attempt(delivery, claim, abort.signal, answered)
        .catch((error: unknown) =>
          this.#options.logger.error({ err: error, delivery_id: delivery.id }, 'webhook attempt failed'),
        )
        .finally(() => {
          answered();
          this.#unfinished.delete(flight);
        }),
    };
    this.#inFlight.add(flight);
    this.#unfinished.add(flight);
  }

  #claimOf(delivery: DeliveryRecord): DeliveryClaim {
    return { deliveryId: delivery.id, attempt: delivery.attemptCount, workerId: this.workerId };
  }

  async #attempt(
    delivery: DeliveryRecord,
    claim: DeliveryClaim,
    signal: AbortSignal,
    answered: () => void,
  ): Promise<void> {
    const log = this.#options.logger.child({
      delivery_id: delivery.id,
      task_id: delivery.taskId,
      event: delivery.event,
      attempt: claim.attempt,
    });
    const secrets = await this.#secrets.of(delivery.accountId);
    const { payload } = delivery;
    const completed = payload.status === 'completed';
    const resultUrl = completed ? await this.#options.resultUrl(payload.id) : undefined;
    const lastFrameUrl =
      completed && payload.return_last_frame
        ? await this.#options.resultUrl(payload.id, undefined, 'last_frame')
        : undefined;
    const context = await taskInfoContext(payload, this.#options.runTimes, this.#options.currency);
    const body = JSON.stringify(deliveryBody(payload, resultUrl, lastFrameUrl, context));
    const timestamp = Math.floor(Date.now() / 1000);
    const result: AttemptResult =
      secrets.length === 0
        ? {
            attemptedAt: Date.now(),
            durationMs: 0,
            httpStatus: null,
            error: 'the account has no webhook signing secret',
            verdict: 'retry',
          }
        : await sendWebhook(
            {
              url: delivery.url,
              headers: {
                'content-type': 'application/json',
                'user-agent': USER_AGENT,
                'webhook-id': delivery.id,
                'webhook-timestamp': String(timestamp),
                'webhook-signature': signatureHeader(secrets, delivery.id, timestamp, body),
              },
              body,
            },
            { dispatcher: this.#options.dispatcher, timeoutMs: this.#timeoutMs, signal },
          );

    answered();
    if (result.verdict === 'interrupted') {
      this.#options.metrics?.callbackAttempts.inc({ outcome: 'interrupted' });
      await this.#store.releaseDelivery(claim);
      log.info('webhook attempt interrupted by shutdown; it will be sent again');
      return;
    }
    const outcome = this.#outcome(result, claim.attempt);
    this.#options.metrics?.callbackAttempts.inc({
      outcome:
        outcome.status === 'succeeded' ? 'delivered' : outcome.status === 'failed' ? 'failed' : 'retry',
    });
    const recorded = await this.#recorder.record({
      claim,
      attempt: {
        attemptedAt: result.attemptedAt,
        durationMs: result.durationMs,
        httpStatus: result.httpStatus,
        error: result.error,
      },
      outcome,
    });
    const fields = {
      http_status: result.httpStatus ?? undefined,
      error: result.error ?? undefined,
      ms: result.durationMs,
      outcome: outcome.status,
      next_attempt_at:
        outcome.status === 'pending' ? new Date(outcome.nextAttemptAt).toISOString() : undefined,
    };
    if (!recorded) log.warn(fields, 'webhook attempt finished after its claim lapsed; not recorded');
    else if (outcome.status === 'succeeded') log.info(fields, 'webhook delivered');
    else
      log.warn(fields, outcome.status === 'failed' ? 'webhook delivery gave up' : 'webhook attempt failed');
  }

  #outcome(result: AttemptResult, attempt: number): DeliveryOutcome {
    if (result.verdict === 'delivered') return { status: 'succeeded' };
    if (result.verdict === 'gone') return { status: 'failed' };
    const delay = retryDelay(this.#options.retry ?? DEFAULT_RETRY_POLICY, attempt, result.retryAfterMs);
    return delay === undefined
      ? { status: 'failed' }
      : { status: 'pending', nextAttemptAt: Date.now() + delay };
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}
