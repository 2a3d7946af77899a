/**
 * The machine's render slots (`VIDEOGEN_WORKER_CONCURRENCY`) as permits: a run holds one while it uses the
 * machine (assets, the local engine, a command, submitting, fetching and conforming a result) and lets it go
 * while a remote engine's upstream works, however long that takes. A run coming back for the machine (its job
 * is done upstream) goes before a new claim: it is paid work, waiting to be delivered.
 */
export class MachinePermits {
  #free: number;
  readonly #returning: (() => void)[] = [];
  readonly #claiming: (() => void)[] = [];

  constructor(count: number) {
    this.#free = count;
  }

  /** Resolves when a permit is this caller's; `returning`: a run that held one before, ahead of new claims. */
  acquire(returning = false, signal?: AbortSignal): Promise<void> {
    if (this.#free > 0 && this.#returning.length === 0 && (returning || this.#claiming.length === 0)) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const queue = returning ? this.#returning : this.#claiming;
      const granted = () => {
        signal?.removeEventListener('abort', aborted);
        resolve();
      };
      const aborted = () => {
        const index = queue.indexOf(granted);
        if (index >= 0) queue.splice(index, 1);
        reject(signal?.reason);
      };
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      signal?.addEventListener('abort', aborted, { once: true });
      queue.push(granted);
    });
  }

  release(): void {
    const next = this.#returning.shift() ?? this.#claiming.shift();
    if (next) next();
    else this.#free++;
  }
}

/** One run's hold on a permit: let go and taken again as the run goes, let go at most once at a time. */
export class MachineHold {
  #held = true;
  readonly #freed: Promise<void>;
  #onFreed: () => void = () => undefined;

  constructor(private readonly permits: MachinePermits) {
    this.#freed = new Promise((resolve) => {
      this.#onFreed = resolve;
    });
  }

  /** Resolves the first time the run lets its permit go (its slot may claim the next task). */
  get freed(): Promise<void> {
    return this.#freed;
  }

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    this.permits.release();
    this.#onFreed();
  }

  async reacquire(signal?: AbortSignal): Promise<void> {
    if (this.#held) return;
    await this.permits.acquire(true, signal);
    this.#held = true;
  }
}
