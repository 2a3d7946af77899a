/**
 * Reference mode: the reference images and videos, each shown in turn for an equal share of the duration,
 * fitted to the frame, in the order the prompt mentions them (prompt-mentions.ts), else images then videos. Images drift slowly; videos play (looped if short). The standard
 * variant crossfades between segments; the fast one cuts, so video frames pass straight to the encoder.
 */
import { type Canvas, createCanvas, ImageData, type SKRSContext2D } from '@napi-rs/canvas';
import { TaskFailure } from '../../domain/errors.js';
import { probe } from '../../media/probe.js';
import type { LocalAsset } from '../../ports/engine.js';
import { mentionedOrder } from './prompt-mentions.js';
import type { Scene, SceneSettings } from './scene.js';
import { hashString, mixSeeds, SeededRandom } from './seeded-random.js';
import {
  assetLabel,
  type Drift,
  drawStill,
  ease,
  loadStill,
  randomPushIn,
  type Still,
  viewAt,
} from './still-image.js';
import { VideoFrames } from './video-frames.js';

const CROSSFADE_SECONDS = 0.5;

interface ImageSource {
  readonly kind: 'image';
  readonly still: Still;
  readonly drift: Drift;
}

interface VideoSource {
  readonly kind: 'video';
  readonly asset: LocalAsset;
  frames?: VideoFrames;
  last?: Buffer;
}

interface Segment {
  readonly source: ImageSource | VideoSource;
  /** First frame the segment is visible in, fading in when it follows another segment. */
  readonly start: number;
  /** Frame after the segment's last one. */
  readonly end: number;
  readonly fadeFrames: number;
}

interface Surface {
  readonly canvas: Canvas;
  readonly ctx: SKRSContext2D;
}

export interface ReferenceSceneInputs {
  readonly images: readonly LocalAsset[];
  readonly videos: readonly LocalAsset[];
  readonly ffmpegPath: string;
  readonly signal: AbortSignal;
}

async function checkVideo(asset: LocalAsset, signal: AbortSignal): Promise<void> {
  let hasVideo: boolean;
  try {
    hasVideo = (await probe(asset.path, signal)).streams.some((s) => s.type === 'video');
  } catch (error) {
    if (signal.aborted) throw error;
    throw new TaskFailure('invalid_asset', `${assetLabel(asset)}: the file is not a readable video.`, {
      cause: error,
    });
  }
  if (!hasVideo)
    throw new TaskFailure('invalid_asset', `${assetLabel(asset)}: the file has no video stream.`);
}

/** Splits `frameCount` frames into `count` near-equal parts, the earlier parts taking the remainder. */
function splitFrames(frameCount: number, count: number): number[] {
  const base = Math.floor(frameCount / count);
  const extra = frameCount % count;
  return Array.from({ length: count }, (_, i) => base + (i < extra ? 1 : 0));
}

export class ReferenceScene implements Scene {
  readonly #settings: SceneSettings;
  readonly #segments: readonly Segment[];
  readonly #ffmpegPath: string;
  readonly #main: Surface;
  #layer: Surface | undefined;

  private constructor(settings: SceneSettings, segments: readonly Segment[], ffmpegPath: string) {
    this.#settings = settings;
    this.#segments = segments;
    this.#ffmpegPath = ffmpegPath;
    this.#main = ReferenceScene.#surface(settings);
  }

