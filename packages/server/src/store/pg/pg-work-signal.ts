/**
 * The `WorkSignal` across processes, on PostgreSQL LISTEN/NOTIFY.
 *
 * One dedicated connection (not a pooled one: a pool would hand it to queries and drop it when idle) LISTENs
 * on a channel per topic, started at the first `subscribe`, so a process that only notifies holds none.
 * `notify` sends `pg_notify` through a pool, outside any transaction, so it is delivered at once. PostgreSQL
 * keeps no notification for a session that is not listening, so after a lost connection is re-established
 * (with backoff) every listener is called once: work may have been announced while nobody heard.
 *
 * A notification reaches listeners in this process straight away and is not delivered a second time when
 * PostgreSQL echoes it back (the payload names the sending instance, then, after a colon, the hint if any).
 *
 * Each topic has at most one `pg_notify` in flight: the calls made meanwhile share the next one, sent once it
 * has been answered, so every call is still followed by a NOTIFY sent after it. A round trip per call was one per
 * task created: PostgreSQL's creations reached 0.15 of a bare POST with it, 0.23-0.30 without
 * (docs/benchmarks.md#hot-paths-polling-and-creation).
 * A call with a hint is sent on its own, since its hint is its point (one per provider callback: few).
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  MAX_HINT_LENGTH,
  WORK_TOPICS,
  type WorkListener,
  type WorkSignal,
  type WorkTopic,
} from '../../ports/work-signal.js';
import { LocalWorkSignal } from '../local-work-signal.js';
import { quoteIdentifier } from './pg-database.js';

export interface PgWorkSignalOptions {
  /** The database to LISTEN on (and to NOTIFY through when no `pool` is given). */
  readonly connectionString: string;
  /** NOTIFY through this pool, which stays the caller's to end; otherwise through a one-connection pool of its own. */
  readonly pool?: pg.Pool;
  /**
   * Channels are per database, not per schema: installations sharing a database keep apart by a namespace
   * (`PgStore.createWorkSignal` uses its schema). Absent: `videogen_tasks`, `videogen_deliveries`.
   */
  readonly namespace?: string;
  /** Waits between reconnection attempts: doubling from `initialDelayMs` (default 100) up to `maxDelayMs` (10 s). */
  readonly reconnect?: { readonly initialDelayMs?: number; readonly maxDelayMs?: number };
  /**
   * How often the listening connection is checked with a round trip, which also bounds how long a silently
   * dead connection (a network partition) goes unnoticed; default 30 s.
   */
  readonly heartbeatMs?: number;
  /** Shown in `pg_stat_activity` for the listening connection; default `videogen-work-signal`. */
  readonly applicationName?: string;
  /** Told about failures that the signal survives: a lost connection, a NOTIFY that failed, a listener that threw. */
  readonly onError?: (error: unknown) => void;
  /**
   * Per topic, the least time between two NOTIFYs without a hint; calls meanwhile are sent as one at the end of
   * the gap (listeners in this process hear each at once). Default: `changes` 250 ms, what an event stream's
   * reader waits between reads anyway (tasks/task-watcher.ts), so a busy worker pool sends one NOTIFY a quarter
   * second for all its progress and status writes rather than one each, which PostgreSQL serialises on its queue.
   */
  readonly minGapMs?: Partial<Readonly<Record<WorkTopic, number>>>;
}

type ListenerState = 'idle' | 'connecting' | 'listening' | 'waiting' | 'closed';

/** The channel a topic is announced on, at most PostgreSQL's 63-byte identifier limit. */
export function channelName(topic: WorkTopic, namespace?: string): string {
  const base = `videogen_${topic}`;
  if (namespace === undefined) return base;
  const full = `${base}_${namespace}`;
  if (Buffer.byteLength(full) <= 63) return full;
  return `${base}_${createHash('sha256').update(namespace).digest('hex').slice(0, 32)}`;
}

const DEFAULT_MIN_GAP_MS: Partial<Record<WorkTopic, number>> = { changes: 250 };

