/**
 * Text mode: an abstract animated scene from the prompt and seed. The prompt picks the colours and motifs
 * (rain, stars, waves…); the seed picks the shapes, their motion and a camera that moves to a new pose
 * every second. The prompt itself is the caption.
 */
import { type Canvas, createCanvas, type SKRSContext2D } from '@napi-rs/canvas';
import { type Caption, drawCaption, renderCaption } from './caption.js';
import { css, type Hsl, type Palette, paletteFromPrompt } from './palette.js';
import { type Motif, motifsIn } from './prompt-motifs.js';
import type { Scene, SceneSettings } from './scene.js';
import { hashString, mixSeeds, SeededRandom } from './seeded-random.js';
import { ease } from './still-image.js';

type ShapeKind = 'circle' | 'ring' | 'square' | 'triangle' | 'bar';

interface Shape {
  readonly kind: ShapeKind;
  /** Start position in frame fractions; shapes roam a margin around the frame and wrap. */
  readonly x: number;
  readonly y: number;
  /** Frame fractions per second. */
  readonly vx: number;
  readonly vy: number;
  /** Fraction of the frame's short side. */
  readonly size: number;
  readonly angle: number;
  readonly spin: number;
  readonly colour: Hsl;
  readonly alpha: number;
  /** Parallax: how strongly the camera's motion moves this shape. */
  readonly depth: number;
  readonly pulseHz: number;
  readonly phase: number;
}

interface CameraPose {
  readonly dx: number;
  readonly dy: number;
  readonly zoom: number;
  readonly angle: number;
}

interface Particle {
  readonly x: number;
  readonly y: number;
  readonly speed: number;
  readonly size: number;
  readonly phase: number;
}

const WRAP_MARGIN = 0.25;
const PARTICLE_MOTIFS: readonly Motif[] = ['stars', 'rain', 'snow'];
const WARM_HUES = [
  [0, 60],
  [330, 360],
] as const;
const WATER_HUES = [[165, 250]] as const;
const SUN: Hsl = { h: 42, s: 0.95, l: 0.6 };
const MOON: Hsl = { h: 50, s: 0.3, l: 0.7 };
const WATER: Hsl = { h: 205, s: 0.75, l: 0.42 };
const TAU = Math.PI * 2;
/** The vignette is clear within this share of the half-diagonal and darkest at the corners. */
const VIGNETTE_CLEAR = 0.45;

interface Vignette {
  readonly image: Canvas;
  /** The parts of the frame it darkens: the frame less a clear rectangle in the middle, in integer pixels. */
  readonly rects: readonly (readonly [number, number, number, number])[];
}

function wrap(value: number, min: number, max: number): number {
  const span = max - min;
  return ((((value - min) % span) + span) % span) + min;
}

function lerp(a: number, b: number, k: number): number {
  return a + (b - a) * k;
}

export class TextScene implements Scene {
  readonly #settings: SceneSettings;
  readonly #ctx: SKRSContext2D;
  readonly #pixels: () => Buffer;
  readonly #palette: Palette;
  readonly #motifs: Set<Motif>;
  readonly #shapes: Shape[];
  readonly #camera: CameraPose[];
  readonly #particles: Particle[];
  readonly #gradientAngle: number;
  readonly #vignette: Vignette | null;
  readonly #caption: Caption | null;

  constructor(settings: SceneSettings) {
    this.#settings = settings;
    const { width, height } = settings.frame;
    const canvas = createCanvas(width, height);
    this.#ctx = canvas.getContext('2d', { alpha: false });
    this.#pixels = () => canvas.data();
    this.#palette = paletteFromPrompt(settings.prompt);
    this.#motifs = motifsIn(settings.prompt);
    const random = new SeededRandom(mixSeeds(settings.seed, hashString(settings.prompt)));
    this.#gradientAngle = random.fork('gradient').range(0, TAU);
    this.#shapes = this.#makeShapes(random.fork('shapes'));
    this.#camera = this.#makeCamera(random.fork('camera'));
    this.#particles = this.#makeParticles(random.fork('particles'));
    this.#vignette = settings.fast ? null : this.#makeVignette();
    this.#caption = renderCaption(settings.prompt, settings.frame);
  }

