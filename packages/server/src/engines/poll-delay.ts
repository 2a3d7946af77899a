/**
 * How long to wait before asking the upstream about a job again: the engine's interval while the job is young,
 * then a twentieth of the time it has been followed, up to 30 s. A job of a few seconds is asked about at the
 * engine's pace, one of ten minutes every 30 s: following thousands of long jobs costs the provider a few
 * requests a second, and a job's end is seen within 5 % of its length.
 */
export const MAX_POLL_DELAY_MS = 30_000;

export function pollDelay(intervalMs: number, followedForMs: number): number {
  return Math.max(intervalMs, Math.min(MAX_POLL_DELAY_MS, Math.floor(followedForMs / 20)));
}
