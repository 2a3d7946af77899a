/**
 * The server's memory (issue 18): its resident set size idle after start, and again after 500 and after
 * BENCH_MEMORY_TASKS (default 5000) tasks created, run to `completed` and polled through the HTTP API.
 *
 * The server is started as `npm start` starts it: a child process of the built CLI (`serve`, role `all`),
 * SQLite store, file storage, in a fresh data directory. Two things differ, both for the measurement only:
 * - The engine is an `exec` engine whose command copies a prepared 4 s 480p MP4 to `{output}` (`cp`), so a
 *   task costs milliseconds, not a render: what is measured is the task path (API, store, queue, worker
 *   pool, run, storage, conforming), not the renderer. The conforming still probes and re-muxes the copy
 *   with ffmpeg, in child processes, whose memory is not the server's.
 * - The child runs with `--expose-gc` and a preload (`--import`) that, asked over the IPC channel, runs two
 *   full garbage collections and answers with `process.memoryUsage()`. A reading is taken after that, so
 *   garbage waiting for a collection is not counted as growth.
 *
 * Readings are taken idle, after 500 tasks and after every 1000 (so a growth shows as a curve, not two points),
 * each with V8's committed heap (`heapTotal`) and, on Linux, the resident size of the C allocator's main arena
 * (the `[heap]` segment of /proc/<pid>/smaps), which is where the server's native memory grows.
 *
 * The target is at most 150 MB idle and no growth from the idle reading to the reading after the tasks.
 * `BENCH_MEMORY_CLIENTS` (default 8): clients creating and polling at once; `BENCH_MEMORY_WORKERS` (default 2):
 * `VIDEOGEN_WORKER_CONCURRENCY`.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ffmpegPath } from '../src/media/ffmpeg-paths.js';

const TASKS = Number(process.env.BENCH_MEMORY_TASKS ?? 5000);
const FIRST = Math.min(500, TASKS);
const READ_EVERY = 1000;
const CLIENTS = Number(process.env.BENCH_MEMORY_CLIENTS ?? 8);
const WORKERS = Number(process.env.BENCH_MEMORY_WORKERS ?? 2);
const TARGET_IDLE_MB = 150;
const POLL_MS = 20;
const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

/**
 * The preload: answers a message with the memory after two full collections (bench only). The channel is
 * unref'd, or it would keep the server alive after SIGTERM has closed everything else.
 */
// The IPC channel closes when the benchmark's process ends, however it ends (a SIGKILL too): the server then
// shuts down as on SIGTERM rather than run on with nothing to read it.
const PRELOAD = `process.on('message', () => { globalThis.gc(); globalThis.gc();
  process.send(process.memoryUsage()); }); process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));`;

interface Reading {
  readonly label: string;
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  /** The resident size of the `[heap]` segment; undefined where /proc is not. */
  readonly mainArena: number | undefined;
}

const mb = (bytes: number) => bytes / 1048576;

async function makeFixture(path: string): Promise<void> {
  await promisify(execFile)(ffmpegPath(), [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'color=c=navy:s=854x480:r=24:d=4',
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    '-y',
    path,
  ]);
}

