/**
 * Prometheus metrics (prom-client) for `GET /metrics`. One registry per service, not prom-client's global one,
 * so that several services in one process (tests) do not share counters. Queue gauges are read from the store
 * at scrape time, so every process reports the same, cluster-wide, numbers; counters and histograms are this
 * process's own.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type CircuitPolicy, circuitState } from './domain/engine-route.js';
import type { Quality } from './domain/frame-size.js';
import type { ModelId } from './domain/models.js';
import { costMicros, fromMicros, type Prices } from './domain/prices.js';
import type { EngineStats, QueueStats } from './ports/store.js';

/** What a completed task used, for the usage counters. */
export interface CompletedUsage {
  readonly model: ModelId;
  readonly engine: string;
  readonly quality: Quality;
  readonly videoSeconds: number;
}

export class Metrics {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'videogen_http_request_duration_seconds',
    help: 'HTTP request latency by route (the route pattern, not the path), method and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly httpInFlight = new Gauge({
    name: 'videogen_http_requests_in_flight',
    help: 'Requests this process is answering, by route (event streams and Prefer: wait answers stay open).',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  /**
   * The labelled children of the two metrics every request touches, kept by their labels: prom-client hashes a
   * label set on each call otherwise. Routes, methods and status codes are few, so the maps stay small.
   */
  readonly #inFlightByRoute = new Map<string, Gauge.Internal<'route'>>();
  readonly #durationByLabels = new Map<string, Histogram.Internal<'method' | 'route' | 'status_code'>>();

  /** The in-flight gauge of `route`. */
  httpInFlightOf(route: string): Gauge.Internal<'route'> {
    let child = this.#inFlightByRoute.get(route);
    if (!child) {
      child = this.httpInFlight.labels({ route });
      this.#inFlightByRoute.set(route, child);
    }
    return child;
  }

  /** Records how long a request to `route` took to answer. */
  observeHttpDuration(method: string, route: string, statusCode: number, seconds: number): void {
    const labels = `${method} ${statusCode} ${route}`;
    let child = this.#durationByLabels.get(labels);
    if (!child) {
      child = this.httpDuration.labels({ method, route, status_code: statusCode });
      this.#durationByLabels.set(labels, child);
    }
    child.observe(seconds);
  }

  readonly httpBodiesInFlight = new Gauge({
    name: 'videogen_http_request_bodies_in_flight',
    help: 'Large request bodies this process holds (read or being read), against VIDEOGEN_MAX_BODIES_IN_FLIGHT.',
    registers: [this.registry],
  });

  readonly httpBodyBytesInFlight = new Gauge({
    name: 'videogen_http_request_body_bytes_in_flight',
    help: 'The declared bytes of those bodies, counted against VIDEOGEN_MAX_BODY_MB_IN_FLIGHT.',
    registers: [this.registry],
  });

  readonly eventStreamsOpen = new Gauge({
    name: 'videogen_event_streams_open',
    help: 'Task event streams of this process still watching their task (each polls the store until it ends).',
    registers: [this.registry],
  });

