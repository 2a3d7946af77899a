/**
 * An `exec` command must not outlive its worker: when the worker is SIGKILLed mid-command, the guardian
 * process it started with the command ends the command's whole process group. Also the guardian itself: it
 * exits untouched when released, ends the group when its stdin closes or it gets SIGTERM, survives SIGINT
 * and SIGHUP, and leaves by itself once the group is gone. Linux only (reads /proc).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TaskFailure } from '../src/domain/errors.js';
import { ExecEngine } from '../src/engines/exec/exec-engine.js';
import {
  groupRunning,
  guardGroup,
  KILL_GRACE_MS,
  RELEASE_LINE,
  signalGroup,
} from '../src/engines/exec/process-group.js';
import { ffmpegPath } from '../src/media/ffmpeg-paths.js';
import { Api } from './helpers/api.js';
import { jobMaker, renderContext } from './helpers/render-jobs.js';
import { serverEnv, startServer } from './helpers/server-process.js';
import { until } from './helpers/until.js';

/** The fixture stays in the source tree; the compiled test runs from dist/test. */
const SCRIPT = fileURLToPath(new URL('../../test/fixtures/fake-generator.mjs', import.meta.url));
const GUARDIAN = fileURLToPath(new URL('../src/engines/exec/group-guardian.js', import.meta.url));
const ENGINE_URL = new URL('../src/engines/exec/exec-engine.js', import.meta.url).href;
const JOBS_URL = new URL('./helpers/render-jobs.js', import.meta.url).href;
/** How long a test waits for what must happen before it gives up; never how long it waits for nothing. */
const CAP_MS = 20_000;

/**
 * A worker in miniature: renders one job with an exec engine running the fake generator in hang mode, prints
 * "running" once the generator has recorded its pids, and waits to be killed.
 * argv: exec-engine.js URL, render-jobs.js URL, directory, fake generator, pids file, FAKE_STUBBORN.
 */
const WORKER = `
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
const [engineUrl, jobsUrl, dir, script, pids, stubborn] = process.argv.slice(2);
const { ExecEngine } = await import(engineUrl);
const { makeJob, renderContext } = await import(jobsUrl);
const engine = new ExecEngine(
  'orphans',
  {
    type: 'exec',
    command: [process.execPath, script, '--save_file', '{output}'],
    env: { FAKE_MODE: 'hang', FAKE_PIDS: pids, FAKE_STUBBORN: stubborn },
  },
  { baseDir: dir },
);
engine.render(makeJob(dir), renderContext(undefined, { deadlineMs: 600_000 })).then(
  () => { console.error('the render finished'); process.exit(1); },
  (error) => { console.error('the render failed:', error); process.exit(1); },
);
while (!existsSync(pids)) await sleep(20);
process.stdout.write('running\\n');
`;

let dir: string;
/** Process groups the tests started, killed at the end whatever happened. */
const groups: number[] = [];

const execJob = jobMaker(() => dir, { taskPrefix: 'task-orphans', duration: 2 });

interface ProcInfo {
  readonly state: string;
  readonly parent: number;
  readonly group: number;
}

function procInfo(pid: number | string): ProcInfo | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const [state = '', parent, group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state, parent: Number(parent), group: Number(group) };
}

/** Alive and not a zombie waiting to be reaped. */
function isRunning(pid: number): boolean {
  const state = procInfo(pid)?.state;
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** The running guardians `parent` started, with the group each guards. */
function guardiansOf(parent: number): { pid: number; group: number }[] {
  const found: { pid: number; group: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || procInfo(entry)?.parent !== parent || !isRunning(Number(entry))) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (argv[1] === GUARDIAN) found.push({ pid: Number(entry), group: Number(argv[2]) });
  }
  return found;
}

/** Waits until `condition` holds; throws after `capMs`. */
function waitUntil(condition: () => boolean | Promise<boolean>, what: string, capMs = CAP_MS) {
  return until(condition, what, { timeoutMs: capMs, intervalMs: 20 });
}

/** `sleep 600` in a process group of its own, as the exec engine starts a command. */
function startGroup(): number {
  const child = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
  assert.ok(child.pid);
  groups.push(child.pid);
  return child.pid;
}

/** A guardian for `group`, started by the test itself so that its exit code can be read. */
function startGuardian(...args: string[]): ChildProcess {
  const guardian = spawn(process.execPath, [GUARDIAN, ...args], { stdio: ['pipe', 'ignore', 'pipe'] });
  guardian.stdin?.on('error', () => {});
  return guardian;
}

/** Once the guardian has installed its signal handlers (SIGHUP, which Node itself leaves alone). */
async function handlersInstalled(guardian: ChildProcess): Promise<void> {
  await waitUntil(() => {
    const status = readFileSync(`/proc/${guardian.pid}/status`, 'utf8');
    const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? '0';
    return (BigInt(`0x${caught}`) & 1n) === 1n;
  }, 'the guardian catches SIGHUP');
}

