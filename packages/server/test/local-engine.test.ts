import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TaskFailure } from '../src/domain/errors.js';
import type { FixedAspectRatio, Quality } from '../src/domain/frame-size.js';
import { renderCaption } from '../src/engines/local/caption.js';
import { LOUDNESS_LUFS } from '../src/engines/local/frame-encoder.js';
import { LocalEngine } from '../src/engines/local/local-engine.js';
import { ffmpegPath } from '../src/media/ffmpeg-paths.js';
import { OUTPUT_FPS } from '../src/ports/engine.js';
import {
  expectedStill,
  imageMeanColour,
  writeTestAudio,
  writeTestImage,
  writeTestVideo,
} from './helpers/media-fixtures.js';
import {
  audioSeconds,
  colourDistance,
  decodedAudio,
  frameMeanColour,
  fullFrame,
  integratedLoudness,
  meanDifference,
  mp4Facts,
  psnr,
  type Rgb,
} from './helpers/mp4-facts.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  makeJob,
  renderContext,
} from './helpers/render-jobs.js';
import { until } from './helpers/until.js';

const RED: Rgb = [220, 30, 40];
const BLUE: Rgb = [30, 60, 220];
const GREEN: Rgb = [40, 200, 60];
/** How far (RGB distance) a frame's mean colour may be from the picture it should show. */
const RESEMBLES = 45;
/** PSNR (dB) over which a frame shows a picture faithfully: H.264 at the engine's settings gives 35+. */
const FAITHFUL_DB = 30;
/** The fast variants draw at half size, so fine detail softens. */
const FAITHFUL_FAST_DB = 24;