/** Starts the server; resolves with its URL and first API key once it prints them. */
async function startServer(
  dataDir: string,
  enginesFile: string,
): Promise<{ child: ChildProcess; url: string; key: string }> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', `data:text/javascript,${encodeURIComponent(PRELOAD)}`, CLI, 'serve'],
    {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        VIDEOGEN_DATA_DIR: dataDir,
        VIDEOGEN_HOST: '127.0.0.1',
        VIDEOGEN_PORT: '0',
        VIDEOGEN_ENGINES_FILE: enginesFile,
        VIDEOGEN_WORKER_CONCURRENCY: String(WORKERS),
        VIDEOGEN_RATE_LIMIT_PER_MINUTE: '1000000000',
        VIDEOGEN_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    },
  );
  let output = '';
  child.stdout?.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${output}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${output}`)));
    child.stdout?.on('data', (chunk: string) => {
      output += chunk;
      const key = /vg_dev_\S+/.exec(output)?.[0];
      const url = /curl -s (http:\/\/\S+)\/v1\/videos\/generations/.exec(output)?.[1];
      if (key && url) {
        clearTimeout(timer);
        resolve({ child, url, key });
      }
    });
  });
}

async function read(child: ChildProcess, label: string): Promise<Reading> {
  const answer = once(child, 'message');
  child.send('memory');
  const [usage] = (await answer) as [NodeJS.MemoryUsage];
  return {
    label,
    rss: usage.rss,
    heapUsed: usage.heapUsed,
    heapTotal: usage.heapTotal,
    external: usage.external,
    mainArena: child.pid === undefined ? undefined : await mainArenaRss(child.pid),
  };
}

/** The resident size of process `pid`'s `[heap]` segment (the C allocator's main arena), from /proc (Linux). */
async function mainArenaRss(pid: number): Promise<number | undefined> {
  const smaps = await readFile(`/proc/${pid}/smaps`, 'utf8').catch(() => undefined);
  if (smaps === undefined) return undefined;
  const start = smaps.search(/^[0-9a-f]+-[0-9a-f]+ .*\[heap\]$/m);
  if (start < 0) return 0;
  const rss = /^Rss:\s+(\d+) kB$/m.exec(smaps.slice(start));
  return rss ? Number(rss[1]) * 1024 : undefined;
}

/** How many tasks in all have run at each reading: 500, then every 1000, and `TASKS` last. */
function readingMarks(): number[] {
  const marks = [FIRST];
  for (let mark = READ_EVERY; mark < TASKS; mark += READ_EVERY) if (mark > FIRST) marks.push(mark);
  if (TASKS > FIRST) marks.push(TASKS);
  return marks;
}

/** Creates a task and polls it until it ends, as a client would; anything but `completed` fails the run. */
async function oneTask(url: string, key: string, index: number): Promise<void> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const created = await fetch(`${url}/v1/videos/generations`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: `memory bench task ${index}`,
      quality: '480p',
      duration: 4,
    }),
  });
  const body = (await created.json()) as { id?: string; status?: string };
  if (created.status !== 200 || !body.id) throw new Error(`creation failed: ${JSON.stringify(body)}`);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const polled = await fetch(`${url}/v1/tasks/${body.id}`, { headers });
    const task = (await polled.json()) as { status?: string; error?: unknown };
    if (task.status === 'completed') return;
    if (task.status === 'failed' || polled.status !== 200)
      throw new Error(`task ${body.id} did not complete: ${JSON.stringify(task)}`);
  }
}

async function runTasks(url: string, key: string, from: number, to: number): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < to) await oneTask(url, key, next++);
    }),
  );
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'videogen-bench-memory-'));
  let child: ChildProcess | undefined;
  try {
    const fixture = join(dir, 'fixture.mp4');
    await makeFixture(fixture);
    const enginesFile = join(dir, 'engines.yaml');
    await writeFile(
      enginesFile,
      `engines:\n  instant:\n    type: exec\n    command: [cp, ${JSON.stringify(fixture)}, "{output}"]\nmodels:\n  videogen-2.0-fast-text-to-video: instant\n`,
    );
    const server = await startServer(join(dir, 'data'), enginesFile);
    child = server.child;
    // Let start-up work (migrations, the first key, the pool's registration) settle before the idle reading.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const readings = [await read(child, 'idle after start')];
    const started = performance.now();
    let done = 0;
    for (const mark of readingMarks()) {
      await runTasks(server.url, server.key, done, mark);
      done = mark;
      readings.push(await read(child, `after ${mark} tasks`));
    }
    const seconds = (performance.now() - started) / 1000;

    const [idle] = readings as [Reading, ...Reading[]];
    console.log(
      `\n${TASKS} tasks in ${seconds.toFixed(0)} s (${CLIENTS} clients, ${WORKERS} worker slots, exec engine copying a 4 s 480p MP4)\n`,
    );
    console.log('| reading | RSS | heap used | heap total | external | main arena | RSS / idle |');
    console.log('|---|---|---|---|---|---|---|');
    for (const r of readings) {
      const arena = r.mainArena === undefined ? '–' : `${mb(r.mainArena).toFixed(1)} MB`;
      console.log(
        `| ${r.label} | ${mb(r.rss).toFixed(1)} MB | ${mb(r.heapUsed).toFixed(1)} MB | ${mb(r.heapTotal).toFixed(1)} MB | ${mb(r.external).toFixed(1)} MB | ${arena} | ${(r.rss / idle.rss).toFixed(2)} |`,
      );
    }
    const last = readings[readings.length - 1] ?? idle;
    console.log(
      `idle RSS ${mb(idle.rss).toFixed(1)} MB against the ${TARGET_IDLE_MB} MB target: ${(mb(idle.rss) / TARGET_IDLE_MB).toFixed(2)}x; growth after ${TASKS} tasks ${(((last.rss - idle.rss) / idle.rss) * 100).toFixed(1)} % (target: none)`,
    );
  } finally {
    if (child && child.exitCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
