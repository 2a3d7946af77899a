/**
 * Sends queued callbacks. It claims due deliveries from the store's outbox, signs and posts them, and records
 * each attempt. Concurrency is bounded overall and per receiver host, and a host at its limit is left out of
 * the next claim, so one slow or dead receiver holds at most its own slots and never delays the others.
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
import { VERSION } from '../version.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, retryDelay } from './retry-policy.js';
import { type AttemptResult, sendWebhook } from './send-webhook.js';
import { signatureHeader } from './webhook-signature.js';

export const USER_AGENT = `videogen/${VERSION} (webhooks)`;

export interface WebhookDispatcherOptions {
  readonly store: DeliveryStore;
  /** The guarded outbound dispatcher shared with asset downloads. */
  readonly dispatcher: Dispatcher;
  readonly logger: Logger;
  /** The signed result link of a completed task, made when its callback is sent. */
  readonly resultUrl: ResultUrl;
  /**
   * Deliveries in flight at once in this process. With `perHostConcurrency` it bounds how many stuck receivers
   * it takes before others wait: 64 / 4 = 16 receivers all hanging at once.
   */
  readonly concurrency?: number;
  /** Deliveries in flight at once to one receiver (`host:port`). */
  readonly perHostConcurrency?: number;
  /** One attempt's limit, response included (decisions.md §5: 15 s). */
  readonly timeoutMs?: number;
  readonly pollIntervalMs?: number;
  readonly retry?: RetryPolicy;
  readonly metrics?: Metrics;
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
  readonly #inFlight = new Set<InFlight>();
  #wake: (() => void) | undefined;
  /** Set by `notify`, so that a wake-up arriving while a claim is under way is not lost. */
  #woken = false;
  #loop: Promise<void> | undefined;
  #stopping = false;

  constructor(options: WebhookDispatcherOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#concurrency = options.concurrency ?? 64;
    this.#perHost = options.perHostConcurrency ?? 4;
    this.#timeoutMs = options.timeoutMs ?? 15_000;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** A delivery may have been queued: look now rather than at the next poll. */
  notify(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Stops claiming; attempts in flight get `graceMs` to finish, then are abandoned uncounted. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    this.notify();
    await this.#loop;
    const all = Promise.all([...this.#inFlight].map((f) => f.done));
    if (!(await settlesWithin(all, graceMs))) {
      for (const flight of this.#inFlight) flight.abort.abort();
      await all;
    }
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  async #run(): Promise<void> {
    const pollIntervalMs = this.#options.pollIntervalMs ?? 1000;
    while (!this.#stopping) {
      this.#woken = false;
      // Straight on only after a full claim: a short one means nothing more is due that has room now, and a
      // finishing attempt or a new delivery will wake the loop when that changes.
      const full = await this.#claimAndStart();
      if (!full && !this.#woken && !this.#stopping) await this.#sleep(pollIntervalMs);
    }
  }

  #hostLoad(): Map<string, number> {
    const load = new Map<string, number>();
    for (const flight of this.#inFlight) load.set(flight.host, (load.get(flight.host) ?? 0) + 1);
    return load;
  }

  /** True when the claim filled every free slot. */
  async #claimAndStart(): Promise<boolean> {
    const free = this.#concurrency - this.#inFlight.size;
    if (free <= 0) return false;
    const load = this.#hostLoad();
    const saturated = [...load].filter(([, count]) => count >= this.#perHost).map(([host]) => host);
    let claimed: DeliveryRecord[];
    try {
      claimed = await this.#store.claimDeliveries({
        workerId: this.workerId,
        // Longer than an attempt can take (the request, plus reading secrets and recording the outcome), so
        // that only a sender that died lets it lapse; then the delivery is due again.
        leaseMs: this.#timeoutMs + 10_000,
        limit: free,
        excludeHosts: saturated,
        perHostLimit: this.#perHost,
        hostsInFlight: Object.fromEntries(load),
      });
    } catch (error) {
      this.#options.logger.error({ err: error }, 'claiming webhook deliveries failed');
      return false;
    }
    for (const delivery of claimed) {
      const claim = this.#claimOf(delivery);
      if ((load.get(delivery.host) ?? 0) >= this.#perHost) {
        // Only if the store ignored the per-host room (it is a hint); handed back uncounted.
        await this.#store.releaseDelivery(claim).catch(() => false);
        continue;
      }
      load.set(delivery.host, (load.get(delivery.host) ?? 0) + 1);
      const abort = new AbortController();
      const flight: InFlight = {
        host: delivery.host,
        abort,
        done: this.#attempt(delivery, claim, abort.signal)
          .catch((error: unknown) =>
            this.#options.logger.error({ err: error, delivery_id: delivery.id }, 'webhook attempt failed'),
          )
          .finally(() => {
            this.#inFlight.delete(flight);
            this.notify();
          }),
      };
      this.#inFlight.add(flight);
    }
    return claimed.length === free;
  }

  #claimOf(delivery: DeliveryRecord): DeliveryClaim {
    return { deliveryId: delivery.id, attempt: delivery.attemptCount, workerId: this.workerId };
  }

  async #attempt(delivery: DeliveryRecord, claim: DeliveryClaim, signal: AbortSignal): Promise<void> {
    const log = this.#options.logger.child({
      delivery_id: delivery.id,
      task_id: delivery.taskId,
      event: delivery.event,
      attempt: claim.attempt,
    });
    const secrets = await this.#store.getWebhookSecrets(delivery.accountId);
    const { payload } = delivery;
    const resultUrl = payload.status === 'completed' ? await this.#options.resultUrl(payload.id) : undefined;
    const body = JSON.stringify(deliveryBody(payload, resultUrl));
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
                'webhook-signature': signatureHeader(
                  secrets.map((s) => s.secret),
                  delivery.id,
                  timestamp,
                  body,
                ),
              },
              body,
            },
            { dispatcher: this.#options.dispatcher, timeoutMs: this.#timeoutMs, signal },
          );

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
    const recorded = await this.#store.finishDeliveryAttempt(
      claim,
      {
        attemptedAt: result.attemptedAt,
        durationMs: result.durationMs,
        httpStatus: result.httpStatus,
        error: result.error,
      },
      outcome,
    );
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
