/**
 * When the engines that are not remote-job engines say their upstream has taken the job
 * (`RenderContext.onAccepted`): once, before any progress and before the render resolves; and never for a
 * submission the upstream does not take (a command that does not exist), which is what lets the runner move such
 * a task on to the next engine of its route. For ComfyUI, what the remote-job suite cannot see: its image
 * uploads are not an acceptance, and a server not listening never accepts. The engines on the remote-job base
 * (hosted/remote-job-engine.ts) are held to the rest by remote-engine-conformance.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type TaskErrorCode, TaskFailure } from '../src/domain/errors.js';
import { ComfyUiEngine } from '../src/engines/comfyui/comfyui-engine.js';
import { ExecEngine } from '../src/engines/exec/exec-engine.js';
import type { ExecOptions } from '../src/engines/exec/exec-options.js';
import { LocalEngine } from '../src/engines/local/local-engine.js';
import { ffmpegPath, ffprobePath } from '../src/media/ffmpeg-paths.js';
import type { RenderContext } from '../src/ports/engine.js';
import { FakeComfyUi } from './fakes/comfyui-server.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { type JobOptions, makeJob, renderContext } from './helpers/render-jobs.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
const WAN_FAKE = fileURLToPath(new URL('../../test/fakes/wan-generate.mjs', import.meta.url));
/** The deadline of a render whose submission is never taken: a few retries, then it gives up. */
const SHORT_DEADLINE_MS = 2000;

let dir: string;
const closers: (() => Promise<unknown>)[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-engine-acceptance-'));
});

after(async () => {
  for (const close of closers.reverse()) await close();
  await rm(dir, { recursive: true, force: true });
});

function job(options: JobOptions = {}) {
  return makeJob(dir, {
    taskPrefix: 'task-acceptance',
    prompt: 'a paper boat on a pond',
    seed: 7,
    ...options,
  });
}

/** A render context that records, in order, each onAccepted and onProgress call. */
function recorder(deadlineMs?: number): { events: string[]; context: RenderContext } {
  const events: string[] = [];
  const context: RenderContext = {
    ...renderContext(undefined, { deadlineMs, onProgress: () => events.push('progress') }),
    onAccepted: () => {
      events.push('accepted');
    },
  };
  return { events, context };
}

function accepted(events: readonly string[]): number {
  return events.filter((event) => event === 'accepted').length;
}

/** Renders to the end: onAccepted was called once, before any progress and before the render resolved. */
async function assertAcceptedOnce(render: (context: RenderContext) => Promise<void>): Promise<void> {
  const { events, context } = recorder();
  await render(context);
  events.push('resolved');
  const shown = events.join(' ');
  assert.equal(accepted(events), 1, `onAccepted once: ${shown}`);
  assert.equal(events[0], 'accepted', `onAccepted before any progress: ${shown}`);
  assert.ok(events.includes('progress'), `progress was reported: ${shown}`);
}

/** The render fails with `code`, and onAccepted was never called. */
async function assertNeverAccepted(
  render: (context: RenderContext) => Promise<void>,
  code: TaskErrorCode,
): Promise<TaskFailure> {
  const { events, context } = recorder(SHORT_DEADLINE_MS);
  const error = await render(context).then(
    () => assert.fail('expected the render to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof TaskFailure, `a TaskFailure, got ${String(error)}`);
  assert.equal(error.code, code, error.message);
  assert.equal(accepted(events), 0, `onAccepted never called: ${events.join(' ')}`);
  return error;
}

/** A loopback port nothing listens on: listened on, then closed. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${address.port}`;
}

function cacheDir(): string {
  return join(dir, 'cache');
}

describe('local engine', () => {
  it('is accepted once, when rendering begins', async () => {
    const engine = new LocalEngine();
    const localJob = job({ model: 'videogen-2.0-fast-text-to-video', duration: 2 });
    await assertAcceptedOnce((context) => engine.render(localJob, context));
  });
});

describe('exec engine', () => {
  async function wan(command: ExecOptions['command']): Promise<ExecEngine> {
    const cwd = join(dir, 'Wan2.2');
    await mkdir(join(cwd, 'Wan2.2-T2V-A14B'), { recursive: true });
    return new ExecEngine(
      'wan-t2v',
      {
        type: 'exec',
        cwd,
        command,
        env: { WAN_FAKE_FFMPEG: ffmpegPath(), WAN_FAKE_FFPROBE: ffprobePath(), WAN_FAKE_CACHE: cacheDir() },
        sizes: ['1280x720', '720x1280', '832x480', '480x832'],
        fps: 16,
        frame_step: 4,
      },
      { baseDir: dir },
    );
  }

  it('is accepted once the command is running', async () => {
    const engine = await wan([
      process.execPath,
      WAN_FAKE,
      ...['--task', 't2v-A14B', '--ckpt_dir', './Wan2.2-T2V-A14B', '--size', '{size_star}'],
      ...[
        '--frame_num',
        '{frames}',
        '--base_seed',
        '{seed}',
        '--prompt',
        '{prompt}',
        '--save_file',
        '{output}',
      ],
    ]);
    const wanJob = job({ duration: 2 });
    await assertAcceptedOnce((context) => engine.render(wanJob, context));
  });

  it('is never accepted when the command cannot be started', async () => {
    const missing = join(dir, 'missing', 'generate.py');
    const engine = await wan([missing, '--prompt', '{prompt}', '--save_file', '{output}']);
    const failure = await assertNeverAccepted((context) => engine.render(job(), context), 'upstream_error');
    assert.match(failure.message, /could not start/);
  });
});

// The servers' fakes are independent of each other: they run side by side, each one's tests in turn (a
// refusal waits out SHORT_DEADLINE_MS).
describe('comfyui engine', () => {
  let comfy: FakeComfyUi;

  before(async () => {
    comfy = await FakeComfyUi.start();
    closers.push(() => comfy.close());
  });

  function engine(baseUrl: string, workflow = 'comfyui-text-workflow.json'): ComfyUiEngine {
    return new ComfyUiEngine(
      'ltx',
      { type: 'comfyui', base_url: baseUrl, workflow, poll_interval_ms: 20 },
      { baseDir: FIXTURES },
    );
  }

  it('is not accepted for the image uploads, only once the prompt is queued', async () => {
    const red = join(dir, 'red.png');
    const blue = join(dir, 'blue.jpg');
    await writeTestImage(red, { width: 320, height: 180, colour: [220, 30, 40] });
    await writeTestImage(blue, { width: 320, height: 180, colour: [30, 60, 220] });
    await comfy.reset();
    const release = comfy.holdPromptRequests();
    const received = comfy.waitFor('prompt-received');
    const { events, context } = recorder();
    const imageJob = job({ model: 'videogen-2.0-image-to-video', duration: 2, images: [red, blue] });
    const rendering = engine(comfy.baseUrl, 'comfyui-image-workflow.json').render(imageJob, context);
    try {
      await received;
      assert.equal(comfy.uploads.size, 2, 'both images were uploaded before the prompt was sent');
      assert.equal(accepted(events), 0, 'not accepted before ComfyUI answers POST /prompt');
    } finally {
      release();
    }
    await rendering;
    assert.equal(accepted(events), 1);
    assert.equal(events[0], 'accepted');
  });

  it('is never accepted when ComfyUI is not listening', async () => {
    const url = await closedPortUrl();
    await assertNeverAccepted((context) => engine(url).render(job(), context), 'upstream_unavailable');
  });
});
