/** The benchmarks' percentile: the nearest-rank value of `sorted` (ascending) at `p` percent; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
