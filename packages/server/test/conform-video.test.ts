import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { TaskFailure } from '../src/domain/errors.js';
import { type FixedAspectRatio, type FrameSize, frameSize, QUALITIES } from '../src/domain/frame-size.js';
import {
  conformGeometry,
  conformVideo,
  type SourcePicture,
  type VideoTarget,
} from '../src/media/conform-video.js';
import { ffmpegPath } from '../src/media/ffmpeg-paths.js';
import { COVER_MIN_KEPT } from '../src/media/fit.js';
import { writeTestAudio, writeTestVideo } from './helpers/media-fixtures.js';
import { colourDistance, framePixels, mp4Facts, type Rgb } from './helpers/mp4-facts.js';

const run = promisify(execFile);

let dir: string;
let count = 0;
const target: VideoTarget = { frame: { width: 854, height: 480 }, fps: 24, duration: 2, audio: false };
const options = () => ({ signal: new AbortController().signal, label: 'exec engine "test"' });

async function video(settings: Parameters<typeof writeTestVideo>[1]): Promise<string> {
  const path = join(dir, `in-${++count}.mp4`);
  await writeTestVideo(path, settings);
  return path;
}

function out(): string {
  return join(dir, `out-${++count}.mp4`);
}

/** Every frame a request can ask for (`adaptive` resolves to one of these ratios). */
const RATIOS: readonly FixedAspectRatio[] = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9'];
const FRAMES: readonly FrameSize[] = QUALITIES.flatMap((quality) => RATIOS.map((r) => frameSize(quality, r)));

/** Sizes models commonly produce, and odd ones. */
const MODEL_PICTURES: readonly SourcePicture[] = [
  { width: 1280, height: 720 },
  { width: 720, height: 1280 },
  { width: 832, height: 480 },
  { width: 480, height: 832 },
  { width: 1024, height: 576 },
  { width: 768, height: 512 },
  { width: 960, height: 544 },
  { width: 1920, height: 1080 },
  { width: 1024, height: 1024 },
  { width: 853, height: 479 },
  { width: 479, height: 853 },
];

/** DVD and HDV pixels, which are not square. */
const ANAMORPHIC_PICTURES: readonly SourcePicture[] = [
  { width: 720, height: 480, sampleAspectRatio: 32 / 27 },
  { width: 720, height: 576, sampleAspectRatio: 16 / 15 },
  { width: 1440, height: 1080, sampleAspectRatio: 4 / 3 },
  { width: 853, height: 479, sampleAspectRatio: 4 / 3 },
];

const sizeName = (p: { width?: number; height?: number } | undefined): string => `${p?.width}x${p?.height}`;
const pictureName = (p: SourcePicture): string =>
  p.sampleAspectRatio ? `${sizeName(p)} (pixels ${p.sampleAspectRatio.toFixed(3)}:1)` : sizeName(p);

/** The colour at `x`, `y` of a 32x32 RGB frame from `framePixels`. */
function pixelAt(pixels: Buffer, x: number, y: number): Rgb {
  const i = (y * 32 + x) * 3;
  return [pixels[i] ?? 0, pixels[i + 1] ?? 0, pixels[i + 2] ?? 0];
}

