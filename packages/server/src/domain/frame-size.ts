/** Output frame geometry: short side = quality, long side = short side x ratio, rounded to even. */

export const QUALITIES = ['480p', '720p', '1080p'] as const;
export type Quality = (typeof QUALITIES)[number];

export const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive'] as const;
export type AspectRatio = (typeof ASPECT_RATIOS)[number];
export type FixedAspectRatio = Exclude<AspectRatio, 'adaptive'>;

const FIXED_RATIOS = ASPECT_RATIOS.filter((r): r is FixedAspectRatio => r !== 'adaptive');

export interface FrameSize {
  readonly width: number;
  readonly height: number;
}

function ratioValue(ratio: FixedAspectRatio): number {
  const [w, h] = ratio.split(':').map(Number) as [number, number];
  return w / h;
}

function even(n: number): number {
  return Math.round(n / 2) * 2;
}

export function frameSize(quality: Quality, ratio: FixedAspectRatio): FrameSize {
  const short = Number.parseInt(quality, 10);
  const value = ratioValue(ratio);
  if (value >= 1) return { width: even(short * value), height: short };
  return { width: short, height: even(short / value) };
}

/** The listed ratio nearest to width:height, compared on a log scale so 2:1 and 1:2 are treated alike. */
export function nearestAspectRatio(width: number, height: number): FixedAspectRatio {
  const target = Math.log(width / height);
  let best: FixedAspectRatio = '16:9';
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const ratio of FIXED_RATIOS) {
    const distance = Math.abs(Math.log(ratioValue(ratio)) - target);
    if (distance < bestDistance) {
      best = ratio;
      bestDistance = distance;
    }
  }
  return best;
}

/** Resolves `adaptive` against the first visual reference's dimensions (16:9 when there is none). */
export function resolveAspectRatio(ratio: AspectRatio, firstVisual: FrameSize | undefined): FixedAspectRatio {
  if (ratio !== 'adaptive') return ratio;
  return firstVisual ? nearestAspectRatio(firstVisual.width, firstVisual.height) : '16:9';
}
