/**
 * docs/engines/exec.md's Wan 2.2 example, run as written with test/fakes/wan-generate.mjs (a strict stand-in for
 * Wan 2.2's generate.py: its arguments, sizes, frame counts and output shapes) in place of `python
 * generate.py`: every model ID at every quality and aspect ratio completes, conformed exactly to the request.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createEngines, routeEngines } from '../src/engines/create-engines.js';
import { parseEnginesConfig } from '../src/engines/engines-file.js';
import { ffmpegPath, ffprobePath } from '../src/media/ffmpeg-paths.js';
import { docsExample } from './helpers/docs-examples.js';
import { describeJob, type GridAssets, gridJobs, writeGridAssets } from './helpers/engine-grid.js';
import { assertContractVideo, makeJob, renderContext } from './helpers/render-jobs.js';

const WAN_FAKE = fileURLToPath(new URL('../../test/fakes/wan-generate.mjs', import.meta.url));
const WAN_SIZES = ['1280*720', '720*1280', '832*480', '480*832'];

let dir: string;
let assets: GridAssets;
let record: string;

interface WanRun {
  readonly args: Record<string, unknown>;
  readonly video: { width: number; height: number; frames: number; fps: number };
}

async function runs(): Promise<WanRun[]> {
  const text = await readFile(record, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as WanRun);
}

/** The docs' file with `python generate.py` replaced by the fake, and `/opt/Wan2.2` by a directory of ours. */
async function wanEngines() {
  const example = await docsExample('wan-exec');
  const cwd = join(dir, 'Wan2.2');
  await mkdir(join(cwd, 'Wan2.2-T2V-A14B'), { recursive: true });
  await mkdir(join(cwd, 'Wan2.2-I2V-A14B'), { recursive: true });
  for (const options of Object.values(example.engines)) {
    const command = options.command as string[];
    assert.deepEqual(command.slice(0, 2), ['python', 'generate.py']);
    options.command = [process.execPath, WAN_FAKE, ...command.slice(2)];
    options.cwd = cwd;
    options.env = {
      WAN_FAKE_FFMPEG: ffmpegPath(),
      WAN_FAKE_FFPROBE: ffprobePath(),
      WAN_FAKE_RECORD: record,
      WAN_FAKE_CACHE: join(dir, 'cache'),
    };
  }
  const config = parseEnginesConfig(example, join(dir, 'engines.yaml'), {});
  return routeEngines(config, createEngines(config));
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-exec-wan-'));
  assets = await writeGridAssets(dir);
  record = join(dir, 'runs.jsonl');
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the Wan 2.2 stand-in refuses what generate.py refuses', () => {
  const wan = (args: string[]) =>
    promisify(execFile)(process.execPath, [WAN_FAKE, ...args], {
      cwd: dir,
      env: { ...process.env, WAN_FAKE_FFMPEG: ffmpegPath(), WAN_FAKE_FFPROBE: ffprobePath() },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );

  it('an unknown option, a size it does not take, a size in another form, no checkpoint directory', async () => {
    await mkdir(join(dir, 'ckpt'), { recursive: true });
    const cases: [string[], number, RegExp][] = [
      [['--ckpt_dir', 'ckpt', '--seed', '1'], 2, /unrecognized arguments: --seed 1/],
      [['--ckpt_dir', 'ckpt', '--size', '854*480'], 2, /argument --size: invalid choice: '854\*480'/],
      [['--ckpt_dir', 'ckpt', '--size', '1280x720'], 2, /invalid choice: '1280x720'/],
      [
        ['--ckpt_dir', 'ckpt', '--task', 't2v-A14B', '--size', '1280*704'],
        1,
        /Unsupport size 1280\*704 for task t2v-A14B/,
      ],
      [['--size', '1280*720'], 1, /Please specify the checkpoint directory/],
      [
        ['--ckpt_dir', 'ckpt', '--task', 'i2v-A14B', '--image', 'missing.png'],
        1,
        /No such file or directory: 'missing.png'/,
      ],
    ];
    for (const [args, code, message] of cases) {
      const result = await wan(args);
      assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
  });
});

describe('exec engine: the Wan 2.2 example of docs/engines/exec.md', () => {
  it('renders every model ID at every quality and aspect ratio, asking Wan only for what it takes', async () => {
    const router = await wanEngines();
    for (const job of gridJobs(dir, assets, 'task-wan')) {
      const before = (await runs()).length;
      const engine = router.engineFor(job.model.id);
      assert.ok(engine, `${job.model.id} is routed`);
      await engine.render(job, renderContext());
      await assertContractVideo(job);
      const run = (await runs())[before];
      assert.ok(run, `${describeJob(job)}: generate.py ran`);
      assert.ok(
        WAN_SIZES.includes(String(run.args.size)),
        `${describeJob(job)}: --size ${String(run.args.size)}`,
      );
      assert.equal(run.args.task, job.images.length > 0 ? 'i2v-A14B' : 't2v-A14B');
      assert.equal(run.args.base_seed, job.params.seed);
      assert.equal((Number(run.args.frame_num) - 1) % 4, 0, 'a 4n+1 frame count');
      assert.ok(run.video.frames / run.video.fps >= job.params.duration, 'covers the duration');
    }
  });

  it('fails with upstream_error quoting Wan when it refuses the request', async () => {
    const router = await wanEngines();
    const engine = router.engineFor('videogen-2.0-image-to-video');
    assert.ok(engine);
    const job = makeJob(dir, { model: 'videogen-2.0-image-to-video', images: [join(dir, 'not-there')] });
    await assert.rejects(engine.render(job, renderContext()), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'upstream_error');
      assert.match(
        error.message,
        /exec engine "wan-i2v": .* exited with code 1: .*No such file or directory/s,
      );
      return true;
    });
  });
});