export class PgWorkSignal implements WorkSignal {
  readonly #options: PgWorkSignalOptions;
  readonly #onError: (error: unknown) => void;
  readonly #local: LocalWorkSignal;
  readonly #pool: pg.Pool;
  readonly #ownPool: boolean;
  /** Tells our own notifications apart when PostgreSQL echoes them back. */
  readonly #instance = randomBytes(9).toString('base64url');
  readonly #channels: ReadonlyMap<string, WorkTopic>;
  #state: ListenerState = 'idle';
  #client: pg.Client | undefined;
  #failures = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #waiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  /** Per topic, the `pg_notify` in flight, answered or not (it never rejects). */
  readonly #sending = new Map<WorkTopic, Promise<void>>();
  /** Per topic, the `pg_notify` that waits for the one in flight, shared by every call made meanwhile. */
  readonly #waiting = new Map<WorkTopic, Promise<void>>();
  readonly #minGapMs: Partial<Readonly<Record<WorkTopic, number>>>;
  /** Per throttled topic, when its last NOTIFY was started (performance.now()). */
  readonly #lastSentAt = new Map<WorkTopic, number>();
  /** Per throttled topic, the NOTIFY put off to the end of its gap, shared by every call made meanwhile. */
  readonly #delayed = new Map<
    WorkTopic,
    { readonly timer: NodeJS.Timeout; readonly sent: Promise<void>; readonly release: () => void }
  >();

  constructor(options: PgWorkSignalOptions) {
    this.#options = options;
    this.#onError = options.onError ?? (() => undefined);
    this.#minGapMs = options.minGapMs ?? DEFAULT_MIN_GAP_MS;
    this.#local = new LocalWorkSignal({ onError: this.#onError });
    this.#ownPool = options.pool === undefined;
    this.#pool =
      options.pool ??
      new pg.Pool({
        connectionString: options.connectionString,
        max: 1,
        application_name: 'videogen-notify',
      });
    if (this.#ownPool) {
      this.#pool.on('error', (error) => this.#onError(error));
      // As in pg-database.ts: a client's reset while it is checked out must not go unheard.
      this.#pool.on('connect', (client) => client.on('error', (error) => this.#onError(error)));
    }
    this.#channels = new Map(WORK_TOPICS.map((topic) => [channelName(topic, options.namespace), topic]));
  }

