import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TaskFailure } from '../src/domain/errors.js';
import { fillCommand, parseCommand, placeholderValues } from '../src/engines/exec/command-template.js';
import { ExecEngine } from '../src/engines/exec/exec-engine.js';
import type { ExecOptions } from '../src/engines/exec/exec-options.js';
import { generatorFormat } from '../src/engines/exec/generator-format.js';
import { ProgressParser, parseProgressLine } from '../src/engines/exec/progress-parser.js';
import { frameCount } from '../src/engines/frame-count.js';
import { ffmpegPath } from '../src/media/ffmpeg-paths.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  jobMaker,
  renderContext,
} from './helpers/render-jobs.js';
import { until } from './helpers/until.js';

/** The fixture stays in the source tree; the compiled test runs from dist/test. */
const SCRIPT = fileURLToPath(new URL('../../test/fixtures/fake-generator.mjs', import.meta.url));
const SECRET = 'hf_secret_token_0123456789';

let dir: string;
let images: string[];

/** This file's jobs: 2 s of a fox, seed 7, the result written inside the work directory. */
const execJob = jobMaker(() => dir, {
  taskPrefix: 'task-exec',
  prompt: 'a red fox running through snow',
  duration: 2,
  seed: 7,
  outputInWorkDir: true,
});

/** A Wan-style command line. */
function wanCommand(...tail: ExecOptions['command']): ExecOptions['command'] {
  return [
    process.execPath,
    SCRIPT,
    ...['--task', 't2v-1.3B', '--size', '{size_star}', '--frame_num', '{frames}', '--base_seed', '{seed}'],
    ...['--prompt', '{prompt}', ['--image', '{image}'], ['--last_image', '{last_image}']],
    ...tail,
  ];
}

function engine(
  command: ExecOptions['command'],
  env: Record<string, string> = {},
  extra: Partial<ExecOptions> = {},
): ExecEngine {
  return new ExecEngine(
    'fake',
    { type: 'exec', command, env: { FAKE_FFMPEG: ffmpegPath(), ...env }, ...extra },
    { baseDir: dir },
  );
}

interface RecordedRun {
  readonly argv: string[];
  readonly cwd: string;
  readonly extra?: string;
  readonly unbuffered?: string;
}

async function readRecord(path: string): Promise<RecordedRun> {
  return JSON.parse(await readFile(path, 'utf8')) as RecordedRun;
}