async function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return { code: child.exitCode, signal: child.signalCode };
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  return { code, signal };
}

/** Starts the miniature worker and resolves once its command runs. */
async function startWorker(pids: string, stubborn: boolean): Promise<ChildProcess> {
  const file = join(dir, 'worker.mjs');
  await writeFile(file, WORKER);
  const worker = spawn(
    process.execPath,
    [file, ENGINE_URL, JOBS_URL, dir, SCRIPT, pids, stubborn ? '1' : '0'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  worker.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the worker did not start its command:\n${err}`)),
      CAP_MS,
    );
    worker.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('running\n')) {
        clearTimeout(timer);
        resolve();
      }
    });
    worker.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited with ${code} before its command ran:\n${err}`));
    });
  });
  return worker;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-orphans-'));
});

after(async () => {
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {}
  }
  await rm(dir, { recursive: true, force: true });
});

describe('exec engine: a worker killed mid-command', () => {
  for (const stubborn of [false, true]) {
    const what = stubborn ? 'a command that ignores SIGTERM (SIGKILL after the grace period)' : 'the command';
    it(`ends ${what} and its child when the worker is SIGKILLed`, async (t) => {
      const pids = join(dir, `pids-killed-${stubborn}.json`);
      const worker = await startWorker(pids, stubborn);
      // Whatever fails below, the worker does not outlive the test (its pipes would hold the file's process).
      t.after(() => worker.kill('SIGKILL'));
      const { script, child } = JSON.parse(await readFile(pids, 'utf8')) as { script: number; child: number };
      groups.push(script);
      assert.ok(isRunning(script) && isRunning(child), 'the command and its child run');
      assert.equal(procInfo(child)?.group, script, "the child is in the command's group");
      const guardians = guardiansOf(worker.pid!);
      assert.deepEqual(
        guardians.map((g) => g.group),
        [script],
        "the worker runs one guardian, for the command's group",
      );

      const exited = once(worker, 'exit');
      const killedAt = Date.now();
      worker.kill('SIGKILL');
      await exited;
      await waitUntil(
        async () => !isRunning(script) && !isRunning(child) && !(await groupRunning(script)),
        "the command's group ends",
      );
      const took = Date.now() - killedAt;
      t.diagnostic(`the command's group ended ${took} ms after the worker was SIGKILLed`);
      if (stubborn) assert.ok(took >= KILL_GRACE_MS - 100, `SIGKILL came after the grace period: ${took} ms`);
      await waitUntil(() => !isRunning(guardians[0]!.pid), 'the guardian exits');
    });
  }
});

describe('exec engine: a videogen worker killed mid-command', () => {
  it('leaves no process of the command once the real worker (videogen serve) is SIGKILLed', async (t) => {
    const pids = join(dir, 'pids-serve.json');
    const engines = join(dir, 'engines.yaml');
    await writeFile(
      engines,
      [
        'engines:',
        '  hang:',
        '    type: exec',
        `    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(SCRIPT)}, --save_file, "{output}"]`,
        '    env:',
        '      FAKE_MODE: hang',
        `      FAKE_PIDS: ${JSON.stringify(pids)}`,
        'models:',
        '  videogen-2.0-text-to-video: hang',
        '',
      ].join('\n'),
    );
    const server = await startServer(serverEnv(join(dir, 'serve-data'), { VIDEOGEN_ENGINES_FILE: engines }));
    try {
      const key = await server.firstKey();
      assert.ok(key);
      const created = await new Api(server.url, key).create({
        model: 'videogen-2.0-text-to-video',
        prompt: 'p',
      });
      assert.equal(created.status, 200);
      await waitUntil(async () => (await readFile(pids, 'utf8').catch(() => '')) !== '', 'the command runs');
      const { script, child } = JSON.parse(await readFile(pids, 'utf8')) as { script: number; child: number };
      groups.push(script);
      const exited = once(server.child, 'exit');
      const killedAt = Date.now();
      server.child.kill('SIGKILL');
      await exited;
      await waitUntil(
        async () => !isRunning(script) && !isRunning(child) && !(await groupRunning(script)),
        "the command's group ends",
      );
      t.diagnostic(
        `the command's group ended ${Date.now() - killedAt} ms after videogen serve was SIGKILLed`,
      );
    } finally {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    }
  });
});

