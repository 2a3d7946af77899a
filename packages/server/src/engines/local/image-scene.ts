/**
 * Image mode: the first image is exactly the first frame, then a slow push-in keeps it moving. With a second
 * image, the scene crossfades to it mid-way while it settles, so the last frame is exactly that image.
 */
import { type Canvas, createCanvas, type SKRSContext2D } from '@napi-rs/canvas';
import { TaskFailure } from '../../domain/errors.js';
import type { LocalAsset } from '../../ports/engine.js';
import type { Scene, SceneSettings } from './scene.js';
import { hashString, mixSeeds, SeededRandom } from './seeded-random.js';
import {
  type Drift,
  drawStill,
  ease,
  loadStill,
  randomPushIn,
  reversed,
  type Still,
  viewAt,
} from './still-image.js';

/** The crossfade to the last image spans this part of the timeline. */
const CROSSFADE_START = 0.3;
const CROSSFADE_END = 0.7;

interface Shot {
  readonly still: Still;
  readonly drift: Drift;
}

export class ImageScene implements Scene {
  readonly #settings: SceneSettings;
  readonly #first: Shot;
  readonly #last: Shot | undefined;
  readonly #canvas: Canvas;
  readonly #ctx: SKRSContext2D;
  /** The incoming image is drawn here whole, then laid over the outgoing one at the crossfade's opacity. */
  #layer: { canvas: Canvas; ctx: SKRSContext2D } | undefined;

  private constructor(settings: SceneSettings, first: Shot, last: Shot | undefined) {
    this.#settings = settings;
    this.#first = first;
    this.#last = last;
    this.#canvas = createCanvas(settings.frame.width, settings.frame.height);
    this.#ctx = this.#canvas.getContext('2d', { alpha: false });
  }

  static async create(settings: SceneSettings, images: readonly LocalAsset[]): Promise<ImageScene> {
    const [firstAsset, lastAsset] = images;
    if (!firstAsset)
      throw new TaskFailure('invalid_asset', 'image_urls: image-to-video needs a first-frame image.');
    const random = new SeededRandom(mixSeeds(settings.seed, hashString(settings.prompt)));
    const strength = settings.fast ? 0.08 : 0.12;
    const first: Shot = {
      still: await loadStill(firstAsset, settings.frame),
      drift: randomPushIn(random.fork('first'), strength),
    };
    const last: Shot | undefined = lastAsset
      ? {
          still: await loadStill(lastAsset, settings.frame),
          drift: reversed(randomPushIn(random.fork('last'), strength)),
        }
      : undefined;
    return new ImageScene(settings, first, last);
  }

  async render(index: number): Promise<Buffer> {
    const { frame, frameCount } = this.#settings;
    const t = frameCount > 1 ? index / (frameCount - 1) : 0;
    const mix = this.#last ? ease((t - CROSSFADE_START) / (CROSSFADE_END - CROSSFADE_START)) : 0;
    if (mix < 1) drawStill(this.#ctx, this.#first.still, viewAt(this.#first.drift, t), frame);
    if (this.#last && mix > 0) {
      if (mix >= 1) {
        drawStill(this.#ctx, this.#last.still, viewAt(this.#last.drift, t), frame);
      } else {
        const layer = this.#ensureLayer();
        drawStill(layer.ctx, this.#last.still, viewAt(this.#last.drift, t), frame);
        this.#ctx.globalAlpha = mix;
        this.#ctx.drawImage(layer.canvas, 0, 0);
        this.#ctx.globalAlpha = 1;
      }
    }
    return this.#canvas.data();
  }

  async close(): Promise<void> {}

  #ensureLayer(): { canvas: Canvas; ctx: SKRSContext2D } {
    if (!this.#layer) {
      const canvas = createCanvas(this.#settings.frame.width, this.#settings.frame.height);
      this.#layer = { canvas, ctx: canvas.getContext('2d', { alpha: false }) };
    }
    return this.#layer;
  }
}