  readonly renderDuration = new Histogram({
    name: 'videogen_task_run_duration_seconds',
    help: 'Time from claim to completion of the tasks this process ran, by model.',
    labelNames: ['model'] as const,
    buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 900],
    registers: [this.registry],
  });

  readonly tasksFinished = new Counter({
    name: 'videogen_tasks_finished_total',
    help: 'Tasks this process finished, by model, final status and error code ("" when completed).',
    labelNames: ['model', 'status', 'error_code'] as const,
    registers: [this.registry],
  });

  readonly tasksCreated = new Counter({
    name: 'videogen_tasks_created_total',
    help: 'Tasks created through this process, by model.',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });

  readonly callbackAttempts = new Counter({
    name: 'videogen_callback_attempts_total',
    help: 'Callback delivery attempts by outcome: delivered, retry (will be tried again), failed (gave up or 410), interrupted (shutdown).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly leasesLost = new Counter({
    name: 'videogen_leases_lost_total',
    help: 'Runs this process stopped because their lease had expired and the task could be claimed by another worker.',
    registers: [this.registry],
  });

  readonly tasksRequeued = new Counter({
    name: 'videogen_tasks_requeued_total',
    help: 'Tasks this process put back to pending because the worker running them was gone (its process died), without counting the attempt.',
    registers: [this.registry],
  });

  readonly tasksAbandoned = new Counter({
    name: 'videogen_tasks_abandoned_total',
    help: 'Tasks this process failed with worker_lost after their last lease expired.',
    registers: [this.registry],
  });

  readonly videoSeconds = new Counter({
    name: 'videogen_video_seconds_total',
    help: 'Seconds of video of the tasks this process completed, by model and engine (the usage records’ figures).',
    labelNames: ['model', 'engine'] as const,
    registers: [this.registry],
  });

  readonly cost = new Counter({
    name: 'videogen_cost_total',
    help: 'Cost of the tasks this process completed at the configured prices, in currency units, by model and engine.',
    labelNames: ['model', 'engine', 'currency'] as const,
    registers: [this.registry],
  });

  readonly #prices: Prices | undefined;

  readonly engineFallbacks = new Counter({
    name: 'videogen_engine_fallbacks_total',
    help: 'Tasks this process moved from an unavailable engine to the next engine of their route, by model and engines.',
    labelNames: ['model', 'from_engine', 'to_engine'] as const,
    registers: [this.registry],
  });

  constructor(
    options: {
      queueStats?: () => Promise<QueueStats>;
      /** For the cost counter: the prices this process loaded. */
      prices?: Prices | undefined;
      /** The engines' circuits and tasks in flight, with the engines file's names and circuit policy. */
      engines?: {
        readonly stats: () => Promise<EngineStats>;
        readonly names: readonly string[];
        readonly circuit: CircuitPolicy;
      };
    } = {},
  ) {
    this.#prices = options.prices;
    collectDefaultMetrics({ register: this.registry, prefix: 'videogen_' });
    if (options.engines) this.#engineGauges(options.engines);
    const { queueStats } = options;
    if (!queueStats) return;

    // One store read per scrape, shared by the gauges below, which prom-client collects one after another.
    let pending: Promise<QueueStats> | undefined;
    const stats = () => {
      pending ??= queueStats().finally(() => {
        setImmediate(() => {
          pending = undefined;
        });
      });
      return pending;
    };
    const registers = [this.registry];
    new Gauge({
      name: 'videogen_tasks',
      help: 'Unfinished tasks by status (pending, processing) and model, across all processes.',
      labelNames: ['status', 'model'] as const,
      registers,
      async collect() {
        this.reset();
        for (const row of (await stats()).unfinished)
          this.set({ status: row.status, model: row.model }, row.count);
      },
    });
    new Gauge({
      name: 'videogen_queue_depth',
      help: 'Tasks waiting to be claimed.',
      registers,
      async collect() {
        this.set(
          (await stats()).unfinished.filter((r) => r.status === 'pending').reduce((n, r) => n + r.count, 0),
        );
      },
    });
    new Gauge({
      name: 'videogen_queue_oldest_pending_age_seconds',
      help: 'How long the oldest pending task has waited (0 when none is pending).',
      registers,
      async collect() {
        const { oldestPendingAt, now } = await stats();
        this.set(oldestPendingAt === null ? 0 : Math.max(0, (now - oldestPendingAt) / 1000));
      },
    });
    new Gauge({
      name: 'videogen_expired_leases',
      help: 'Processing tasks whose lease has expired: their worker died or hung, and they wait to be claimed again.',
      registers,
      async collect() {
        this.set((await stats()).expiredLeases);
      },
    });
    new Gauge({
      name: 'videogen_callbacks_pending',
      help: 'Callback deliveries not yet delivered or given up.',
      registers,
      async collect() {
        this.set((await stats()).pendingDeliveries);
      },
    });
  }

  /** Counts a completed task's video seconds and, when its model and quality have a price, its cost. */
  recordUsage(usage: CompletedUsage): void {
    const labels = { model: usage.model, engine: usage.engine };
    this.videoSeconds.inc(labels, usage.videoSeconds);
    const micros = costMicros(this.#prices, usage.model, usage.quality, usage.videoSeconds);
    if (micros !== null && this.#prices) {
      this.cost.inc({ ...labels, currency: this.#prices.currency }, fromMicros(micros));
    }
  }

  #engineGauges(engines: {
    readonly stats: () => Promise<EngineStats>;
    readonly names: readonly string[];
    readonly circuit: CircuitPolicy;
  }): void {
    let pending: Promise<EngineStats> | undefined;
    const stats = () => {
      pending ??= engines.stats().finally(() => {
        setImmediate(() => {
          pending = undefined;
        });
      });
      return pending;
    };
    const registers = [this.registry];
    const names = async () => {
      const read = await stats();
      return {
        read,
        names: [...new Set([...engines.names, ...read.circuits.keys(), ...read.inFlight.keys()])],
      };
    };
    new Gauge({
      name: 'videogen_engine_tasks_in_flight',
      help: 'Tasks processing on each engine under a live lease, across all processes (compare with max_concurrency).',
      labelNames: ['engine'] as const,
      registers,
      async collect() {
        this.reset();
        const { read, names: all } = await names();
        for (const engine of all) this.set({ engine }, read.inFlight.get(engine) ?? 0);
      },
    });
    new Gauge({
      name: 'videogen_engine_circuit_open',
      help: 'Whether each engine is skipped by its circuit breaker (1: open, or its one trial task is running; 0: closed or ready for a trial).',
      labelNames: ['engine'] as const,
      registers,
      async collect() {
        this.reset();
        const { read, names: all } = await names();
        for (const engine of all) {
          const state = circuitState(read.circuits.get(engine), engines.circuit, read.now);
          this.set({ engine }, state === 'open' ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'videogen_engine_consecutive_failures',
      help: 'Unavailability failures in a row of each engine since its last success (the circuit opens at the policy count).',
      labelNames: ['engine'] as const,
      registers,
      async collect() {
        this.reset();
        const { read, names: all } = await names();
        for (const engine of all) this.set({ engine }, read.circuits.get(engine)?.failures ?? 0);
      },
    });
  }
}