  async notify(topic: WorkTopic, hint?: string): Promise<void> {
    if (this.#state === 'closed') return;
    if (hint !== undefined) {
      if (hint.length > MAX_HINT_LENGTH) return;
      this.#local.deliver(topic, hint);
      return this.#send(topic, hint);
    }
    this.#local.deliver(topic);
    const gap = this.#minGapMs[topic];
    return gap === undefined ? this.#coalesced(topic) : this.#throttled(topic, gap);
  }

  /** One NOTIFY for `topic` at most every `gap` ms: now if the last was long enough ago, else at the gap's end. */
  #throttled(topic: WorkTopic, gap: number): Promise<void> {
    const delayed = this.#delayed.get(topic);
    if (delayed) return delayed.sent;
    const wait = (this.#lastSentAt.get(topic) ?? Number.NEGATIVE_INFINITY) + gap - performance.now();
    if (wait <= 0) {
      this.#lastSentAt.set(topic, performance.now());
      return this.#coalesced(topic);
    }
    let release = () => {};
    const sent = new Promise<void>((resolve) => {
      release = resolve;
    });
    const timer = setTimeout(() => {
      this.#delayed.delete(topic);
      this.#lastSentAt.set(topic, performance.now());
      void this.#coalesced(topic).then(release);
    }, wait);
    this.#delayed.set(topic, { timer, sent, release });
    return sent;
  }

  /** One NOTIFY in flight per topic, and one waiting behind it for every call made meanwhile. */
  #coalesced(topic: WorkTopic): Promise<void> {
    const waiting = this.#waiting.get(topic);
    if (waiting) return waiting;
    const next = (this.#sending.get(topic) ?? Promise.resolve()).then(() => {
      // From here on a call needs a NOTIFY sent after it: the one after this.
      this.#waiting.delete(topic);
      const sending = this.#send(topic).finally(() => {
        if (this.#sending.get(topic) === sending) this.#sending.delete(topic);
      });
      this.#sending.set(topic, sending);
      return sending;
    });
    this.#waiting.set(topic, next);
    return next;
  }

  async #send(topic: WorkTopic, hint?: string): Promise<void> {
    if (this.#state === 'closed') return;
    try {
      await this.#pool.query('select pg_notify($1, $2)', [
        channelName(topic, this.#options.namespace),
        hint === undefined ? this.#instance : `${this.#instance}:${hint}`,
      ]);
    } catch (error) {
      this.#onError(error);
    }
  }

  subscribe(topic: WorkTopic, listener: WorkListener): () => void {
    if (this.#state === 'closed') return () => undefined;
    const unsubscribe = this.#local.subscribe(topic, listener);
    if (this.#state === 'idle') void this.#connect();
    return unsubscribe;
  }

  /**
   * Resolves once the LISTEN is in effect (at once if it is), starting the connection if nothing has yet;
   * rejects if the signal is closed first. Notifications sent before then may be missed (and are made up for
   * by the call every listener gets when listening starts).
   */
  listening(): Promise<void> {
    if (this.#state === 'listening') return Promise.resolve();
    if (this.#state === 'closed') return Promise.reject(new Error('The work signal is closed.'));
    const waiting = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    if (this.#state === 'idle') void this.#connect();
    return waiting;
  }

  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    clearTimeout(this.#retryTimer);
    clearInterval(this.#heartbeatTimer);
    for (const { timer, release } of this.#delayed.values()) {
      clearTimeout(timer);
      release();
    }
    this.#delayed.clear();
    for (const waiter of this.#waiters.splice(0)) waiter.reject(new Error('The work signal is closed.'));
    await this.#local.close();
    const client = this.#client;
    this.#client = undefined;
    await Promise.all([
      client?.end().catch(() => undefined),
      this.#ownPool ? this.#pool.end().catch(() => undefined) : undefined,
    ]);
  }

  async #connect(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'connecting';
    const client = new pg.Client({
      connectionString: this.#options.connectionString,
      application_name: this.#options.applicationName ?? 'videogen-work-signal',
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    this.#client = client;
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('The work signal connection ended.')));
    client.on('notification', (message) => {
      if (this.#client !== client) return;
      const payload = message.payload ?? '';
      const colon = payload.indexOf(':');
      const sender = colon < 0 ? payload : payload.slice(0, colon);
      if (sender === this.#instance) return;
      const topic = this.#channels.get(message.channel);
      if (topic) this.#local.deliver(topic, colon < 0 ? undefined : payload.slice(colon + 1));
    });
    try {
      await client.connect();
      for (const channel of this.#channels.keys()) await client.query(`listen ${quoteIdentifier(channel)}`);
    } catch (error) {
      this.#lost(client, error);
      return;
    }
    // Lost, or closed, while connecting: whoever noticed has taken over.
    if (this.#client !== client || this.#state !== 'connecting') return;
    this.#state = 'listening';
    this.#failures = 0;
    this.#startHeartbeat(client);
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
    // Anything announced while nobody listened (before the first connection, or between two) is lost.
    this.#local.deliver();
  }

  /** Drops a failed connection (once, whichever event came first) and schedules the next attempt. */
  #lost(client: pg.Client, error: unknown): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    clearInterval(this.#heartbeatTimer);
    client.end().catch(() => undefined);
    if (this.#state === 'closed') return;
    this.#onError(error);
    this.#state = 'waiting';
    const { initialDelayMs = 100, maxDelayMs = 10_000 } = this.#options.reconnect ?? {};
    const delay = Math.min(maxDelayMs, initialDelayMs * 2 ** this.#failures);
    this.#failures = Math.min(this.#failures + 1, 30);
    // Jitter, so that every process that lost the same server does not come back in the same instant.
    this.#retryTimer = setTimeout(() => void this.#connect(), delay * (0.75 + Math.random() / 2));
    this.#retryTimer.unref();
  }

  #startHeartbeat(client: pg.Client): void {
    const interval = this.#options.heartbeatMs ?? 30_000;
    this.#heartbeatTimer = setInterval(() => {
      let answered = false;
      const timeout = setTimeout(() => {
        if (!answered) this.#lost(client, new Error('The work signal connection stopped answering.'));
      }, interval);
      timeout.unref();
      client.query('select 1').then(
        () => {
          answered = true;
          clearTimeout(timeout);
        },
        (error: unknown) => {
          answered = true;
          clearTimeout(timeout);
          this.#lost(client, error);
        },
      );
    }, interval);
    this.#heartbeatTimer.unref();
  }
}
