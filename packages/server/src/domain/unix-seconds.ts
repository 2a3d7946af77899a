/** Epoch milliseconds, as the store keeps times, to the Unix seconds every public object shows. */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
