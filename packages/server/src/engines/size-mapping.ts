/**
 * Maps a job's frame and duration onto what a model accepts (the `sizes` and `seconds` options of `openai`
 * and `exec` engines). The model's video need not match the job exactly: conformVideo fits it to the job
 * afterwards, so the aim is the accepted value that needs the least fixing.
 */
import type { FrameSize } from '../domain/frame-size.js';

/**
 * Shapes within this distance (natural log of the aspect ratio, ~5%) of the nearest count as equally near:
 * servers list sizes such as 832x480 beside 1280x720 for the same 16:9 model, and a 854x480 frame should get
 * the 480p one rather than the one whose ratio happens to be a hair closer.
 */
const SAME_SHAPE = 0.05;

export function parseSize(size: string): FrameSize {
  const [width, height] = size.split('x').map(Number) as [number, number];
  return { width, height };
}

export function formatSize(size: FrameSize): string {
  return `${size.width}x${size.height}`;
}

function orientation(size: FrameSize): number {
  return Math.sign(size.width - size.height);
}

function shapeDistance(a: FrameSize, b: FrameSize): number {
  return Math.abs(Math.log(a.width / a.height) - Math.log(b.width / b.height));
}

function areaDistance(a: FrameSize, b: FrameSize): number {
  return Math.abs(Math.log((a.width * a.height) / (b.width * b.height)));
}

/**
 * The `size` to ask for: the job's exact frame when the server accepts any, otherwise the allowed size of
 * the same orientation (landscape, portrait, square) if there is one, then of the nearest aspect ratio, then
 * of the nearest area; the first listed wins what is still tied.
 */
export function chooseSize(frame: FrameSize, allowed?: readonly string[]): string {
  if (!allowed || allowed.length === 0) return formatSize(frame);
  const sizes = allowed.map(parseSize);
  const sameOrientation = sizes.filter((size) => orientation(size) === orientation(frame));
  const candidates = sameOrientation.length > 0 ? sameOrientation : sizes;
  const nearestShape = Math.min(...candidates.map((size) => shapeDistance(size, frame)));
  const sameShape = candidates.filter((size) => shapeDistance(size, frame) <= nearestShape + SAME_SHAPE);
  let best = sameShape[0] as FrameSize;
  for (const size of sameShape) {
    if (areaDistance(size, frame) < areaDistance(best, frame)) best = size;
  }
  return formatSize(best);
}

/** The `seconds` to ask for: the job's duration, or the nearest allowed value (the longer one on a tie). */
export function chooseSeconds(duration: number, allowed?: readonly number[]): number {
  if (!allowed || allowed.length === 0) return duration;
  let best = allowed[0] as number;
  for (const value of allowed) {
    const distance = Math.abs(value - duration);
    const bestDistance = Math.abs(best - duration);
    if (distance < bestDistance || (distance === bestDistance && value > best)) best = value;
  }
  return best;
}
