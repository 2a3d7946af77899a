/**
 * The prompt as a caption on text-mode videos, set in Inter from the `@fontsource/inter` package so it
 * looks the same on every machine: no installed font is consulted for the scripts the package covers.
 * The caption is drawn once into its own canvas and laid over each frame.
 */
import { createRequire } from 'node:module';
import { type Canvas, createCanvas, GlobalFonts, type SKRSContext2D } from '@napi-rs/canvas';
import type { FrameSize } from '../../domain/frame-size.js';

const FAMILY = 'videogen caption';
const SUBSETS = ['latin', 'latin-ext', 'cyrillic', 'cyrillic-ext', 'greek', 'greek-ext', 'vietnamese'];
const MAX_LINES = 2;
/** Font size as a share of the frame's short side. */
const FONT_SCALE = 1 / 24;
const ELLIPSIS = '…';

let registered = false;

function registerFont(): void {
  if (registered) return;
  const require = createRequire(import.meta.url);
  for (const subset of SUBSETS) {
    GlobalFonts.registerFromPath(
      require.resolve(`@fontsource/inter/files/inter-${subset}-600-normal.woff2`),
      FAMILY,
    );
  }
  registered = true;
}

export interface Caption {
  readonly image: Canvas;
  readonly x: number;
  readonly y: number;
}

/** Greedy word wrap into at most `MAX_LINES` lines of `maxWidth`, the last one cut with an ellipsis. */
export function wrapCaption(text: string, maxWidth: number, measure: (line: string) => number): string[] {
  const lines: string[] = [];
  let line = '';
  let cut = false;
  for (const word of text.trim().split(/\s+/)) {
    const candidate = line ? `${line} ${word}` : word;
    if (!line || measure(candidate) <= maxWidth) {
      line = candidate;
      continue;
    }
    lines.push(line);
    line = word;
    if (lines.length === MAX_LINES) {
      cut = true;
      break;
    }
  }
  if (!cut) lines.push(line);
  const last = lines.length - 1;
  let tail = lines[last] ?? '';
  // Text that did not fit, or one word wider than the frame: shorten the last line to end in an ellipsis.
  if (cut || measure(tail) > maxWidth) {
    while (tail.length > 1 && measure(`${tail}${ELLIPSIS}`) > maxWidth) tail = tail.slice(0, -1).trimEnd();
    lines[last] = `${tail}${ELLIPSIS}`;
  }
  return lines;
}

/** The prompt set in a translucent band near the bottom of a `frame`-sized picture; null for an empty prompt. */
export function renderCaption(prompt: string, frame: FrameSize): Caption | null {
  if (prompt.trim() === '') return null;
  registerFont();
  const short = Math.min(frame.width, frame.height);
  const fontSize = Math.max(10, Math.round(short * FONT_SCALE));
  const padding = Math.round(fontSize * 0.6);
  const lineHeight = Math.round(fontSize * 1.3);
  const maxTextWidth = frame.width * 0.86 - 2 * padding;

  const measureCanvas = createCanvas(1, 1).getContext('2d');
  setFont(measureCanvas, fontSize);
  const lines = wrapCaption(prompt, maxTextWidth, (line) => measureCanvas.measureText(line).width);
  const textWidth = Math.max(...lines.map((line) => measureCanvas.measureText(line).width));

  const width = Math.ceil(textWidth + 2 * padding);
  const height = Math.ceil(lines.length * lineHeight + 2 * padding - (lineHeight - fontSize) / 2);
  const image = createCanvas(width, height);
  const ctx = image.getContext('2d');
  ctx.fillStyle = 'rgba(0, 0, 0, 0.55)';
  ctx.beginPath();
  ctx.roundRect(0, 0, width, height, Math.round(fontSize * 0.5));
  ctx.fill();
  setFont(ctx, fontSize);
  ctx.fillStyle = '#fff';
  ctx.textBaseline = 'top';
  ctx.textAlign = 'center';
  lines.forEach((line, i) => {
    ctx.fillText(line, width / 2, padding + i * lineHeight);
  });
  return {
    image,
    x: Math.round((frame.width - width) / 2),
    y: Math.round(frame.height - height - short * 0.06),
  };
}

export function drawCaption(ctx: SKRSContext2D, caption: Caption | null): void {
  if (caption) ctx.drawImage(caption.image, caption.x, caption.y);
}

function setFont(ctx: SKRSContext2D, size: number): void {
  // A fixed language keeps shaping independent of the host's locale.
  ctx.lang = 'en';
  ctx.font = `${size}px "${FAMILY}"`;
}