/** Alive and not a zombie waiting to be reaped. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function waitForFile(path: string): Promise<void> {
  await until(async () => (await stat(path).catch(() => undefined))?.size, `${path} appearing`, {
    intervalMs: 20,
  });
}

function isFailure(code: TaskFailure['code'], ...fragments: string[]) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof TaskFailure, `a TaskFailure, not ${String(error)}`);
    assert.equal(error.code, code, error.message);
    for (const fragment of fragments) assert.ok(error.message.includes(fragment), error.message);
    return true;
  };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-exec-'));
  images = [join(dir, 'first.png'), join(dir, 'last.png')];
  await writeTestImage(images[0]!, { width: 320, height: 240, colour: [220, 30, 40] });
  await writeTestImage(images[1]!, { width: 320, height: 240, colour: [30, 60, 220] });
  await mkdir(join(dir, 'run-here'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('exec engine: a successful run', () => {
  it('fills the placeholders, passes each argument whole without a shell, and conforms the video', async () => {
    const record = join(dir, 'argv-1.json');
    const prompt = `a "quoted" prompt with spaces; $(touch ${dir}/pwned) && echo 'single' \`tick\` *`;
    const exec = engine(
      wanCommand('--ratio={aspect_ratio}', '--literal', '{{json}}', '--save_file', '{output}'),
      {
        FAKE_RECORD: record,
        FAKE_EXTRA: 'from the engines file',
      },
    );
    const job = execJob({ model: 'videogen-2.0-image-to-video', prompt, images: images.slice(0, 1) });
    const ctx = renderContext();
    await exec.render(job, ctx);

    const recorded = await readRecord(record);
    assert.deepEqual(recorded.argv, [
      ...['--task', 't2v-1.3B', '--size', '854*480', '--frame_num', '48', '--base_seed', '7'],
      ...['--prompt', prompt, '--image', images[0]],
      ...['--ratio=16:9', '--literal', '{json}', '--save_file', join(job.workDir, 'raw.mp4')],
    ]);
    assert.equal(recorded.extra, 'from the engines file');
    assert.equal(recorded.unbuffered, '1');
    assert.equal(recorded.cwd, dir, 'runs in the engines file directory by default');
    assert.equal(await stat(join(dir, 'pwned')).catch(() => undefined), undefined, 'no shell ran');

    // The script wrote 320x240 at 30 fps; the result has the job's frame size and 24 fps.
    await assertContractVideo(job);

    const { progress } = ctx;
    assertProgressRisesToOne(progress);
    assert.ok(
      progress[0]! < 0.5,
      `the weights-loading bar does not count as the work: ${progress.join(', ')}`,
    );
    const during = progress.filter((p) => p > 0 && p <= 0.95);
    assert.ok(new Set(during).size >= 3, `several steps of progress while running: ${progress.join(', ')}`);
    assert.ok(progress.slice(0, -1).every((p) => p <= 0.95));
  });

  it('passes {generate_audio} to the command and keeps its track; removes what a command without it makes', async () => {
    const record = join(dir, 'argv-sound.json');
    const asking = engine(wanCommand('--sound', '{generate_audio}', '--save_file', '{output}'), {
      FAKE_RECORD: record,
    });
    const loud = execJob({ generateAudio: true });
    await asking.render(loud, renderContext());
    assert.deepEqual((await readRecord(record)).argv.slice(-4, -2), ['--sound', 'true']);
    assert.ok((await assertContractVideo(loud)).audio, "the command's sound, converted to AAC 48 kHz stereo");
    const quiet = execJob({ generateAudio: false });
    await asking.render(quiet, renderContext());
    assert.deepEqual((await readRecord(record)).argv.slice(-4, -2), ['--sound', 'false']);
    await assertContractVideo(quiet);

    // A command that always makes sound but takes no {generate_audio}: its route makes none, so the track goes.
    const always = engine(wanCommand('--sound', 'true', '--save_file', '{output}'));
    const silent = execJob({ generateAudio: false });
    await always.render(silent, renderContext());
    assert.equal((await assertContractVideo(silent)).audio, undefined);
  });

  it('leaves out a group whose placeholder has no value, and keeps both image groups with two images', async () => {
    const record = join(dir, 'argv-2.json');
    const command = wanCommand('--save_file', '{output}');
    const exec = engine(command, { FAKE_RECORD: record });
    const text = execJob({ ratio: '1:1' });
    await exec.render(text, renderContext());
    const withoutImages = (await readRecord(record)).argv;
    assert.equal(withoutImages.includes('--image'), false);
    assert.equal(withoutImages.includes('--last_image'), false);
    assert.equal(withoutImages[withoutImages.indexOf('--size') + 1], '480*480');
    await assertContractVideo(text);

    const firstLast = execJob({ model: 'videogen-2.0-image-to-video', images });
    await exec.render(firstLast, renderContext());
    const withImages = (await readRecord(record)).argv;
    assert.deepEqual(withImages.slice(withImages.indexOf('--image')), [
      ...['--image', images[0], '--last_image', images[1]],
      ...['--save_file', join(firstLast.workDir, 'raw.mp4')],
    ]);
  });

  it('takes the newest video under {work_dir} from a generator that only takes a directory, in its cwd', async () => {
    const record = join(dir, 'argv-3.json');
    const exec = engine(
      [process.execPath, SCRIPT, '--output_dir', '{work_dir}'],
      { FAKE_RECORD: record },
      {
        cwd: 'run-here',
      },
    );
    const job = execJob({ ratio: '9:16' });
    await exec.render(job, renderContext());
    assert.equal((await readRecord(record)).cwd, join(dir, 'run-here'));
    await assertContractVideo(job);
  });

  // The leftover sleeps ten minutes: a render it held up would end by the test's time limit, far past the bound.
  it('stops what the command left running once it has exited', { timeout: 120_000 }, async () => {
    const pids = join(dir, 'pids-leftover.json');
    const exec = engine(wanCommand('--save_file', '{output}'), {
      FAKE_LEFTOVER: '1',
      FAKE_PIDS: pids,
      FAKE_CHILD_SECONDS: '600',
    });
    const job = execJob();
    const started = Date.now();
    await exec.render(job, renderContext());
    const { child } = JSON.parse(await readFile(pids, 'utf8')) as { child: number };
    assert.equal(isRunning(child), false, 'the leftover sleep was stopped');
    assert.ok(Date.now() - started < 60_000, 'the leftover did not hold the render up');
    await assertContractVideo(job);
  });
});

describe('exec engine: failures', () => {
  it('turns a non-zero exit into upstream_error with the end of stderr, without the secrets it printed', async () => {
    const exec = engine(wanCommand('--save_file', '{output}'), { FAKE_MODE: 'fail', FAKE_TOKEN: SECRET });
    const ctx = renderContext();
    await assert.rejects(
      exec.render(execJob(), ctx),
      isFailure(
        'upstream_error',
        `exec engine "fake": ${process.execPath} exited with code 3: `,
        'RuntimeError: CUDA out of memory',
        'Traceback',
      ),
    );
    await assert.rejects(exec.render(execJob(), ctx), (error: Error) => !error.message.includes(SECRET));
    assert.ok(
      ctx.progress.length > 0 && ctx.progress.every((p) => p < 0.95),
      'progress ran before the failure',
    );
  });

  it('fails with upstream_error when the command writes no video, or an empty one', async () => {
    const command = wanCommand('--save_file', '{output}');
    await assert.rejects(
      engine(command, { FAKE_MODE: 'silent' }).render(execJob(), renderContext()),
      isFailure('upstream_error', 'finished without writing a video'),
    );
    await assert.rejects(
      engine(command, { FAKE_MODE: 'empty' }).render(execJob(), renderContext()),
      isFailure('upstream_error', 'wrote an empty video file'),
    );
  });

  it('fails with invalid_asset when a plain argument needs an asset the task lacks', async () => {
    const exec = engine([process.execPath, SCRIPT, '--first', '{image}', '--second', '{image_2}']);
    const job = execJob({ model: 'videogen-2.0-image-to-video', images: images.slice(0, 1) });
    await assert.rejects(exec.render(job, renderContext()), isFailure('invalid_asset', '{image_2}'));
  });

  it('fails with upstream_error when the program cannot be started', async () => {
    const exec = engine([join(dir, 'no-such-program'), '--prompt', '{prompt}']);
    await assert.rejects(
      exec.render(execJob(), renderContext()),
      isFailure('upstream_error', 'could not start'),
    );
  });
});

describe('exec engine: stopping the command', () => {
  it('stops the process group and fails with timeout after timeout_seconds', {
    timeout: 60_000,
  }, async () => {
    const pids = join(dir, 'pids-timeout.json');
    const exec = engine(
      wanCommand('--save_file', '{output}'),
      { FAKE_MODE: 'hang', FAKE_PIDS: pids },
      {
        timeout_seconds: 1,
      },
    );
    // The command hangs for ever: only the 1 s limit ends it (a bound far from any machine's speed).
    const started = Date.now();
    await assert.rejects(
      exec.render(execJob(), renderContext()),
      isFailure('timeout', 'timeout_seconds (1 s)'),
    );
    assert.ok(Date.now() - started < 30_000, `stopped in ${Date.now() - started} ms`);
    const { script, child } = JSON.parse(await readFile(pids, 'utf8')) as { script: number; child: number };
    assert.equal(isRunning(script), false, 'the script is gone');
    assert.equal(isRunning(child), false, "the script's child is gone");
  });

  it("fails with timeout at the task's deadline when that comes first", async () => {
    const exec = engine(
      wanCommand('--save_file', '{output}'),
      { FAKE_MODE: 'hang' },
      { timeout_seconds: 60 },
    );
    // The message says which limit ended it: the 60 s timeout_seconds would name itself.
    await assert.rejects(
      exec.render(execJob(), renderContext(undefined, { deadlineMs: 800 })),
      isFailure('timeout', "the task's time limit"),
    );
  });

  for (const stubborn of [false, true]) {
    const what = stubborn ? 'a command that ignores SIGTERM (SIGKILL after 2 s)' : 'the command';
    it(`on abort, stops ${what} and its child, and rejects with the signal's reason`, {
      timeout: 60_000,
    }, async () => {
      const pids = join(dir, `pids-abort-${stubborn}.json`);
      const signals = join(dir, `signals-abort-${stubborn}.txt`);
      const env = {
        FAKE_MODE: 'hang',
        FAKE_PIDS: pids,
        FAKE_SIGNALS: signals,
        FAKE_STUBBORN: stubborn ? '1' : '0',
      };
      const exec = engine(wanCommand('--save_file', '{output}'), env);
      const controller = new AbortController();
      const rendering = exec.render(execJob(), renderContext(controller.signal));
      await waitForFile(pids);
      const { script, child } = JSON.parse(await readFile(pids, 'utf8')) as { script: number; child: number };
      assert.ok(isRunning(script) && isRunning(child));
      const reason = new Error('cancelled by the test');
      const abortedAt = Date.now();
      controller.abort(reason);
      await assert.rejects(rendering, (error) => error === reason);
      const took = Date.now() - abortedAt;
      // SIGTERM first, always; the stubborn command outlives it, so the SIGKILL came after the grace period.
      // (It ignores SIGTERM for ever: without the SIGKILL the render would not end.)
      assert.equal(await readFile(signals, 'utf8'), 'SIGTERM\n', 'the command was sent SIGTERM, once');
      if (stubborn)
        assert.ok(took >= 1900, `SIGKILL came ${took} ms after the abort, before the grace period`);
      assert.equal(isRunning(script), false, 'the script is gone');
      assert.equal(isRunning(child), false, "the script's child is gone");
    });
  }
});

describe('exec engine: check()', () => {
  const signal = new AbortController().signal;

  it('accepts a program given by absolute path, or by bare name on PATH', async () => {
    await engine([process.execPath, SCRIPT]).check(signal);
    await engine(['node', SCRIPT], { PATH: dirname(process.execPath) }).check(signal);
  });

  it('rejects a missing program, naming it', async () => {
    const missing = join(dir, 'missing', 'generate');
    await assert.rejects(engine([missing]).check(signal), {
      message: new RegExp(`${missing} does not exist`),
    });
    await assert.rejects(engine(['no-such-generator-xyz']).check(signal), {
      message: /the program "no-such-generator-xyz" was not found on PATH/,
    });
  });

  it('rejects a program that is not executable, and a missing working directory', async () => {
    const script = join(dir, 'run-here', 'generate.sh');
    await writeFile(script, '#!/bin/sh\n');
    await chmod(script, 0o644);
    await assert.rejects(engine(['./generate.sh'], {}, { cwd: 'run-here' }).check(signal), {
      message: /generate\.sh is not executable/,
    });
    await chmod(script, 0o755);
    await engine(['./generate.sh'], {}, { cwd: 'run-here' }).check(signal);
    await assert.rejects(engine([process.execPath], {}, { cwd: 'nowhere' }).check(signal), {
      message: /the working directory .*nowhere does not exist/,
    });
  });
});

describe('exec command template', () => {
  const label = 'exec engine "t"';

  it('rejects an unknown placeholder when the engine is built, naming it', () => {
    assert.throws(() => engine(['python', 'generate.py', '--steps', '{steps}']), {
      message: /unknown placeholder \{steps\} in command element 4/,
    });
    assert.throws(() => engine(['python', ['--image', '{image_10}']]), { message: /\{image_10\}/ });
    assert.throws(() => engine(['python', '--config', '{"a": 1}']), { message: /unknown placeholder/ });
    assert.throws(() => engine(['python', '--x', 'a}b']), { message: /unmatched "\}"/ });
    assert.throws(() => engine(['python', '--x', '{prompt']), { message: /unmatched "\{"/ });
    assert.throws(() => engine(['{output}']), { message: /program/ });
  });

  it('fills every placeholder from the job', () => {
    const template = parseCommand(
      [
        'gen',
        '{prompt}|{seed}|{duration}|{frames}|{fps}|{width}|{height}|{size}|{size_star}|{quality}|{aspect_ratio}',
        '{work_dir}',
        '{image}:{image_1}:{image_3}:{video_1}:{audio_1}',
        ['--last', '{last_image}'],
        ['--v2', '{video_2}'],
        '{{{seed}}}',
      ],
      label,
    );
    const job = execJob({
      model: 'videogen-2.0-reference-to-video',
      duration: 4,
      ratio: 'adaptive',
      firstVisual: { width: 320, height: 320 },
      images: ['/a.png', '/b.png', '/c.png'],
      videos: ['/v.mp4'],
      audios: ['/s.wav'],
    });
    const args = fillCommand(template, placeholderValues(job, generatorFormat(job, {})), label);
    assert.deepEqual(args, [
      'a red fox running through snow|7|4|96|24|480|480|480x480|480*480|480p|1:1',
      job.workDir,
      '/a.png:/a.png:/c.png:/v.mp4:/s.wav',
      '{7}',
    ]);
  });

  it('fills {last_image} only when there are exactly two images', () => {
    const template = parseCommand(['gen', ['--last', '{last_image}']], label);
    const two = execJob({ model: 'videogen-2.0-image-to-video', images: ['/a.png', '/b.png'] });
    assert.deepEqual(fillCommand(template, placeholderValues(two, generatorFormat(two, {})), label), [
      '--last',
      '/b.png',
    ]);
  });
  it('fills the size and frame placeholders with what the generator takes (its sizes, fps and frame_step)', () => {
    const template = parseCommand(
      ['gen', '{size_star}', '{width}x{height}', '{frames}@{fps}', '{aspect_ratio}'],
      label,
    );
    const wan = { sizes: ['1280x720', '720x1280', '832x480', '480x832'], fps: 16, frame_step: 4 };
    const cases: [Parameters<typeof execJob>[0], string[]][] = [
      [{ quality: '480p', ratio: '16:9', duration: 5 }, ['832*480', '832x480', '81@16', '16:9']],
      [{ quality: '1080p', ratio: '9:16', duration: 4 }, ['720*1280', '720x1280', '65@16', '9:16']],
      [{ quality: '720p', ratio: '1:1', duration: 10 }, ['832*480', '832x480', '161@16', '1:1']],
      [{ quality: '1080p', ratio: '21:9', duration: 6 }, ['1280*720', '1280x720', '97@16', '21:9']],
    ];
    for (const [options, expected] of cases) {
      const job = execJob(options);
      assert.deepEqual(
        fillCommand(template, placeholderValues(job, generatorFormat(job, wan)), label),
        expected,
      );
    }
    assert.deepEqual(
      [frameCount(80, 4), frameCount(81, 4), frameCount(96, 8), frameCount(96, undefined)],
      [81, 81, 97, 96],
    );
  });
});

describe('exec progress parser', () => {
  it('reads tqdm bars, bare percentages and step counts', () => {
    assert.equal(parseProgressLine(' 45%|████▌     | 9/20 [00:03<00:04,  2.50it/s]'), 9 / 20);
    assert.equal(parseProgressLine('100%|██████████| 50/50 [01:40<00:00,  2.00s/it]'), 1);
    assert.equal(parseProgressLine('\u001b[A 30%|███       | 3/10 [00:01<00:02]'), 0.3);
    assert.equal(parseProgressLine('progress: 45%'), 0.45);
    assert.equal(parseProgressLine('[12.5%] denoising'), 0.125);
    assert.equal(parseProgressLine('step 9/20'), 0.45);
    assert.equal(parseProgressLine('Sampling steps: 3 / 12'), 0.25);
    assert.equal(
      parseProgressLine('Loading checkpoint shards: 100%|██████████| 3/3 [00:05<00:00]'),
      undefined,
    );
    assert.equal(parseProgressLine('Downloading model.safetensors: 60%'), undefined);
    assert.equal(parseProgressLine('2024-05-01 12:00:00 INFO generating video'), undefined);
    assert.equal(parseProgressLine('9it [00:03,  2.50it/s]'), undefined);
  });

  it('reads lines ended by \\r or \\n across chunks, per stream, keeping the highest fraction', () => {
    const parser = new ProgressParser();
    assert.equal(parser.push('stderr', '\r 10%|█         | 1/10 [00:01<00:09]\r 2'), 0.1);
    assert.equal(parser.push('stdout', 'step 3/10'), undefined, 'an unfinished line waits');
    assert.equal(parser.push('stderr', '0%|██        | 2/10 [00:02<00:08]\r'), 0.2);
    assert.equal(parser.push('stdout', '\n'), 0.3);
    // A second bar starting from 0 does not take the progress back.
    assert.equal(
      parser.push('stderr', 'Decoding:   0%|          | 0/4\rDecoding:  25%|██▌       | 1/4\r'),
      undefined,
    );
    assert.equal(parser.fraction, 0.3);
    assert.equal(parser.push('stderr', 'Decoding: 100%|██████████| 4/4\n'), 1);
  });
});