let dir: string;

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function correlation(a: readonly number[], b: readonly number[]): number {
  const mean = (v: readonly number[]): number => v.reduce((sum, x) => sum + x, 0) / v.length;
  const ma = mean(a);
  const mb = mean(b);
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    const da = (a[i] ?? 0) - ma;
    const db = (b[i] ?? 0) - mb;
    ab += da * db;
    aa += da * da;
    bb += db * db;
  }
  return ab / Math.sqrt(aa * bb);
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
  quietTone: '',
  /** Textured pictures for PSNR: one larger than the 480p 16:9 frame (covers it), one square (contained). */
  wideTexture: '',
  squareTexture: '',
  /** A 16:9 test pattern at 24 fps: it covers a 16:9 frame, and its frames map one to one. */
  wideVideo: '',
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
  fixtures.quietTone = join(dir, 'quiet.wav');
  fixtures.wideTexture = join(dir, 'wide-texture.jpg');
  fixtures.squareTexture = join(dir, 'square-texture.png');
  fixtures.wideVideo = join(dir, 'wide-testsrc.mp4');
  await Promise.all([
    writeTestVideo(fixtures.wideVideo, { width: 640, height: 360, fps: 24, seconds: 2 }),
    writeTestImage(fixtures.wideTexture, {
      width: 1920,
      height: 1080,
      colour: [30, 90, 200],
      accent: [250, 210, 60],
      textured: true,
    }),
    writeTestImage(fixtures.squareTexture, {
      width: 600,
      height: 600,
      colour: [200, 40, 60],
      accent: [60, 220, 160],
      textured: true,
    }),
    writeTestAudio(fixtures.quietTone, { seconds: 3, gainDb: -24 }),
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
  it('renders a text-mode MP4 as docs/decisions.md#result-videos describes, reporting progress', async () => {
    const job = makeJob(dir);
    const ctx = renderContext();
    await engine.render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress);
  });

  it('gives exactly the requested frame size for several qualities and ratios', async () => {
    const cases: [Quality, FixedAspectRatio, number, number][] = [
      ['480p', '9:16', 480, 854],
      ['720p', '1:1', 720, 720],
      ['480p', '21:9', 1120, 480],
    ];
    for (const [quality, ratio, width, height] of cases) {
      const job = makeJob(dir, { model: 'videogen-2.0-fast-text-to-video', quality, ratio, duration: 2 });
      await engine.render(job, renderContext());
      const facts = await mp4Facts(job.outputPath);
      assert.equal(facts.video?.width, width, `${quality} ${ratio} width`);
      assert.equal(facts.video?.height, height, `${quality} ${ratio} height`);
      await assertContractVideo(job, facts);
    }
  });

  it('is byte-identical for the same seed and different for another seed', async () => {
    const first = makeJob(dir, { seed: 7, duration: 2 });
    const again = makeJob(dir, { seed: 7, duration: 2 });
    const other = makeJob(dir, { seed: 8, duration: 2 });
    for (const job of [first, again, other]) await engine.render(job, renderContext());
    const [a, b, c] = await Promise.all([first, again, other].map((job) => readFile(job.outputPath)));
    assert.ok(a && b && c);
    assert.ok(a.equals(b), 'same job, same bytes');
    assert.ok(!a.equals(c), 'another seed, another video');
    assert.ok(!a.includes('x264'), 'no encoder version string in the file');
    assert.ok(!a.includes('Lavf'), 'no muxer version string in the file');
  });

  it('makes its own soundtrack when asked: AAC the length of the video, the same for the same prompt and seed', async () => {
    const job = (seed: number, prompt = 'a brass band marching through autumn leaves') =>
      makeJob(dir, { prompt, seed, duration: 3, generateAudio: true });
    const [first, again, otherSeed, otherPrompt] = [job(7), job(7), job(8), job(7, 'rain on a tin roof')];
    const silent = makeJob(dir, { seed: 7, duration: 3, generateAudio: false });
    for (const one of [first, again, otherSeed, otherPrompt, silent])
      await engine.render(one, renderContext());
    const facts = await assertContractVideo(first);
    assert.ok(facts.audio, 'an audio stream');
    const seconds = await audioSeconds(first.outputPath);
    assert.ok(Math.abs(seconds - first.params.duration) < 0.05, `audio lasts ${seconds} s`);
    const [a, b] = await Promise.all([first, again].map((one) => readFile(one.outputPath)));
    assert.ok(a && b && a.equals(b), 'same prompt and seed, same bytes (sound included)');
    const sound = await Promise.all(
      [first, otherSeed, otherPrompt].map((one) => decodedAudio(one.outputPath)),
    );
    assert.ok(!sound[0]?.equals(sound[1] as Buffer), 'another seed, another soundtrack');
    assert.ok(!sound[0]?.equals(sound[2] as Buffer), 'another prompt, another soundtrack');
    const level = await integratedLoudness(first.outputPath);
    assert.ok(level > -40 && level < -6, `the soundtrack is audible, not loud: ${level} LUFS`);
    await assertContractVideo(silent);
  });

  it('text mode takes its colours from the colour words, and another prompt gives another video', async () => {
    const red = makeJob(dir, { prompt: 'red poppies, red lanterns and a red sky', duration: 2 });
    const blue = makeJob(dir, { prompt: 'blue ice, blue glass and a deep blue sky', duration: 2 });
    for (const job of [red, blue]) await engine.render(job, renderContext());
    const [r, b] = await Promise.all([
      frameMeanColour(red.outputPath, 24),
      frameMeanColour(blue.outputPath, 24),
    ]);
    assert.ok(r[0] > r[2] + 15, `the red prompt's frame ${r} is red`);
    assert.ok(b[2] > b[0] + 15, `the blue prompt's frame ${b} is blue`);
    const [redFrame, blueFrame] = await Promise.all(
      [red, blue].map((job) => fullFrame(job.outputPath, 24, job.frame)),
    );
    assert.ok(redFrame && blueFrame);
    const difference = meanDifference(redFrame, blueFrame);
    assert.ok(difference > 20, `the two prompts' frames differ by ${difference.toFixed(1)} per channel`);
  });

  it('text mode moves in every second', async () => {
    for (const model of ['videogen-2.0-text-to-video', 'videogen-2.0-fast-text-to-video'] as const) {
      const job = makeJob(dir, { model, prompt: 'a calm abstract composition', duration: 4 });
      await engine.render(job, renderContext());
      for (let second = 0; second < 4; second++) {
        const [a, b] = await Promise.all([
          fullFrame(job.outputPath, second * OUTPUT_FPS, job.frame),
          fullFrame(job.outputPath, second * OUTPUT_FPS + OUTPUT_FPS / 2, job.frame),
        ]);
        assert.ok(a && b);
        const moved = meanDifference(a, b);
        assert.ok(moved > 2, `${model}: second ${second} moves (${moved.toFixed(2)} per channel)`);
      }
    }
  });

  it('text mode shows the prompt as a caption', async () => {
    const prompt = 'a lighthouse on a cliff, waves breaking below, seagulls circling in the evening light';
    const job = makeJob(dir, { prompt, duration: 1 });
    await engine.render(job, renderContext());
    const caption = renderCaption(prompt, job.frame);
    assert.ok(caption, 'a caption for a non-empty prompt');
    const frame = await fullFrame(job.outputPath, 12, job.frame);
    // Inside the caption's band, the frame's brightness follows the caption's glyphs.
    const glyphs = caption.image.data();
    const expected: number[] = [];
    const actual: number[] = [];
    for (let y = 0; y < caption.image.height; y++) {
      for (let x = 0; x < caption.image.width; x++) {
        const g = (y * caption.image.width + x) * 4;
        const f = ((caption.y + y) * job.frame.width + caption.x + x) * 3;
        expected.push(glyphs[g + 1] ?? 0);
        actual.push(frame[f + 1] ?? 0);
      }
    }
    const r = correlation(expected, actual);
    assert.ok(r > 0.9, `the caption's glyphs are in the frame (correlation ${r.toFixed(3)})`);
  });

  it('image mode: the first frame is the first image, the last frame the second (PSNR)', async () => {
    for (const [model, threshold] of [
      ['videogen-2.0-image-to-video', FAITHFUL_DB],
      ['videogen-2.0-fast-image-to-video', FAITHFUL_FAST_DB],
    ] as const) {
      const job = makeJob(dir, {
        model,
        images: [fixtures.wideTexture, fixtures.squareTexture],
        duration: 3,
      });
      await engine.render(job, renderContext());
      const frames = job.params.duration * OUTPUT_FPS;
      const [first, last, firstImage, lastImage] = await Promise.all([
        fullFrame(job.outputPath, 0, job.frame),
        fullFrame(job.outputPath, frames - 1, job.frame),
        expectedStill(fixtures.wideTexture, job.frame),
        expectedStill(fixtures.squareTexture, job.frame),
      ]);
      const firstDb = psnr(first, firstImage.pixels, job.frame.width);
      // The square picture is contained: compare where it is, not the blurred fill beside it.
      const lastDb = psnr(last, lastImage.pixels, job.frame.width, lastImage.rect);
      const wrongDb = psnr(last, firstImage.pixels, job.frame.width, lastImage.rect);
      assert.ok(firstDb > threshold, `${model}: first frame ${firstDb.toFixed(1)} dB`);
      assert.ok(lastDb > threshold, `${model}: last frame ${lastDb.toFixed(1)} dB`);
      assert.ok(wrongDb < 15, `${model}: the last frame is not the first image (${wrongDb.toFixed(1)} dB)`);
    }
  });

  it('image mode starts on the first image and ends on the second', async () => {
    const job = makeJob(dir, {
      model: 'videogen-2.0-image-to-video',
      prompt: 'the camera pushes in slowly',
      images: [fixtures.red, fixtures.blueJpeg],
    });
    await engine.render(job, renderContext());
    const facts = await assertContractVideo(job);
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
    const job = makeJob(dir, {
      model: 'videogen-2.0-fast-image-to-video',
      images: [fixtures.wideGreen],
      quality: '480p',
      ratio: '1:1',
    });
    await engine.render(job, renderContext());
    await assertContractVideo(job);
    const first = await frameMeanColour(job.outputPath, 0);
    // A 5:2 picture on a square frame is contained over a darkened blurred copy: still clearly green.
    assert.ok(first[1] > first[0] + 60 && first[1] > first[2] + 60, `first frame ${first} is green`);
  });

  it('reference mode shows the image, then the video, with the audio as soundtrack', async () => {
    const job = makeJob(dir, {
      model: 'videogen-2.0-reference-to-video',
      prompt: 'image 1 then video 1, with audio 1',
      images: [fixtures.red],
      videos: [fixtures.greenVideo],
      audios: [fixtures.audio],
    });
    await engine.render(job, renderContext());
    const facts = await assertContractVideo(job);
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

  it("reference mode follows the prompt's mentions, and shows an image faithfully (PSNR)", async () => {
    const job = makeJob(dir, {
      model: 'videogen-2.0-reference-to-video',
      prompt: 'picture 1, then video 1, and image 2 last',
      images: [fixtures.wideTexture, fixtures.red],
      videos: [fixtures.greenVideo],
      duration: 3,
    });
    await engine.render(job, renderContext());
    const frames = job.params.duration * OUTPUT_FPS;
    const [first, still] = await Promise.all([
      fullFrame(job.outputPath, 0, job.frame),
      expectedStill(fixtures.wideTexture, job.frame),
    ]);
    const firstDb = psnr(first, still.pixels, job.frame.width);
    assert.ok(firstDb > FAITHFUL_DB, `the first frame is image 1 (${firstDb.toFixed(1)} dB)`);
    const middle = await frameMeanColour(job.outputPath, Math.floor(frames / 2));
    const last = await frameMeanColour(job.outputPath, frames - 1);
    assert.ok(colourDistance(middle, GREEN) < 60, `the middle frame ${middle} is the green video`);
    assert.ok(
      colourDistance(last, await imageMeanColour(fixtures.red)) < RESEMBLES,
      `the last frame ${last} is image 2`,
    );

    const reordered = makeJob(dir, {
      model: 'videogen-2.0-fast-reference-to-video',
      prompt: 'start with video 1, end on image 1',
      images: [fixtures.red],
      videos: [fixtures.greenVideo],
      duration: 2,
    });
    await engine.render(reordered, renderContext());
    const start = await frameMeanColour(reordered.outputPath, 0);
    const end = await frameMeanColour(reordered.outputPath, 2 * OUTPUT_FPS - 1);
    // The fast variant puts black bars beside the portrait video: green, but darker.
    assert.ok(start[1] > start[0] + 40 && start[1] > start[2] + 40, `video 1 comes first: ${start}`);
    assert.ok(
      colourDistance(end, await imageMeanColour(fixtures.red)) < RESEMBLES,
      `image 1 ends it: ${end}`,
    );
  });

  it('keeps an audio reference as the soundtrack whether or not sound is asked for', async () => {
    const job = (generateAudio: boolean) =>
      makeJob(dir, {
        model: 'videogen-2.0-fast-reference-to-video',
        images: [fixtures.red],
        audios: [fixtures.audio],
        duration: 2,
        generateAudio,
      });
    const asked = job(true);
    const notAsked = job(false);
    for (const one of [asked, notAsked]) await engine.render(one, renderContext());
    const [a, b] = await Promise.all([asked, notAsked].map((one) => readFile(one.outputPath)));
    assert.ok(a && b && a.equals(b), "the same video: the reference is the soundtrack, not the engine's own");
    await assertContractVideo(asked);
  });

  it('reference mode normalises the soundtrack to the target loudness', async () => {
    const job = makeJob(dir, {
      model: 'videogen-2.0-fast-reference-to-video',
      images: [fixtures.red],
      audios: [fixtures.quietTone],
      duration: 6,
    });
    await engine.render(job, renderContext());
    await assertContractVideo(job);
    const [input, output] = await Promise.all([
      integratedLoudness(fixtures.quietTone),
      integratedLoudness(job.outputPath),
    ]);
    assert.ok(input < LOUDNESS_LUFS - 15, `the tone is quiet: ${input} LUFS`);
    assert.ok(Math.abs(output - LOUDNESS_LUFS) < 2, `the soundtrack is at ${output} LUFS`);
  });

  it('reference mode with a video and audio is byte-identical for the same seed', async () => {
    const options = {
      model: 'videogen-2.0-reference-to-video',
      images: [fixtures.blueJpeg],
      videos: [fixtures.video],
      audios: [fixtures.audio],
      duration: 2,
    } as const;
    const first = makeJob(dir, { ...options, seed: 3 });
    const again = makeJob(dir, { ...options, seed: 3 });
    const other = makeJob(dir, { ...options, seed: 4 });
    for (const job of [first, again, other]) await engine.render(job, renderContext());
    const [a, b, c] = await Promise.all([first, again, other].map((job) => readFile(job.outputPath)));
    assert.ok(a && b && c);
    assert.ok(a.equals(b), 'same job, same bytes');
    assert.ok(!a.equals(c), 'another seed moves the image differently');
  });

  it('fast reference mode with a looping test-pattern video and no audio', async () => {
    const job = makeJob(dir, {
      model: 'videogen-2.0-fast-reference-to-video',
      videos: [fixtures.video],
      ratio: '9:16',
    });
    await engine.render(job, renderContext());
    await assertContractVideo(job);
  });

  it('rejects an undecodable image as invalid_asset naming its field and index', async () => {
    const job = makeJob(dir, {
      model: 'videogen-2.0-image-to-video',
      images: [fixtures.red, fixtures.broken],
    });
    await assert.rejects(engine.render(job, renderContext()), (error: unknown) => {
      assert.ok(error instanceof TaskFailure);
      assert.equal(error.code, 'invalid_asset');
      assert.match(error.message, /^image_urls\[1\]: /);
      return true;
    });
    assert.equal(await exists(job.outputPath), false);
  });

  it('rejects an unreadable audio reference as invalid_asset', async () => {
    const job = makeJob(dir, {
      model: 'videogen-2.0-reference-to-video',
      images: [fixtures.red],
      audios: [fixtures.broken],
    });
    await assert.rejects(engine.render(job, renderContext()), (error: unknown) => {
      assert.ok(error instanceof TaskFailure);
      assert.equal(error.code, 'invalid_asset');
      assert.match(error.message, /^audio_urls\[0\]: /);
      return true;
    });
  });

  it('rejects a file that is not a video as invalid_asset', async () => {
    const job = makeJob(dir, { model: 'videogen-2.0-reference-to-video', videos: [fixtures.broken] });
    await assert.rejects(engine.render(job, renderContext()), (error: unknown) => {
      assert.ok(error instanceof TaskFailure);
      assert.equal(error.code, 'invalid_asset');
      assert.match(error.message, /^video_urls\[0\]: /);
      return true;
    });
  });

  it('reports a missing ffmpeg binary as generation_failed', async () => {
    const missing = new LocalEngine({ ffmpegPath: join(dir, 'no-such-ffmpeg') });
    await assert.rejects(missing.render(makeJob(dir), renderContext()), (error: unknown) => {
      assert.ok(error instanceof TaskFailure);
      assert.equal(error.code, 'generation_failed');
      assert.match(error.message, /could not start ffmpeg/);
      return true;
    });
  });

  it("reports an ffmpeg failure as generation_failed with ffmpeg's own words", async () => {
    // libx264 refuses odd frame sizes for yuv420p.
    const job = { ...makeJob(dir, { duration: 4 }), frame: { width: 855, height: 481 } };
    await assert.rejects(engine.render(job, renderContext()), (error: unknown) => {
      assert.ok(error instanceof TaskFailure);
      assert.equal(error.code, 'generation_failed');
      assert.match(error.message, /ffmpeg exited with code \d+: .*divisible by 2/);
      return true;
    });
    assert.equal(await exists(job.outputPath), false);
  });

  it('stops at an abort, kills ffmpeg and leaves no output', async () => {
    // An ffmpeg that reads its input at the video's own rate (-re): a 15 s render takes 15 s or more on any
    // machine, so a render that went on after the abort would report progress (every 250 ms) to its end.
    const paced = join(dir, 'paced', 'ffmpeg');
    await mkdir(dirname(paced), { recursive: true });
    await writeFile(paced, `#!/bin/sh\nexec ${JSON.stringify(ffmpegPath())} -re "$@"\n`, { mode: 0o755 });
    const pacedEngine = new LocalEngine({ ffmpegPath: paced });
    for (const job of [
      makeJob(dir, { quality: '720p', duration: 15 }),
      makeJob(dir, {
        model: 'videogen-2.0-reference-to-video',
        videos: [fixtures.video],
        quality: '720p',
        duration: 15,
      }),
    ]) {
      const controller = new AbortController();
      const ctx = renderContext(controller.signal);
      const rendering = pacedEngine.render(job, ctx);
      await until(() => ctx.progress.length > 0, 'the first progress');
      assert.ok((await childFfmpegs()).length > 0, 'ffmpeg is running');
      const reported = ctx.progress.length;
      controller.abort(new Error('cancelled by test'));
      await assert.rejects(rendering, /cancelled by test/);
      // At most the frame under way when it aborted is reported.
      assert.ok(
        ctx.progress.length <= reported + 1,
        `rejected at once, not at the end: ${ctx.progress.slice(reported - 1).join(', ')}`,
      );
      assert.deepEqual(await childFfmpegs(), [], 'no ffmpeg left running');
      assert.equal(await exists(job.outputPath), false, 'no partial output');
      assert.deepEqual(await readdir(job.workDir).catch(() => []), [], 'no temporary files');
    }
  });

  it('rejects at once when the signal is already aborted', async () => {
    const job = makeJob(dir);
    await assert.rejects(engine.render(job, renderContext(AbortSignal.abort())), { name: 'AbortError' });
    assert.equal(await exists(job.outputPath), false);
  });
});