  static async create(settings: SceneSettings, inputs: ReferenceSceneInputs): Promise<ReferenceScene> {
    const random = new SeededRandom(mixSeeds(settings.seed, hashString(settings.prompt)));
    const sources: (ImageSource | VideoSource)[] = [];
    for (const slot of mentionedOrder(settings.prompt, inputs.images.length, inputs.videos.length)) {
      const asset = (slot.kind === 'image' ? inputs.images : inputs.videos)[slot.index];
      if (!asset) continue;
      if (slot.kind === 'image') {
        const drift = randomPushIn(random.fork(`image ${asset.index}`), settings.fast ? 0.05 : 0.07);
        sources.push({ kind: 'image', still: await loadStill(asset, settings.frame), drift });
      } else {
        await checkVideo(asset, inputs.signal);
        sources.push({ kind: 'video', asset });
      }
    }
    if (sources.length === 0) {
      throw new TaskFailure(
        'invalid_asset',
        'image_urls: reference-to-video needs at least one image or video.',
      );
    }
    const lengths = splitFrames(settings.frameCount, sources.length);
    const shortest = Math.min(...lengths);
    const fadeFrames = settings.fast
      ? 0
      : Math.min(Math.round(CROSSFADE_SECONDS * settings.fps), Math.floor(shortest / 3));
    let boundary = 0;
    const segments = sources.map((source, i): Segment => {
      const fade = i === 0 ? 0 : fadeFrames;
      const segment = { source, start: boundary - fade, end: boundary + (lengths[i] ?? 0), fadeFrames: fade };
      boundary = segment.end;
      return segment;
    });
    return new ReferenceScene(settings, segments, inputs.ffmpegPath);
  }

  async render(index: number): Promise<Buffer> {
    const visible = this.#segments.filter((s) => index >= s.start && index < s.end);
    const [below, above] = visible;
    if (!below) throw new Error(`no segment covers frame ${index}`);
    if (!above) {
      if (below.source.kind === 'video') return this.#videoFrame(below, below.source);
      this.#draw(this.#main, below, index);
      return this.#main.canvas.data();
    }
    const bottom = await this.#pixelsOrDraw(this.#main, below, index);
    if (bottom) this.#putPixels(this.#main, bottom);
    const layer = this.#ensureLayer();
    const top = await this.#pixelsOrDraw(layer, above, index);
    if (top) this.#putPixels(layer, top);
    this.#main.ctx.globalAlpha = ease((index - above.start + 1) / (above.fadeFrames + 1));
    this.#main.ctx.drawImage(layer.canvas, 0, 0);
    this.#main.ctx.globalAlpha = 1;
    return this.#main.canvas.data();
  }

  async close(): Promise<void> {
    const closing = this.#segments.map((segment) =>
      segment.source.kind === 'video' ? segment.source.frames?.close() : undefined,
    );
    await Promise.all(closing);
  }

  /** Draws an image segment onto `surface`, or returns a video segment's pixels for the caller to place. */
  async #pixelsOrDraw(surface: Surface, segment: Segment, index: number): Promise<Buffer | null> {
    if (segment.source.kind === 'video') return this.#videoFrame(segment, segment.source);
    this.#draw(surface, segment, index);
    return null;
  }

  #draw(surface: Surface, segment: Segment, index: number): void {
    if (segment.source.kind !== 'image') return;
    const span = segment.end - segment.start - 1;
    const t = span > 0 ? (index - segment.start) / span : 0;
    drawStill(surface.ctx, segment.source.still, viewAt(segment.source.drift, t), this.#settings.frame);
  }

  async #videoFrame(segment: Segment, source: VideoSource): Promise<Buffer> {
    source.frames ??= new VideoFrames({
      ffmpegPath: this.#ffmpegPath,
      asset: source.asset,
      frame: this.#settings.frame,
      fps: this.#settings.fps,
      frameCount: segment.end - segment.start,
      fill: this.#settings.fast ? 'black' : 'blur',
    });
    // A decoder that stops early (a stream that cannot loop) leaves its last frame on screen.
    const frame = (await source.frames.next()) ?? source.last;
    if (!frame)
      throw new TaskFailure('invalid_asset', `${assetLabel(source.asset)}: the video has no frames.`);
    source.last = frame;
    return frame;
  }

  #putPixels(surface: Surface, pixels: Buffer): void {
    const { width, height } = this.#settings.frame;
    const data = new Uint8ClampedArray(pixels.buffer, pixels.byteOffset, pixels.length);
    surface.ctx.putImageData(new ImageData(data, width, height), 0, 0);
  }

  #ensureLayer(): Surface {
    this.#layer ??= ReferenceScene.#surface(this.#settings);
    return this.#layer;
  }

  static #surface(settings: SceneSettings): Surface {
    const canvas = createCanvas(settings.frame.width, settings.frame.height);
    return { canvas, ctx: canvas.getContext('2d', { alpha: false }) };
  }
}
