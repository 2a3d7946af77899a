/**
 * Waiting for something that happens. Never use it to see that nothing happens: prove that with a positive
 * signal instead (an event, a counter, a log line, a later event that can only come after it).
 */

/** What `until` returns: the probe's first value that is not `undefined`, `null` or `false`. */
export type Found<T> = Exclude<T, undefined | null | false>;

export interface UntilOptions {
  /**
   * How long a failure takes to show, nothing more: generous, because CI runs on a shared 2-core machine
   * (default 30 s).
   */
  readonly timeoutMs?: number;
  /** Between two probes (default 10 ms). */
  readonly intervalMs?: number;
}

/**
 * Calls `probe` until it gives a value other than `undefined`, `null` or `false`, and returns that value;
 * throws, naming `what`, after `timeoutMs`.
 */
export async function until<T>(
  probe: () => T | Promise<T>,
  what: string,
  { timeoutMs = 30_000, intervalMs = 10 }: UntilOptions = {},
): Promise<Found<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value as Found<T>;
    if (Date.now() > deadline) throw new Error(`${what}: did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
