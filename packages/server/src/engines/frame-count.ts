/** Frame counts of the form step × n + 1, which video diffusion models take (Wan: 4n+1, LTX-Video: 8n+1). */

/** The smallest count step × n + 1 that is at least `needed`; `needed` itself when `step` is undefined. */
export function frameCount(needed: number, step: number | undefined): number {
  if (step === undefined) return needed;
  return Math.ceil(Math.max(needed - 1, 0) / step) * step + 1;
}