  #makeShapes(random: SeededRandom): Shape[] {
    const count = this.#settings.fast ? 7 : 16;
    const kinds: ShapeKind[] = ['circle', 'circle', 'ring', 'square', 'triangle', 'bar'];
    const { accents } = this.#palette;
    return Array.from({ length: count }, (): Shape => {
      const speed = random.range(0.02, 0.09);
      const heading = random.range(0, TAU);
      return {
        kind: random.pick(kinds),
        x: random.range(-WRAP_MARGIN, 1 + WRAP_MARGIN),
        y: random.range(-WRAP_MARGIN, 1 + WRAP_MARGIN),
        vx: Math.cos(heading) * speed,
        vy: Math.sin(heading) * speed,
        size: random.range(0.06, 0.24),
        angle: random.range(0, TAU),
        spin: random.range(-0.7, 0.7),
        colour: random.pick(accents),
        alpha: random.range(0.45, 0.9),
        depth: random.range(0.5, 1.5),
        pulseHz: random.range(0.4, 1.2),
        phase: random.range(0, TAU),
      };
    }).sort((a, b) => a.depth - b.depth);
  }

  /** One pose per second, eased between, so the camera visibly changes course every second. */
  #makeCamera(random: SeededRandom): CameraPose[] {
    const seconds = Math.ceil(this.#settings.frameCount / this.#settings.fps) + 1;
    return Array.from({ length: seconds + 1 }, () => ({
      dx: random.range(-0.06, 0.06),
      dy: random.range(-0.06, 0.06),
      zoom: random.range(1, 1.18),
      angle: random.range(-0.05, 0.05),
    }));
  }

  #makeParticles(random: SeededRandom): Particle[] {
    if (!PARTICLE_MOTIFS.some((motif) => this.#motifs.has(motif))) return [];
    const count = this.#settings.fast ? 40 : 110;
    return Array.from({ length: count }, () => ({
      x: random.next(),
      y: random.next(),
      speed: random.range(0.5, 1.5),
      size: random.range(0.5, 1.5),
      phase: random.range(0, TAU),
    }));
  }

  /**
   * The vignette drawn once into its own canvas: laying it over each frame costs less than filling a radial
   * gradient, and it is laid only where it is not clear (the frame-shaped rectangle inside its clear circle is
   * left out, a fifth of the frame).
   */
  #makeVignette(): Vignette {
    const { width, height } = this.#settings.frame;
    const radius = Math.hypot(width, height) / 2;
    const image = createCanvas(width, height);
    const ctx = image.getContext('2d');
    const gradient = ctx.createRadialGradient(
      width / 2,
      height / 2,
      radius * VIGNETTE_CLEAR,
      width / 2,
      height / 2,
      radius,
    );
    gradient.addColorStop(0, 'rgba(0, 0, 0, 0)');
    gradient.addColorStop(1, this.#palette.light ? 'rgba(0, 0, 0, 0.18)' : 'rgba(0, 0, 0, 0.5)');
    ctx.fillStyle = gradient;
    ctx.fillRect(0, 0, width, height);
    // A rectangle of the frame's shape whose corners touch the clear circle, shrunk to whole pixels.
    const left = Math.ceil((width * (1 - VIGNETTE_CLEAR)) / 2) + 1;
    const top = Math.ceil((height * (1 - VIGNETTE_CLEAR)) / 2) + 1;
    const right = width - left;
    const bottom = height - top;
    const rects: [number, number, number, number][] = [
      [0, 0, width, top],
      [0, bottom, width, height - bottom],
      [0, top, left, bottom - top],
      [right, top, width - right, bottom - top],
    ];
    return { image, rects: rects.filter(([, , w, h]) => w > 0 && h > 0) };
  }

  async render(index: number): Promise<Buffer> {
    const t = index / this.#settings.fps;
    const ctx = this.#ctx;
    this.#drawBackground(t);
    ctx.save();
    this.#applyCamera(t);
    if (this.#motifs.has('moon')) this.#drawOrb(t, MOON);
    else if (this.#motifs.has('sun')) this.#drawOrb(t, this.#accentNear(WARM_HUES, SUN));
    if (this.#motifs.has('stars')) this.#drawStars(t);
    this.#drawShapes(t);
    if (this.#motifs.has('waves')) this.#drawWaves(t);
    ctx.restore();
    if (this.#motifs.has('rain')) this.#drawRain(t);
    if (this.#motifs.has('snow')) this.#drawSnow(t);
    if (this.#vignette) {
      const { image, rects } = this.#vignette;
      for (const [x, y, w, h] of rects) ctx.drawImage(image, x, y, w, h, x, y, w, h);
    }
    drawCaption(ctx, this.#caption);
    return this.#pixels();
  }

  async close(): Promise<void> {}

  #pose(t: number): CameraPose {
    const second = Math.floor(t);
    const a = this.#camera[Math.min(second, this.#camera.length - 1)];
    const b = this.#camera[Math.min(second + 1, this.#camera.length - 1)];
    if (!a || !b) return { dx: 0, dy: 0, zoom: 1, angle: 0 };
    const k = ease(t - second);
    return {
      dx: lerp(a.dx, b.dx, k),
      dy: lerp(a.dy, b.dy, k),
      zoom: lerp(a.zoom, b.zoom, k),
      angle: lerp(a.angle, b.angle, k),
    };
  }

  /** Zooms and turns about the frame centre, then shifts. */
  #applyCamera(t: number): void {
    const { width, height } = this.#settings.frame;
    const pose = this.#pose(t);
    const short = Math.min(width, height);
    this.#ctx.translate(width / 2, height / 2);
    this.#ctx.rotate(pose.angle);
    this.#ctx.scale(pose.zoom, pose.zoom);
    this.#ctx.translate(-width / 2 + pose.dx * short, -height / 2 + pose.dy * short);
  }

  /**
   * A three-colour linear gradient turning slowly, its middle colour sliding along it. Drawn as two two-stop
   * gradients (the first over the whole frame, the second over the half-plane past the middle stop), which
   * gives the same picture: Skia fills a gradient whose only stops are at 0 and 1 about three times as fast
   * as one with a stop in between, and this is the largest area the scene draws.
   */
  #drawBackground(t: number): void {
    const ctx = this.#ctx;
    const { width, height } = this.#settings.frame;
    const [c0, c1, c2] = this.#palette.background;
    const angle = this.#gradientAngle + t * 0.12;
    const reach = Math.hypot(width, height) / 2;
    const ux = Math.cos(angle);
    const uy = Math.sin(angle);
    const x0 = width / 2 - ux * reach;
    const y0 = height / 2 - uy * reach;
    const x1 = width / 2 + ux * reach;
    const y1 = height / 2 + uy * reach;
    const middle = 0.5 + 0.2 * Math.sin(t * 0.7 + this.#gradientAngle);
    const xm = lerp(x0, x1, middle);
    const ym = lerp(y0, y1, middle);
    const first = ctx.createLinearGradient(x0, y0, xm, ym);
    first.addColorStop(0, css(c0));
    first.addColorStop(1, css(c1));
    ctx.fillStyle = first;
    ctx.fillRect(0, 0, width, height);
    const second = ctx.createLinearGradient(xm, ym, x1, y1);
    second.addColorStop(0, css(c1));
    second.addColorStop(1, css(c2));
    ctx.fillStyle = second;
    // The half-plane past the middle stop, as a square reaching beyond the frame on every side.
    const side = 2 * reach;
    ctx.beginPath();
    ctx.moveTo(xm - uy * side, ym + ux * side);
    ctx.lineTo(xm + uy * side, ym - ux * side);
    ctx.lineTo(xm + uy * side + ux * side, ym - ux * side + uy * side);
    ctx.lineTo(xm - uy * side + ux * side, ym + ux * side + uy * side);
    ctx.closePath();
    ctx.fill();
  }

  #drawShapes(t: number): void {
    const ctx = this.#ctx;
    const { width, height } = this.#settings.frame;
    const short = Math.min(width, height);
    const glow = !this.#settings.fast;
    const pose = this.#pose(t);
    for (const shape of this.#shapes) {
      // Parallax: near shapes (depth > 1) follow the camera's shift further than far ones.
      const x =
        wrap(shape.x + shape.vx * t, -WRAP_MARGIN, 1 + WRAP_MARGIN) * width +
        pose.dx * short * (shape.depth - 1);
      const y =
        wrap(shape.y + shape.vy * t, -WRAP_MARGIN, 1 + WRAP_MARGIN) * height +
        pose.dy * short * (shape.depth - 1);
      const pulse = 1 + 0.12 * Math.sin(TAU * shape.pulseHz * t + shape.phase);
      const size = shape.size * short * pulse * (0.7 + 0.3 * shape.depth);
      ctx.save();
      ctx.translate(x, y);
      ctx.rotate(shape.angle + shape.spin * t);
      ctx.globalCompositeOperation = glow ? (this.#palette.light ? 'multiply' : 'screen') : 'source-over';
      this.#drawShape(shape, size, glow);
      ctx.restore();
    }
    ctx.globalCompositeOperation = 'source-over';
  }

  #drawShape(shape: Shape, size: number, glow: boolean): void {
    const ctx = this.#ctx;
    const colour = css(shape.colour, shape.alpha);
    switch (shape.kind) {
      case 'circle': {
        if (glow) {
          const gradient = ctx.createRadialGradient(0, 0, 0, 0, 0, size);
          gradient.addColorStop(0, css(shape.colour, shape.alpha));
          gradient.addColorStop(0.6, css(shape.colour, shape.alpha * 0.55));
          gradient.addColorStop(1, css(shape.colour, 0));
          ctx.fillStyle = gradient;
        } else {
          ctx.fillStyle = colour;
        }
        ctx.beginPath();
        ctx.arc(0, 0, glow ? size : size * 0.7, 0, TAU);
        ctx.fill();
        return;
      }
      case 'ring':
        ctx.strokeStyle = colour;
        ctx.lineWidth = size * 0.14;
        ctx.beginPath();
        ctx.arc(0, 0, size * 0.6, 0, TAU);
        ctx.stroke();
        return;
      case 'square': {
        const side = size * 0.9;
        ctx.fillStyle = colour;
        ctx.beginPath();
        if (glow) ctx.roundRect(-side / 2, -side / 2, side, side, side * 0.18);
        else ctx.rect(-side / 2, -side / 2, side, side);
        ctx.fill();
        return;
      }
      case 'triangle':
        ctx.fillStyle = colour;
        ctx.beginPath();
        for (let i = 0; i < 3; i++) {
          const a = (i / 3) * TAU - Math.PI / 2;
          if (i === 0) ctx.moveTo(Math.cos(a) * size * 0.6, Math.sin(a) * size * 0.6);
          else ctx.lineTo(Math.cos(a) * size * 0.6, Math.sin(a) * size * 0.6);
        }
        ctx.closePath();
        ctx.fill();
        return;
      case 'bar':
        ctx.fillStyle = colour;
        ctx.fillRect(-size, -size * 0.08, size * 2, size * 0.16);
        return;
    }
  }

  /** The first accent whose hue lies in one of `ranges`, so a sun is warm and water is blue whatever comes first. */
  #accentNear(ranges: readonly (readonly [number, number])[], fallback: Hsl): Hsl {
    const inRange = (c: Hsl): boolean => c.s > 0.3 && ranges.some(([from, to]) => c.h >= from && c.h <= to);
    return this.#palette.accents.find(inRange) ?? fallback;
  }

  #drawOrb(t: number, colour: Hsl): void {
    const ctx = this.#ctx;
    const { width, height } = this.#settings.frame;
    const short = Math.min(width, height);
    const x = width * (0.3 + 0.02 * t);
    const y = height * (0.38 - 0.01 * t);
    const radius = short * 0.2 * (1 + 0.03 * Math.sin(t * 1.3));
    if (!this.#settings.fast) {
      const halo = ctx.createRadialGradient(x, y, radius * 0.8, x, y, radius * 2.4);
      halo.addColorStop(0, css({ ...colour, l: Math.min(0.85, colour.l + 0.2) }, 0.5));
      halo.addColorStop(1, css(colour, 0));
      ctx.fillStyle = halo;
      // Only the ring the halo shows in: it is clear beyond 2.4 radii, and the opaque orb covers the middle.
      ctx.beginPath();
      ctx.arc(x, y, radius * 2.4, 0, TAU);
      ctx.moveTo(x + radius * 0.9, y);
      ctx.arc(x, y, radius * 0.9, 0, TAU);
      ctx.fill('evenodd');
    }
    ctx.fillStyle = css({ ...colour, l: Math.min(0.9, colour.l + 0.25) });
    ctx.beginPath();
    ctx.arc(x, y, radius, 0, TAU);
    ctx.fill();
  }

  #drawStars(t: number): void {
    const ctx = this.#ctx;
    const { width, height } = this.#settings.frame;
    const unit = Math.min(width, height) / 360;
    ctx.fillStyle = '#fff';
    for (const star of this.#particles) {
      ctx.globalAlpha = 0.35 + 0.65 * (0.5 + 0.5 * Math.sin(t * 2.5 * star.speed + star.phase));
      const x = wrap(star.x - 0.004 * star.speed * t, 0, 1) * width;
      ctx.beginPath();
      ctx.arc(x, star.y * height, unit * star.size, 0, TAU);
      ctx.fill();
    }
    ctx.globalAlpha = 1;
  }

  #drawWaves(t: number): void {
    const ctx = this.#ctx;
    const { width, height } = this.#settings.frame;
    const layers = this.#settings.fast ? 2 : 3;
    const step = Math.max(4, Math.round(width / (this.#settings.fast ? 24 : 64)));
    const base = this.#accentNear(WATER_HUES, WATER);
    for (let layer = 0; layer < layers; layer++) {
      const level = height * (0.62 + layer * 0.1);
      const amplitude = height * (0.035 - layer * 0.006);
      const wavelength = width * (0.45 - layer * 0.08);
      const speed = 0.6 + layer * 0.35;
      ctx.fillStyle = css({ ...base, l: Math.max(0.1, base.l - 0.08 * layer) }, 0.55 + 0.15 * layer);
      ctx.beginPath();
      ctx.moveTo(-width * 0.2, height * 1.2);
      for (let x = -width * 0.2; x <= width * 1.2; x += step) {
        ctx.lineTo(x, level + amplitude * Math.sin((x / wavelength) * TAU - t * speed * TAU * 0.5 + layer));
      }
      ctx.lineTo(width * 1.2, height * 1.2);
      ctx.closePath();
      ctx.fill();
    }
  }

  #drawRain(t: number): void {
    const ctx = this.#ctx;
    const { width, height } = this.#settings.frame;
    ctx.strokeStyle = 'rgba(220, 230, 255, 0.45)';
    ctx.lineWidth = Math.max(1, Math.min(width, height) / 400);
    ctx.beginPath();
    for (const drop of this.#particles) {
      const y = wrap(drop.y + t * 1.4 * drop.speed, -0.1, 1.1) * height;
      const x = wrap(drop.x + 0.1 * (y / height), 0, 1) * width;
      const length = height * 0.05 * drop.speed;
      ctx.moveTo(x, y);
      ctx.lineTo(x + length * 0.15, y + length);
    }
    ctx.stroke();
  }

  #drawSnow(t: number): void {
    const ctx = this.#ctx;
    const { width, height } = this.#settings.frame;
    const unit = Math.min(width, height) / 240;
    ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
    for (const flake of this.#particles) {
      const y = wrap(flake.y + t * 0.12 * flake.speed, -0.05, 1.05) * height;
      const x = wrap(flake.x + 0.02 * Math.sin(t * 1.5 + flake.phase), 0, 1) * width;
      ctx.beginPath();
      ctx.arc(x, y, unit * flake.size, 0, TAU);
      ctx.fill();
    }
  }
}
