import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type FixedAspectRatio, frameSize, type Quality } from '../src/domain/frame-size.js';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { getModel, type ModelId } from '../src/domain/models.js';
import { LocalEngine } from '../src/engines/local/local-engine.js';
import { TaskFailure } from '../src/errors.js';
import { type LocalAsset, OUTPUT_FPS, type RenderContext, type RenderJob } from '../src/ports/engine.js';
import { imageMeanColour, writeTestAudio, writeTestImage, writeTestVideo } from './helpers/media-fixtures.js';
import {
  audioSeconds,
  colourDistance,
  frameMeanColour,
  type Mp4Facts,
  mp4Facts,
  type Rgb,
} from './helpers/mp4-facts.js';

const RED: Rgb = [220, 30, 40];
const BLUE: Rgb = [30, 60, 220];
const GREEN: Rgb = [40, 200, 60];
/** How far (RGB distance) a frame's mean colour may be from the picture it should show. */
const RESEMBLES = 45;

let dir: string;
let jobCount = 0;

interface JobOptions {
  readonly model?: ModelId;
  readonly prompt?: string;
  readonly duration?: number;
  readonly quality?: Quality;
  readonly ratio?: FixedAspectRatio;
  readonly seed?: number;
  readonly images?: readonly string[];
  readonly videos?: readonly string[];
  readonly audios?: readonly string[];
}

function assets(field: LocalAsset['field'], paths: readonly string[] = []): LocalAsset[] {
  return paths.map((path, index) => ({ field, index, url: `https://example.test/${field}/${index}`, path }));
}

function makeJob(options: JobOptions = {}): RenderJob {
  jobCount++;
  const quality = options.quality ?? '480p';
  const ratio = options.ratio ?? '16:9';
  const params: GenerationParams = {
    prompt: options.prompt ?? 'glowing orange circles drifting over a deep blue sea at sunset',
    image_urls: (options.images ?? []).map((_, i) => `https://example.test/image_urls/${i}`),
    video_urls: (options.videos ?? []).map((_, i) => `https://example.test/video_urls/${i}`),
    audio_urls: (options.audios ?? []).map((_, i) => `https://example.test/audio_urls/${i}`),
    duration: options.duration ?? 4,
    quality,
    aspect_ratio: ratio,
    seed: options.seed ?? 42,
    callback_url: null,
  };
  return {
    taskId: `task-test-${jobCount}`,
    model: getModel(options.model ?? 'videogen-2.0-text-to-video'),
    params,
    frame: frameSize(quality, ratio),
    fps: OUTPUT_FPS,
    images: assets('image_urls', options.images),
    videos: assets('video_urls', options.videos),
    audios: assets('audio_urls', options.audios),
    outputPath: join(dir, `out-${jobCount}`, 'result.mp4'),
    workDir: join(dir, `work-${jobCount}`),
  };
}

function context(signal: AbortSignal = new AbortController().signal): RenderContext & { progress: number[] } {
  const progress: number[] = [];
  return { signal, progress, onProgress: (fraction) => progress.push(fraction) };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Asserts what decisions.md §6 promises of every result. */
function assertResultShape(facts: Mp4Facts, job: RenderJob): void {
  const frames = job.params.duration * OUTPUT_FPS;
  assert.ok(facts.video, 'has a video stream');
  assert.equal(facts.video.codec, 'h264');
  assert.equal(facts.video.pixelFormat, 'yuv420p');
  assert.equal(facts.video.width, job.frame.width);
  assert.equal(facts.video.height, job.frame.height);
  assert.equal(facts.video.frameRate, OUTPUT_FPS);
  assert.equal(facts.video.frames, frames);
  assert.ok(
    Math.abs(facts.duration - job.params.duration) <= 1 / OUTPUT_FPS,
    `duration ${facts.duration} is within a frame of ${job.params.duration}`,
  );
  assert.ok(facts.moovBeforeMdat, `moov before mdat: ${facts.boxes.join(' ')}`);
  assert.equal(facts.audio !== undefined, job.audios.length > 0, 'audio stream iff an audio reference');
  if (facts.audio) assert.equal(facts.audio.codec, 'aac');
}

/** ffmpeg processes whose parent is this test process (Linux /proc). */
async function childFfmpegs(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const match = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat);
    if (match && match[1] === 'ffmpeg' && Number(match[2]) === process.pid) pids.push(Number(entry));
  }
  return pids;
}