/** Runs `work` on every item, at most `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-conform-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('conformVideo', () => {
  it('only re-muxes a video that already meets the target, moving the index first', async () => {
    const input = await video({ width: 854, height: 480, fps: 24, seconds: 2 });
    const output = out();
    assert.deepEqual(await conformVideo(input, output, target, options()), []);
    const facts = await mp4Facts(output);
    assert.ok(facts.moovBeforeMdat);
    assert.equal(facts.video?.frames, 48);
  });

  it('re-encodes another size, frame rate and duration to the target', async () => {
    for (const settings of [
      { width: 640, height: 480, fps: 30, seconds: 3 },
      { width: 1280, height: 720, fps: 16, seconds: 1 },
    ]) {
      const output = out();
      const problems = await conformVideo(await video(settings), output, target, options());
      assert.ok(problems.length > 0);
      const facts = await mp4Facts(output);
      assert.equal(facts.video?.codec, 'h264');
      assert.equal(facts.video?.pixelFormat, 'yuv420p');
      assert.equal(facts.video?.width, 854);
      assert.equal(facts.video?.height, 480);
      assert.equal(facts.video?.frameRate, 24);
      assert.ok(Math.abs(facts.duration - 2) <= 1 / 24, `${settings.seconds} s became ${facts.duration} s`);
      assert.ok(facts.moovBeforeMdat);
      assert.equal(facts.audio, undefined);
    }
  });

  it('lays the soundtrack under a silent video when audio is wanted', async () => {
    const soundtrack = join(dir, 'tone.wav');
    await writeTestAudio(soundtrack, { seconds: 1 });
    const output = out();
    await conformVideo(
      await video({ width: 854, height: 480, fps: 24, seconds: 2 }),
      output,
      { ...target, audio: true, soundtrack },
      options(),
    );
    const facts = await mp4Facts(output);
    assert.equal(facts.audio?.codec, 'aac');
    assert.equal(facts.audio?.sampleRate, 48_000);
    assert.equal(facts.audio?.channels, 2);
  });

  it('re-encodes anamorphic video of the frame size to square pixels, fitted by its display shape', async () => {
    const wide = join(dir, 'anamorphic.mp4');
    const settings = { width: 854, height: 480, fps: 24, seconds: 0.25, colour: 'green' };
    await writeTestVideo(wide, { ...settings, sampleAspectRatio: 4 / 3 });
    const output = out();
    const problems = await conformVideo(wide, output, { ...target, duration: 0.25 }, options());
    assert.ok(
      problems.some((p) => p.startsWith('sample aspect ratio')),
      problems.join(', '),
    );
    const facts = await mp4Facts(output);
    assert.equal(sizeName(facts.video), '854x480');
    assert.equal(facts.video?.sampleAspectRatio ?? 1, 1);
    // 1139 pixels wide on screen: contained, with bars above and below.
    const pixels = await framePixels(output, 0);
    assert.ok(colourDistance(pixelAt(pixels, 16, 1), [0, 0, 0]) < 20, 'no bar above');
    assert.ok(colourDistance(pixelAt(pixels, 16, 16), [0, 128, 0]) < 30, 'no picture in the middle');
  });

  it('fits a video turned for display by its upright shape', async (t) => {
    const stored = await video({ width: 832, height: 480, fps: 24, seconds: 0.25, colour: 'green' });
    const turned = join(dir, 'turned.mp4');
    await run(ffmpegPath(), [
      ...['-v', 'error', '-nostdin', '-y', '-i', stored],
      ...['-c', 'copy', '-metadata:s:v', 'rotate=90', turned],
    ]);
    if (!(await mp4Facts(turned)).video?.rotation) {
      t.skip('this ffmpeg does not write the rotate tag');
      return;
    }
    const output = out();
    const problems = await conformVideo(turned, output, { ...target, duration: 0.25 }, options());
    assert.ok(
      problems.some((p) => p.startsWith('rotated')),
      problems.join(', '),
    );
    const facts = await mp4Facts(output);
    assert.equal(sizeName(facts.video), '854x480');
    assert.equal(facts.video?.rotation, undefined);
    // Upright it is 480x832: contained in 854x480, with bars left and right.
    const pixels = await framePixels(output, 0);
    assert.ok(colourDistance(pixelAt(pixels, 1, 16), [0, 0, 0]) < 20, 'no bar on the left');
    assert.ok(colourDistance(pixelAt(pixels, 16, 16), [0, 128, 0]) < 30, 'no picture in the middle');
  });

  it('fails with upstream_error for a file that is not a video', async () => {
    const input = join(dir, 'not-a-video.mp4');
    await writeFile(input, 'definitely not a video');
    await assert.rejects(
      conformVideo(input, out(), target, options()),
      (error: unknown) =>
        error instanceof TaskFailure &&
        error.code === 'upstream_error' &&
        /exec engine "test"/.test(error.message),
    );
  });
});

describe('conformGeometry', () => {
  it('scales to even sizes without distortion and pads and crops to exactly the frame, by the fit rule', () => {
    const extremes: SourcePicture[] = [
      { width: 1, height: 1 },
      { width: 3000, height: 7 },
      { width: 7, height: 3000 },
    ];
    for (const source of [...MODEL_PICTURES, ...ANAMORPHIC_PICTURES, ...extremes]) {
      for (const frame of FRAMES) {
        const name = `${pictureName(source)} -> ${sizeName(frame)}`;
        const { fit, scaled, pad, crop } = conformGeometry(source, frame);
        const shape = (source.width * (source.sampleAspectRatio ?? 1)) / source.height;
        const frameShape = frame.width / frame.height;

        for (const n of [scaled.width, scaled.height, pad.width, pad.height, pad.x, pad.y, crop.x, crop.y]) {
          assert.ok(n % 2 === 0 && n >= 0, `${name}: ${n} is not even`);
        }
        assert.ok(scaled.width >= 2 && scaled.height >= 2, `${name}: scaled to ${sizeName(scaled)}`);
        // Each side within a pixel of the exact size, so the shape is off by at most that much.
        assert.ok(
          Math.abs(scaled.width / scaled.height - shape) <= (1 + shape) / scaled.height,
          `${name}: scaled to ${sizeName(scaled)}, distorting a ${shape.toFixed(3)}:1 picture`,
        );

        assert.ok(
          pad.width >= frame.width && pad.height >= frame.height,
          `${name}: padded to ${sizeName(pad)}`,
        );
        assert.ok(pad.x + scaled.width <= pad.width && pad.y + scaled.height <= pad.height, name);
        assert.ok(Math.abs(2 * pad.x - (pad.width - scaled.width)) <= 2, `${name}: picture not centred`);
        assert.ok(Math.abs(2 * pad.y - (pad.height - scaled.height)) <= 2, `${name}: picture not centred`);
        assert.deepEqual([crop.width, crop.height], [frame.width, frame.height], name);
        assert.ok(crop.x + crop.width <= pad.width && crop.y + crop.height <= pad.height, name);
        assert.ok(Math.abs(2 * crop.x - (pad.width - frame.width)) <= 2, `${name}: crop not centred`);
        assert.ok(Math.abs(2 * crop.y - (pad.height - frame.height)) <= 2, `${name}: crop not centred`);

        const touches = scaled.width === frame.width || scaled.height === frame.height;
        if (Math.min(shape / frameShape, frameShape / shape) >= COVER_MIN_KEPT) {
          assert.equal(fit, 'cover', name);
          assert.ok(scaled.width >= frame.width && scaled.height >= frame.height, `${name}: leaves bars`);
          assert.ok(touches, `${name}: scaled to ${sizeName(scaled)}, larger than needed`);
        } else {
          assert.equal(fit, 'contain', name);
          assert.ok(scaled.width <= frame.width && scaled.height <= frame.height, `${name}: is cropped`);
          assert.ok(touches, `${name}: scaled to ${sizeName(scaled)}, smaller than needed`);
        }
      }
    }
  });
});

// Two ffmpeg processes at a time: CI runs this on a shared 2-core machine.
describe('conformVideo over every frame and common model sizes', { concurrency: 2 }, () => {
  const sources = new Map<SourcePicture, string>();
  const pictures = [...MODEL_PICTURES, ANAMORPHIC_PICTURES[0]!];
  // Short clips keep the ~200 conversions cheap: a quarter of a second in (four frames at 16 fps, so the frame
  // rate is converted), two frames out (1/12 s at 24 fps, so a frame rate and a duration can still be read);
  // a conversion's cost grows with its frames at these sizes. yuv444p allows the odd sizes.
  const short: Omit<VideoTarget, 'frame'> = { fps: 24, duration: 1 / 12, audio: false };

  before(async () => {
    await eachLimited(pictures, 2, async (picture) => {
      const path = join(dir, `source-${sizeName(picture)}.mp4`);
      await writeTestVideo(path, {
        ...picture,
        seconds: 0.25,
        fps: 16,
        pixelFormat: 'yuv444p',
        sampleAspectRatio: picture.sampleAspectRatio,
      });
      sources.set(picture, path);
    });
  });

  for (const picture of pictures) {
    for (const frame of FRAMES) {
      it(`${pictureName(picture)} -> ${sizeName(frame)}`, async () => {
        const output = out();
        await conformVideo(sources.get(picture)!, output, { ...short, frame }, options());
        const facts = await mp4Facts(output);
        assert.equal(facts.video?.codec, 'h264');
        assert.equal(facts.video?.pixelFormat, 'yuv420p');
        assert.equal(sizeName(facts.video), sizeName(frame));
        assert.equal(facts.video?.frameRate, 24);
        assert.ok(Math.abs(facts.duration - short.duration) <= 1 / 24, `${facts.duration} s long`);
      });
    }
  }
});
