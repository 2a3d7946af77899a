/**
 * How a picture of another shape fills the output frame.
 *
 * Contain with a blurred fill: the whole picture stays visible (the client chose what is in it, and the
 * first frame should be that picture), and a blurred, enlarged copy fills the bars so the frame does not
 * look letterboxed. When the shapes nearly match, as `adaptive` snapping leaves them, blurred slivers a
 * few pixels wide would look like a mistake, so the picture then covers the frame, losing at most 10%.
 */

export type FitMode = 'cover' | 'contain';

/** Cover when cropping keeps at least this share of the picture. */
export const COVER_MIN_KEPT = 0.9;

export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export function chooseFit(width: number, height: number, frameWidth: number, frameHeight: number): FitMode {
  const ratio = width / height / (frameWidth / frameHeight);
  return Math.min(ratio, 1 / ratio) >= COVER_MIN_KEPT ? 'cover' : 'contain';
}

/** Where a `width` x `height` picture lands in the frame, centred. */
export function fitRect(
  width: number,
  height: number,
  frameWidth: number,
  frameHeight: number,
  mode: FitMode,
): Rect {
  const pick = mode === 'cover' ? Math.max : Math.min;
  const scale = pick(frameWidth / width, frameHeight / height);
  const w = width * scale;
  const h = height * scale;
  return { x: (frameWidth - w) / 2, y: (frameHeight - h) / 2, width: w, height: h };
}

/** The same rule as an ffmpeg expression for the scale factor, for the video decoder's `scale` filter. */
export function ffmpegFitScaleExpression(frameWidth: number, frameHeight: number): string {
  const wScale = `${frameWidth}/iw`;
  const hScale = `${frameHeight}/ih`;
  const ratio = `(iw/ih)/(${frameWidth}/${frameHeight})`;
  return `if(gte(min(${ratio},1/(${ratio})),${COVER_MIN_KEPT}),max(${wScale},${hScale}),min(${wScale},${hScale}))`;
}
