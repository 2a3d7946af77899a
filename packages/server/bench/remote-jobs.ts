/**
 * Remote jobs held at once (issue 32): one server process, with default settings (one render slot, SQLite,
 * file storage), follows BENCH_JOBS (default 10 000) jobs on the strict fake of Ark (test/fakes/ark-server.ts),
 * whose tasks never finish while they are measured. Printed:
 * - the most jobs in flight upstream at once (the fake's tasks not finished), against the jobs created;
 * - the server's resident memory idle and with every job in flight, and the difference per job;
 * - how long the submissions took (one render slot submits them, one after another);
 * - requests per second to the provider over BENCH_WINDOW_SECONDS (default 20) once all are in flight, against
 *   the engine's request budget for polls (`max_requests_per_second`, default 20).
 * One setting differs from the defaults, for the measurement only: the API's rate limit and queue cap are
 * lifted, so that one client may create them all. The fake's queue limit (Ark's 120 per account) is lifted
 * too, as an account with a raised quota has it.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeArkServer } from '../test/fakes/ark-server.js';
import { Api } from '../test/helpers/api.js';
import { writeArkEnginesFile } from '../test/helpers/ark-engines-file.js';
import { serverEnv, startServer } from '../test/helpers/server-process.js';

const JOBS = Number(process.env.BENCH_JOBS ?? 10_000);
const WINDOW_SECONDS = Number(process.env.BENCH_WINDOW_SECONDS ?? 20);
const BUDGET = 20;
const CLIENTS = 16;
const KEY = 'ark-bench-key-0123456789abcdef';
const MODEL = 'videogen-2.0-fast-text-to-video';

async function residentMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'videogen-bench-remote-'));
  const ark = await FakeArkServer.start({ apiKey: KEY, cacheDir: join(dir, 'ark'), queueLimit: Infinity });
  ark.outcome = 'never-finish';
  ark.pollsQueued = 0;
  const engines = await writeArkEnginesFile(join(dir, 'engines.yaml'), {
    baseUrl: ark.baseUrl,
    apiKey: KEY,
    arkModel: 'dreamina-seedance-2-0-fast-260128',
    modelId: MODEL,
  });
  const server = await startServer(
    serverEnv(join(dir, 'data'), {
      VIDEOGEN_ENGINES_FILE: engines,
      VIDEOGEN_RATE_LIMIT_PER_MINUTE: '0',
      VIDEOGEN_MAX_QUEUED_TASKS: '0',
    }),
    60_000,
  );
  const pid = server.child.pid ?? 0;
  try {
    const api = new Api(server.url, await server.firstKey());
    await sleep(1000);
    const idle = await residentMb(pid);
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < JOBS) {
          next++;
          const { status, body } = await api.create({
            model: MODEL,
            prompt: 'a kite',
            duration: 4,
            quality: '480p',
          });
          if (status !== 200) throw new Error(`creation answered ${status}: ${JSON.stringify(body)}`);
        }
      }),
    );
    const created = Date.now();
    let peak = 0;
    while (ark.creates.length < JOBS) {
      peak = Math.max(peak, ark.creates.length);
      if (Date.now() - created > 1_200_000)
        throw new Error(`only ${ark.creates.length} jobs submitted in 20 min`);
      await sleep(250);
    }
    peak = Math.max(peak, ark.creates.length);
    const submitted = Date.now();
    const before = ark.requests.length;
    await sleep(WINDOW_SECONDS * 1000);
    const perSecond = (ark.requests.length - before) / WINDOW_SECONDS;
    peak = Math.max(peak, ark.creates.length - ark.deletes.length);
    const held = await residentMb(pid);
    const table = [
      ['jobs created', String(JOBS), `in ${((created - started) / 1000).toFixed(1)} s`],
      ['jobs in flight upstream (peak)', String(peak), `${(peak / JOBS).toFixed(2)} of the jobs created`],
      [
        'all submitted after',
        `${((submitted - started) / 1000).toFixed(1)} s`,
        `${((JOBS * 1000) / (submitted - started)).toFixed(0)} submissions/s`,
      ],
      ['server RSS idle', `${idle.toFixed(1)} MB`, ''],
      ['server RSS with every job in flight', `${held.toFixed(1)} MB`, `${(held / idle).toFixed(2)}x idle`],
      ['memory per job', `${(((held - idle) * 1024) / JOBS).toFixed(1)} KB`, ''],
      [
        `requests to the provider, ${WINDOW_SECONDS} s after`,
        `${perSecond.toFixed(1)}/s`,
        `${(perSecond / BUDGET).toFixed(2)} of the poll budget`,
      ],
    ];
    for (const [what, value, against] of table) {
      process.stdout.write(`${what?.padEnd(42)} ${value?.padStart(12)}  ${against}\n`);
    }
  } finally {
    await server.stop('SIGKILL');
    await ark.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
