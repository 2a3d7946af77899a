import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TaskFailure } from '../src/errors.js';
import { conformVideo, type VideoTarget } from '../src/media/conform-video.js';
import { writeTestAudio, writeTestVideo } from './helpers/media-fixtures.js';
import { mp4Facts } from './helpers/mp4-facts.js';

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
