/**
 * Jobs over every quality and aspect ratio a request can have (3 × 7), spread over the six model IDs so that
 * each model ID gets three or four of them, with the assets each mode takes: what a test renders through an
 * engine to show that every model ID completes at every frame, conformed exactly to the request; or, where a
 * video for each costs minutes, whose requests a test checks, rendering only a covering few (coveringItems).
 */
import { join } from 'node:path';
import { ASPECT_RATIOS, QUALITIES } from '../../src/domain/frame-size.js';
import { getModel, MODEL_IDS } from '../../src/domain/models.js';
import type { RenderJob } from '../../src/ports/engine.js';
import { writeTestAudio, writeTestImage } from './media-fixtures.js';
import { type JobAsset, makeJob } from './render-jobs.js';

export interface GridAssets {
  /** A 16:9 picture (1000×560) and a 3:4 one (600×800): `adaptive` resolves against the first image. */
  readonly wide: JobAsset;
  readonly tall: JobAsset;
  readonly audio: string;
}

export async function writeGridAssets(dir: string): Promise<GridAssets> {
  const wide = { path: join(dir, 'wide-image'), width: 1000, height: 560 };
  const tall = { path: join(dir, 'tall-image'), width: 600, height: 800 };
  const audio = join(dir, 'tone.wav');
  await Promise.all([
    writeTestImage(wide.path, { ...wide, colour: [30, 90, 200], accent: [250, 220, 40], format: 'png' }),
    writeTestImage(tall.path, { ...tall, colour: [200, 60, 40], accent: [40, 220, 90], format: 'jpeg' }),
    writeTestAudio(audio, { seconds: 2 }),
  ]);
  return { wide, tall, audio };
}

/** 21 jobs: each quality × ratio once, model IDs in turn; 4 or 5 seconds; images and audio as the mode takes. */
export function gridJobs(dir: string, assets: GridAssets, taskPrefix: string): RenderJob[] {
  const combos = QUALITIES.flatMap((quality) => ASPECT_RATIOS.map((ratio) => ({ quality, ratio })));
  return combos.map(({ quality, ratio }, index) => {
    const id = MODEL_IDS[index % MODEL_IDS.length] as (typeof MODEL_IDS)[number];
    const model = getModel(id);
    const first = index % 2 === 0 ? assets.wide : assets.tall;
    const second = first === assets.wide ? assets.tall : assets.wide;
    const images =
      model.mode === 'text' ? [] : model.mode === 'image' && index % 4 === 1 ? [first, second] : [first];
    const audios = model.mode === 'reference' && index % 4 === 2 ? [assets.audio] : [];
    return makeJob(dir, {
      taskPrefix,
      model: id,
      quality,
      ratio,
      duration: index % 3 === 0 ? 5 : 4,
      seed: 1000 + index,
      prompt: `grid job ${index}: a lighthouse at dusk, ${quality} ${ratio}`,
      images,
      audios,
    });
  });
}

/**
 * What a grid job shows of an engine beside its request: its model ID, its quality, the orientation of its
 * frame, an audio reference (an AAC track in the result) and two images.
 */
export function gridFeatures(job: RenderJob): string[] {
  const { width, height } = job.frame;
  const orientation = width > height ? 'landscape' : width < height ? 'portrait' : 'square';
  return [
    `model ${job.model.id}`,
    `quality ${job.params.quality}`,
    `frame ${orientation}`,
    ...(job.audios.length > 0 ? ['audio'] : []),
    ...(job.images.length > 1 ? ['two images'] : []),
  ];
}

/**
 * The few of `items` that between them have every feature any of them has, picked greedily: each time the
 * one with the most features not yet had, the one with the fewest pixels × seconds to render on a tie, then
 * the first. Which jobs a test renders in full when it checks every job's request and a video for each would
 * cost minutes.
 */
export function coveringItems<T>(
  items: readonly T[],
  job: (item: T) => RenderJob,
  features: (item: T) => readonly string[],
): T[] {
  const cost = (item: T): number => {
    const { frame, params } = job(item);
    return frame.width * frame.height * params.duration;
  };
  const had = new Set<string>();
  const chosen: T[] = [];
  const fresh = (item: T): number => new Set(features(item).filter((f) => !had.has(f))).size;
  for (;;) {
    let best: T | undefined;
    for (const item of items) {
      if (fresh(item) === 0) continue;
      if (
        best === undefined ||
        fresh(item) > fresh(best) ||
        (fresh(item) === fresh(best) && cost(item) < cost(best))
      )
        best = item;
    }
    if (best === undefined) return chosen;
    chosen.push(best);
    for (const feature of features(best)) had.add(feature);
  }
}

export function describeJob(job: RenderJob): string {
  return `${job.model.id} ${job.params.quality} ${job.params.aspect_ratio} → ${job.frame.width}x${job.frame.height}`;
}