describe('exec engine: the guardian of a running command', () => {
  it('is released on a normal render and exits, leaving the command to finish', async () => {
    const exec = new ExecEngine(
      'orphans',
      {
        type: 'exec',
        command: [process.execPath, SCRIPT, '--save_file', '{output}'],
        env: { FAKE_FFMPEG: ffmpegPath() },
      },
      { baseDir: dir },
    );
    const seen = new Set<number>();
    const context = renderContext(undefined, {
      onProgress: () => {
        if (seen.size === 0) for (const guardian of guardiansOf(process.pid)) seen.add(guardian.pid);
      },
    });
    await exec.render(execJob(), context);
    assert.equal(seen.size, 1, 'a guardian ran alongside the command');
    await waitUntil(() => [...seen].every((pid) => !isRunning(pid)), 'the guardian exits');
    assert.deepEqual(guardiansOf(process.pid), [], 'no guardian is left');
  });

  it('stops the command and fails the task with internal_error if the guardian dies', async () => {
    const pids = join(dir, 'pids-guardian-lost.json');
    const exec = new ExecEngine(
      'orphans',
      {
        type: 'exec',
        command: [process.execPath, SCRIPT, '--save_file', '{output}'],
        env: { FAKE_MODE: 'hang', FAKE_PIDS: pids },
      },
      { baseDir: dir },
    );
    const rendering = exec.render(execJob(), renderContext());
    rendering.catch(() => {});
    await waitUntil(async () => (await readFile(pids, 'utf8').catch(() => '')).length > 0, 'the pids file');
    const { script, child } = JSON.parse(await readFile(pids, 'utf8')) as { script: number; child: number };
    groups.push(script);
    const [guardian] = guardiansOf(process.pid);
    assert.equal(guardian?.group, script);
    process.kill(guardian.pid, 'SIGKILL');
    await assert.rejects(rendering, (error) => {
      assert.ok(error instanceof TaskFailure, String(error));
      assert.equal(error.code, 'internal_error');
      assert.match(error.message, /was stopped because the guardian process .* was killed by SIGKILL/);
      return true;
    });
    assert.equal(isRunning(script), false, 'the command is gone');
    assert.equal(isRunning(child), false, "the command's child is gone");
  });
});

describe('the group guardian', () => {
  it('exits at once without touching the group when released', async () => {
    const group = startGroup();
    const guardian = startGuardian(String(group));
    guardian.stdin?.end(RELEASE_LINE);
    assert.deepEqual(await exitOf(guardian), { code: 0, signal: null });
    assert.ok(isRunning(group), 'the group still runs');
    signalGroup(group, 'SIGKILL');
  });

  it('ends the group when its stdin closes without a release, then exits', async () => {
    const group = startGroup();
    const guardian = startGuardian(String(group));
    guardian.stdin?.end();
    assert.deepEqual(await exitOf(guardian), { code: 0, signal: null });
    await waitUntil(async () => !(await groupRunning(group)), 'the group ends');
  });

  it('survives SIGINT and SIGHUP, and still ends the group when its stdin closes', async () => {
    const group = startGroup();
    const guardian = startGuardian(String(group));
    await handlersInstalled(guardian);
    guardian.kill('SIGINT');
    guardian.kill('SIGHUP');
    guardian.stdin?.end();
    assert.deepEqual(await exitOf(guardian), { code: 0, signal: null });
    await waitUntil(async () => !(await groupRunning(group)), 'the group ends');
  });

  it('ends the group on SIGTERM, then exits', async () => {
    const group = startGroup();
    const guardian = startGuardian(String(group));
    await handlersInstalled(guardian);
    guardian.kill('SIGTERM');
    assert.deepEqual(await exitOf(guardian), { code: 0, signal: null });
    await waitUntil(async () => !(await groupRunning(group)), 'the group ends');
    guardian.stdin?.end();
  });

  it('exits by itself once the group has no running process left', async () => {
    const group = startGroup();
    const guardian = startGuardian(String(group));
    signalGroup(group, 'SIGKILL');
    assert.deepEqual(await exitOf(guardian), { code: 0, signal: null });
    guardian.stdin?.end();
  });

  it('refuses an argument that is not a process group id, signalling nothing', async () => {
    for (const arg of ['', 'abc', '0', '1', '-5', '12x']) {
      const guardian = startGuardian(...(arg ? [arg] : []));
      guardian.stdin?.end();
      assert.deepEqual(await exitOf(guardian), { code: 2, signal: null }, `argument "${arg}"`);
    }
  });

  it('tells the worker when it is gone before being released', async () => {
    const group = startGroup();
    const guard = guardGroup(group);
    let guardian: { pid: number } | undefined;
    await waitUntil(() => {
      guardian = guardiansOf(process.pid).find((g) => g.group === group);
      return guardian !== undefined;
    }, 'the guardian runs');
    process.kill(guardian!.pid, 'SIGKILL');
    const lost = await guard.lost;
    assert.match(lost.message, /was killed by SIGKILL/);
    guard.release();
    signalGroup(group, 'SIGKILL');
  });
});