const engine = new LocalEngine();
const fixtures = {
  red: '',
  blueJpeg: '',
  wideGreen: '',
  broken: '',
  video: '',
  greenVideo: '',
  audio: '',
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-local-engine-'));
  fixtures.red = join(dir, 'red.png');
  fixtures.blueJpeg = join(dir, 'blue.jpg');
  fixtures.wideGreen = join(dir, 'green-wide.webp');
  fixtures.broken = join(dir, 'broken.png');
  fixtures.video = join(dir, 'testsrc.mp4');
  fixtures.greenVideo = join(dir, 'green.mp4');
  fixtures.audio = join(dir, 'tone.wav');
  await Promise.all([
    writeTestImage(fixtures.red, { width: 640, height: 360, colour: RED, accent: [250, 120, 120] }),
    // 4:3 on a 16:9 frame: contained, with a blurred fill.
    writeTestImage(fixtures.blueJpeg, { width: 400, height: 300, colour: BLUE, accent: [120, 150, 250] }),
    writeTestImage(fixtures.wideGreen, { width: 500, height: 200, colour: GREEN }),
    writeFile(fixtures.broken, 'this is not really a PNG file'),
    writeTestVideo(fixtures.video, { seconds: 2 }),
    writeTestVideo(fixtures.greenVideo, { seconds: 1.5, colour: '0x28C83C', width: 240, height: 320 }),
    writeTestAudio(fixtures.audio, { seconds: 1.5 }),
  ]);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('local engine', () => {
  it('renders a text-mode MP4 as decisions.md §6 describes, reporting progress', async () => {
    const job = makeJob();
    const ctx = context();
    await engine.render(job, ctx);
    assertResultShape(await mp4Facts(job.outputPath), job);
    assert.ok(ctx.progress.length > 0, 'reported progress');
    assert.equal(ctx.progress.at(-1), 1);
    for (let i = 1; i < ctx.progress.length; i++) {
      assert.ok((ctx.progress[i] ?? 0) >= (ctx.progress[i - 1] ?? 0), 'progress never decreases');
    }
  });

  it('gives exactly the requested frame size for several qualities and ratios', async () => {
    const cases: [Quality, FixedAspectRatio, number, number][] = [
      ['480p', '9:16', 480, 854],
      ['720p', '1:1', 720, 720],
      ['480p', '21:9', 1120, 480],
    ];
    for (const [quality, ratio, width, height] of cases) {
      const job = makeJob({ model: 'videogen-2.0-fast-text-to-video', quality, ratio });
      await engine.render(job, context());
      const facts = await mp4Facts(job.outputPath);
      assert.equal(facts.video?.width, width, `${quality} ${ratio} width`);
      assert.equal(facts.video?.height, height, `${quality} ${ratio} height`);
      assertResultShape(facts, job);
    }
  });

  it('is byte-identical for the same seed and different for another seed', async () => {
    const first = makeJob({ seed: 7 });
    const again = makeJob({ seed: 7 });
    const other = makeJob({ seed: 8 });
    for (const job of [first, again, other]) await engine.render(job, context());
    const [a, b, c] = await Promise.all([first, again, other].map((job) => readFile(job.outputPath)));
    assert.ok(a && b && c);
    assert.ok(a.equals(b), 'same job, same bytes');
    assert.ok(!a.equals(c), 'another seed, another video');
    assert.ok(!a.includes('x264'), 'no encoder version string in the file');
    assert.ok(!a.includes('Lavf'), 'no muxer version string in the file');
  });

  it('image mode starts on the first image and ends on the second', async () => {
    const job = makeJob({
      model: 'videogen-2.0-image-to-video',
      prompt: 'the camera pushes in slowly',
      images: [fixtures.red, fixtures.blueJpeg],
    });
    await engine.render(job, context());
    const facts = await mp4Facts(job.outputPath);
    assertResultShape(facts, job);
    const [firstImage, lastImage] = await Promise.all([
      imageMeanColour(fixtures.red),
      imageMeanColour(fixtures.blueJpeg),
    ]);
    const first = await frameMeanColour(job.outputPath, 0);
    const middle = await frameMeanColour(job.outputPath, Math.floor((facts.video?.frames ?? 0) / 2));
    const last = await frameMeanColour(job.outputPath, (facts.video?.frames ?? 0) - 1);
    assert.ok(colourDistance(first, firstImage) < RESEMBLES, `first frame ${first} resembles ${firstImage}`);
    assert.ok(colourDistance(last, lastImage) < RESEMBLES, `last frame ${last} resembles ${lastImage}`);
    assert.ok(colourDistance(middle, firstImage) > RESEMBLES / 2, 'mid-way it is crossfading');
  });

  it('image mode with one image of another shape, fast variant', async () => {
    const job = makeJob({
      model: 'videogen-2.0-fast-image-to-video',
      images: [fixtures.wideGreen],
      quality: '480p',
      ratio: '1:1',
    });
    await engine.render(job, context());
    const facts = await mp4Facts(job.outputPath);
    assertResultShape(facts, job);
    const first = await frameMeanColour(job.outputPath, 0);
    // A 5:2 picture on a square frame is contained over a darkened blurred copy: still clearly green.
    assert.ok(first[1] > first[0] + 60 && first[1] > first[2] + 60, `first frame ${first} is green`);
  });

  it('reference mode shows the image, then the video, with the audio as soundtrack', async () => {
    const job = makeJob({
      model: 'videogen-2.0-reference-to-video',
      prompt: 'image 1 then video 1, with audio 1',
      images: [fixtures.red],
      videos: [fixtures.greenVideo],
      audios: [fixtures.audio],
    });
    await engine.render(job, context());
    const facts = await mp4Facts(job.outputPath);
    assertResultShape(facts, job);
    assert.ok(facts.audio);
    const redImage = await imageMeanColour(fixtures.red);
    const first = await frameMeanColour(job.outputPath, 0);
    const last = await frameMeanColour(job.outputPath, (facts.video?.frames ?? 0) - 1);
    assert.ok(colourDistance(first, redImage) < RESEMBLES, `first frame ${first} is the image`);
    // The 3:4 video on a 16:9 frame is contained over its blurred copy, so the whole frame stays green.
    assert.ok(colourDistance(last, GREEN) < 60, `last frame ${last} is the green video`);
    // The 1.5 s tone is looped to the full 4 s, not cut where the video ends.
    const soundtrack = await audioSeconds(job.outputPath);
    assert.ok(Math.abs(soundtrack - job.params.duration) < 0.05, `audio lasts ${soundtrack} s`);
  });

  it('reference mode with a video and audio is byte-identical for the same seed', async () => {
    const options = {
      model: 'videogen-2.0-reference-to-video',
      images: [fixtures.blueJpeg],
      videos: [fixtures.video],
      audios: [fixtures.audio],
    } as const;
    const first = makeJob({ ...options, seed: 3 });
    const again = makeJob({ ...options, seed: 3 });
    const other = makeJob({ ...options, seed: 4 });
    for (const job of [first, again, other]) await engine.render(job, context());
    const [a, b, c] = await Promise.all([first, again, other].map((job) => readFile(job.outputPath)));
    assert.ok(a && b && c);
    assert.ok(a.equals(b), 'same job, same bytes');
    assert.ok(!a.equals(c), 'another seed moves the image differently');
  });

  it('fast reference mode with a looping test-pattern video and no audio', async () => {
    const job = makeJob({
      model: 'videogen-2.0-fast-reference-to-video',
      videos: [fixtures.video],
      ratio: '9:16',
    });
    await engine.render(job, context());
    assertResultShape(await mp4Facts(job.outputPath), job);
  });

  it('rejects an undecodable image as invalid_asset naming its field and index', async () => {
    const job = makeJob({ model: 'videogen-2.0-image-to-video', images: [fixtures.red, fixtures.broken] });
    await assert.rejects(engine.render(job, context()), (error: unknown) => {
      assert.ok(error instanceof TaskFailure);
      assert.equal(error.code, 'invalid_asset');
      assert.match(error.message, /^image_urls\[1\]: /);
      return true;
    });
    assert.equal(await exists(job.outputPath), false);
  });

  it('rejects an unreadable audio reference as invalid_asset', async () => {
    const job = makeJob({
      model: 'videogen-2.0-reference-to-video',
      images: [fixtures.red],
      audios: [fixtures.broken],
    });
    await assert.rejects(engine.render(job, context()), (error: unknown) => {
      assert.ok(error instanceof TaskFailure);
      assert.equal(error.code, 'invalid_asset');
      assert.match(error.message, /^audio_urls\[0\]: /);
      return true;
    });
  });

  it('rejects a file that is not a video as invalid_asset', async () => {
    const job = makeJob({ model: 'videogen-2.0-reference-to-video', videos: [fixtures.broken] });
    await assert.rejects(engine.render(job, context()), (error: unknown) => {
      assert.ok(error instanceof TaskFailure);
      assert.equal(error.code, 'invalid_asset');
      assert.match(error.message, /^video_urls\[0\]: /);
      return true;
    });
  });

  it('reports a missing ffmpeg binary as generation_failed', async () => {
    const missing = new LocalEngine({ ffmpegPath: join(dir, 'no-such-ffmpeg') });
    await assert.rejects(missing.render(makeJob(), context()), (error: unknown) => {
      assert.ok(error instanceof TaskFailure);
      assert.equal(error.code, 'generation_failed');
      assert.match(error.message, /could not start ffmpeg/);
      return true;
    });
  });

  it("reports an ffmpeg failure as generation_failed with ffmpeg's own words", async () => {
    // libx264 refuses odd frame sizes for yuv420p.
    const job = { ...makeJob({ duration: 4 }), frame: { width: 855, height: 481 } };
    await assert.rejects(engine.render(job, context()), (error: unknown) => {
      assert.ok(error instanceof TaskFailure);
      assert.equal(error.code, 'generation_failed');
      assert.match(error.message, /ffmpeg exited with code \d+: .*divisible by 2/);
      return true;
    });
    assert.equal(await exists(job.outputPath), false);
  });

  it('stops within a second of an abort, kills ffmpeg and leaves no output', async () => {
    for (const job of [
      makeJob({ quality: '720p', duration: 15 }),
      makeJob({
        model: 'videogen-2.0-reference-to-video',
        videos: [fixtures.video],
        quality: '720p',
        duration: 15,
      }),
    ]) {
      const controller = new AbortController();
      const ctx = context(controller.signal);
      const rendering = engine.render(job, ctx);
      while (ctx.progress.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok((await childFfmpegs()).length > 0, 'ffmpeg is running');
      const abortedAt = performance.now();
      controller.abort(new Error('cancelled by test'));
      await assert.rejects(rendering, /cancelled by test/);
      assert.ok(performance.now() - abortedAt < 1000, 'rejected within a second');
      assert.deepEqual(await childFfmpegs(), [], 'no ffmpeg left running');
      assert.equal(await exists(job.outputPath), false, 'no partial output');
    }
  });

  it('rejects at once when the signal is already aborted', async () => {
    const job = makeJob();
    await assert.rejects(engine.render(job, context(AbortSignal.abort())), { name: 'AbortError' });
    assert.equal(await exists(job.outputPath), false);
  });
});
