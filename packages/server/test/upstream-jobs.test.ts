/**
 * Paid jobs survive deploys and crashes (issue 32): tasks running upstream on a strict fake of Ark go through a
 * deploy's SIGTERM and a SIGKILL of the server, each followed by a restart. Ark receives one submission per task
 * in all, is asked to delete none, and every task completes with the video Ark made for it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TaskRecord } from '../src/domain/task.js';
import type { TaskStore } from '../src/ports/store.js';
import { PgStore } from '../src/store/pg/pg-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { FakeArkServer } from './fakes/ark-server.js';
import { Api } from './helpers/api.js';
import { writeArkEnginesFile } from './helpers/ark-engines-file.js';
import { startAssetServer } from './helpers/asset-server.js';
import { CuttableTcpProxy } from './helpers/cuttable-tcp-proxy.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { type ServerProcess, serverEnv, startServer } from './helpers/server-process.js';
import { until } from './helpers/until.js';

const KEY = 'ark-test-key-0123456789abcdef';
const SEEDANCE_2_FAST = 'dreamina-seedance-2-0-fast-260128';
const MODEL = 'videogen-2.0-fast-text-to-video';
const IMAGE_MODEL = 'videogen-2.0-fast-image-to-video';
const TASKS = 6;

let dir: string;
let ark: FakeArkServer;
const servers: ServerProcess[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-upstream-jobs-'));
  ark = await FakeArkServer.start({ apiKey: KEY, cacheDir: join(dir, 'ark-cache') });
});

after(async () => {
  await Promise.all(servers.map((server) => server.stop('SIGKILL')));
  await ark.close();
  await rm(dir, { recursive: true, force: true });
});

let enginesFiles = 0;
function enginesFile(options: Readonly<Record<string, number>> = {}): Promise<string> {
  return writeArkEnginesFile(join(dir, `engines-${++enginesFiles}.yaml`), {
    baseUrl: ark.baseUrl,
    apiKey: KEY,
    arkModel: SEEDANCE_2_FAST,
    modelId: MODEL,
    options: { poll_interval_ms: 50, ...options },
  });
}

/** Every task once `done` holds for all of them (what is awaited happens; nothing is waited out). */
function allOnce(
  store: Pick<TaskStore, 'getTask'>,
  ids: readonly string[],
  what: string,
  done: (task: TaskRecord) => boolean,
) {
  return until(
    async () => {
      const tasks = await Promise.all(ids.map((id) => store.getTask(id)));
      return tasks.every((task) => task !== undefined && done(task)) && (tasks as TaskRecord[]);
    },
    what,
    { intervalMs: 25, timeoutMs: 120_000 },
  );
}

/** Creates a task and waits until its job is accepted upstream and stored. */
async function acceptedJob(api: Api, store: Pick<TaskStore, 'getTask'>, prompt: string) {
  const { body } = await api.create({ model: MODEL, prompt, duration: 4, quality: '480p' });
  const [task] = await allOnce(store, [body.id], 'the job accepted upstream', (t) => Boolean(t.upstreamJob));
  const job = task?.upstreamJob;
  assert.ok(job);
  return { taskId: body.id, jobId: job.id, submittedAt: job.submittedAt };
}

/** The client's cancel, and the provider's DELETE of the job it leads to. */
async function cancelUpstream(api: Api, accepted: { taskId: string; jobId: string }): Promise<void> {
  const answer = await api.request('POST', `/v1/tasks/${accepted.taskId}/cancel`, { body: {} });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  await until(
    () => ark.deletes.some((deleted) => deleted.id === accepted.jobId),
    `DELETE of ${accepted.jobId}`,
  );
}

/** Claimed, since its start, by `server`'s workers (its worker ids carry its pid). */
function runsOn(server: ServerProcess): (task: TaskRecord) => boolean {
  return (task) => task.status === 'processing' && (task.leaseOwner ?? '').includes(`-${server.child.pid}-`);
}

/** A server over `data` whose workers run the fast text model on the fake, six at a time. */
async function starter(
  data: string,
  extra: Record<string, string> = {},
  engineOptions: Readonly<Record<string, number>> = {},
): Promise<() => Promise<ServerProcess>> {
  const env = serverEnv(data, {
    VIDEOGEN_ENGINES_FILE: await enginesFile(engineOptions),
    VIDEOGEN_WORKER_CONCURRENCY: String(TASKS),
    VIDEOGEN_SHUTDOWN_GRACE_SECONDS: '0',
    ...extra,
  });
  return async () => {
    const server = await startServer(env, 60_000);
    servers.push(server);
    return server;
  };
}

describe('remote jobs through a SIGTERM restart and a SIGKILL restart (SQLite)', () => {
  it('submits each once, cancels none upstream, and completes each with the video Ark made', async () => {
    ark.outcome = 'never-finish';
    const data = join(dir, 'data');
    const start = await starter(data);
    const first = await start();
    const key = await first.firstKey();
    const api = new Api(first.url, key);
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const { status, body } = await api.create({
        model: MODEL,
        prompt: `kite ${i}`,
        duration: 4,
        quality: '480p',
      });
      assert.equal(status, 200, JSON.stringify(body));
      ids.push(body.id);
    }
    const store = new SqliteStore({ path: join(data, 'videogen.db') });
    try {
      const accepted = await allOnce(store, ids, 'every job accepted upstream and stored', (task) =>
        Boolean(task.upstreamJob),
      );
      const jobs = new Map(accepted.map((task) => [task.id, task.upstreamJob?.id]));
      assert.equal(ark.creates.length, TASKS);
      assert.deepEqual(new Set(jobs.values()), new Set(ark.creates.map((create) => create.id)));

      // A deploy: SIGTERM, no grace, and a new process.
      await first.stop('SIGTERM');
      const second = await start();
      await allOnce(store, ids, 'every task resumed by the second process', runsOn(second));
      // A crash: SIGKILL mid-poll, and a new process.
      await second.stop('SIGKILL');
      const third = await start();
      const resumed = await allOnce(store, ids, 'every task resumed by the third process', runsOn(third));
      for (const task of resumed) assert.equal(task.upstreamJob?.id, jobs.get(task.id), 'the same job');
      assert.equal(ark.creates.length, TASKS, 'no job submitted again');

      ark.outcome = 'succeed';
      const thirdApi = new Api(third.url, key);
      for (const id of ids) {
        const final = await thirdApi.waitForFinal(id, 120_000);
        assert.equal(final.status, 'completed', JSON.stringify(final.error));
      }
      assert.equal(ark.creates.length, TASKS, 'one submission per task in all');
      assert.deepEqual(ark.deletes, [], 'nothing cancelled upstream');
      for (const job of jobs.values()) {
        assert.ok(
          ark.requests.some((request) => request.path === `/tos/ark-content-generation/${job}.mp4`),
          `the video of ${job} was fetched from Ark`,
        );
      }
    } finally {
      await store.close();
    }
  });
});

describe("a client's cancel of a remote job", () => {
  it('reaches the provider, after a restart as before it', async () => {
    ark.outcome = 'never-finish';
    const data = join(dir, 'cancel');
    const start = await starter(data);
    const first = await start();
    const key = await first.firstKey();
    const store = new SqliteStore({ path: join(data, 'videogen.db') });
    try {
      const api = new Api(first.url, key);
      const cancelledHere = await acceptedJob(api, store, 'a kite');
      await cancelUpstream(api, cancelledHere);
      // A job handed over by a deploy and resumed is cancelled as well.
      const handedOver = await acceptedJob(api, store, 'another kite');
      await first.stop('SIGTERM');
      const second = await start();
      await allOnce(store, [handedOver.taskId], 'the task resumed', runsOn(second));
      assert.equal(
        ark.deletes.filter((deleted) => deleted.id === handedOver.jobId).length,
        0,
        'not at the deploy',
      );
      await cancelUpstream(new Api(second.url, key), handedOver);
    } finally {
      await store.close();
    }
  });
});

describe("a remote job's time limit", () => {
  it("is the engine's, not the task timeout: a job that outlasts VIDEOGEN_TASK_TIMEOUT_SECONDS completes", async () => {
    ark.outcome = 'never-finish';
    const data = join(dir, 'outlasts');
    // The worker's own phases (submitting, then fetching and conforming the result) keep this limit each.
    const taskTimeoutMs = 8000;
    const server = await (
      await starter(data, { VIDEOGEN_TASK_TIMEOUT_SECONDS: String(taskTimeoutMs / 1000) })
    )();
    const key = await server.firstKey();
    const store = new SqliteStore({ path: join(data, 'videogen.db') });
    try {
      const api = new Api(server.url, key);
      const job = await acceptedJob(api, store, 'a kite that takes its time');
      // A poll of the job after the task timeout has passed since its submission (the task outlived it
      // upstream), or the task's end (what a task timeout applied to the job would bring).
      const polledLate = () =>
        ark.requests.some(
          (request) =>
            request.method === 'GET' &&
            request.path.endsWith(`/${job.jobId}`) &&
            request.at > job.submittedAt + taskTimeoutMs + 1000,
        );
      const ended = await until(
        async () => polledLate() || (await store.getTask(job.taskId))?.status === 'failed',
        'a poll past the task timeout, or the task failed',
        { intervalMs: 50, timeoutMs: 120_000 },
      );
      assert.equal((await store.getTask(job.taskId))?.status, 'processing', String(ended));
      ark.outcome = 'succeed';
      const final = await api.waitForFinal(job.taskId, 60_000);
      assert.equal(final.status, 'completed', JSON.stringify(final.error));
      assert.deepEqual(
        ark.deletes.filter((deleted) => deleted.id === job.jobId),
        [],
        'never cancelled upstream',
      );
    } finally {
      await store.close();
    }
  });

  it('runs from its submission across restarts: past it, the job is cancelled upstream and the task fails', async () => {
    ark.outcome = 'never-finish';
    const data = join(dir, 'limit');
    const first = await (await starter(data))();
    const key = await first.firstKey();
    const store = new SqliteStore({ path: join(data, 'videogen.db') });
    try {
      const job = await acceptedJob(new Api(first.url, key), store, 'a slow kite');
      await first.stop('SIGTERM');
      assert.deepEqual(
        ark.deletes.filter((deleted) => deleted.id === job.jobId),
        [],
        'not at the deploy',
      );
      // Started again with a job limit of 1 s, which the job's submission is already further back than.
      await until(() => Date.now() > job.submittedAt + 1000, 'a second since the submission');
      const second = await (await starter(data, {}, { job_timeout_seconds: 1 }))();
      const final = await new Api(second.url, key).waitForFinal(job.taskId, 60_000);
      assert.equal(final.status, 'failed');
      assert.equal(final.error?.code, 'timeout');
      assert.match(
        final.error?.message ?? '',
        /engine "seedance" did not finish within 1 s of its submission/,
      );
      await until(() => ark.deletes.some((deleted) => deleted.id === job.jobId), `DELETE of ${job.jobId}`);
      const submissions = ark.creates.filter((create) => JSON.stringify(create.body).includes('a slow kite'));
      assert.equal(submissions.length, 1, 'submitted once');
    } finally {
      await store.close();
    }
  });
});

describe("a resumed job's inputs", () => {
  it('are not fetched again: a picture whose link is gone since the submission does not fail the job', async () => {
    ark.outcome = 'never-finish';
    const picture = join(dir, 'first-frame.png');
    await writeTestImage(picture, { width: 640, height: 360, colour: [200, 40, 40] });
    const files: Record<string, { body: Buffer; type: string }> = {
      '/first-frame.png': { body: await readFile(picture), type: 'image/png' },
    };
    const assets = await startAssetServer(files);
    const data = join(dir, 'resumed-inputs');
    const env = serverEnv(data, {
      VIDEOGEN_ENGINES_FILE: await writeArkEnginesFile(join(dir, 'engines-image.yaml'), {
        baseUrl: ark.baseUrl,
        apiKey: KEY,
        arkModel: SEEDANCE_2_FAST,
        modelId: IMAGE_MODEL,
        options: { poll_interval_ms: 50 },
      }),
      VIDEOGEN_SHUTDOWN_GRACE_SECONDS: '0',
    });
    const first = await startServer(env, 60_000);
    servers.push(first);
    const key = await first.firstKey();
    const store = new SqliteStore({ path: join(data, 'videogen.db') });
    try {
      const { status, body } = await new Api(first.url, key).create({
        model: IMAGE_MODEL,
        prompt: 'the red card turns',
        image_urls: [`${assets.url}/first-frame.png`],
        aspect_ratio: '16:9',
        duration: 4,
        quality: '480p',
      });
      assert.equal(status, 200, JSON.stringify(body));
      await allOnce(store, [body.id], 'the job accepted upstream', (task) => Boolean(task.upstreamJob));
      const submissions = ark.creates.length;
      // The link expires, the service is deployed again, and the job ends upstream.
      delete files['/first-frame.png'];
      await first.stop('SIGTERM');
      const second = await startServer(env, 60_000);
      servers.push(second);
      ark.outcome = 'succeed';
      const final = await new Api(second.url, key).waitForFinal(body.id, 120_000);
      assert.equal(final.status, 'completed', JSON.stringify(final.error));
      assert.equal(ark.creates.length, submissions, 'not submitted again');
    } finally {
      await store.close();
      await assets.close();
    }
  });
});

describe('a store outage mid-job (PostgreSQL)', async () => {
  const schemas = freshSchemas();
  const options = await postgresSuite();

  it(
    'loses no job and submits none again: the jobs resume once the database is back, and complete',
    options,
    async () => {
      ark.outcome = 'never-finish';
      const database = new URL(TEST_DATABASE_URL);
      const proxy = await CuttableTcpProxy.start({
        host: database.hostname,
        port: Number(database.port || 5432),
      });
      const schema = schemas();
      const throughProxy = new URL(TEST_DATABASE_URL);
      throughProxy.hostname = '127.0.0.1';
      throughProxy.port = String(proxy.port);
      const leaseSeconds = 2;
      const start = await starter(join(dir, 'outage'), {
        VIDEOGEN_DATABASE_URL: throughProxy.href,
        VIDEOGEN_DATABASE_SCHEMA: schema,
        VIDEOGEN_LEASE_SECONDS: String(leaseSeconds),
      });
      const server = await start();
      const store = new PgStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
      try {
        const key = await server.firstKey();
        const api = new Api(server.url, key);
        const jobs = [
          await acceptedJob(api, store, 'a kite in the outage'),
          await acceptedJob(api, store, 'another kite in the outage'),
        ];
        const submitted = ark.creates.length;
        // The database goes away for longer than the leases: every connection reset, none taken.
        proxy.cut();
        const cutAt = Date.now();
        await until(() => Date.now() > cutAt + 3 * leaseSeconds * 1000, 'the outage outlasting the leases', {
          timeoutMs: 60_000,
          intervalMs: 100,
        });
        proxy.restore();
        ark.outcome = 'succeed';
        for (const job of jobs) {
          const final = await api.waitForFinal(job.taskId, 120_000);
          assert.equal(final.status, 'completed', JSON.stringify(final.error));
          assert.equal((await store.getTask(job.taskId))?.upstreamJob?.id, job.jobId, 'the same job');
        }
        assert.equal(server.child.exitCode, null, 'the server rode the outage out');
        assert.equal(ark.creates.length, submitted, 'no job submitted again');
        const jobIds = new Set(jobs.map((job) => job.jobId));
        assert.deepEqual(
          ark.deletes.filter((deleted) => jobIds.has(deleted.id)),
          [],
          'nothing cancelled upstream',
        );
      } catch (error) {
        // What the server logged says why, if it died.
        const exited = server.child.exitCode ?? server.child.signalCode;
        throw new Error(
          `${error instanceof Error ? error.message : String(error)} (server exit: ${exited}):\n` +
            `${server.stdout().slice(-6000)}\n${server.stderr().slice(-3000)}`,
          { cause: error },
        );
      } finally {
        await server.stop('SIGKILL');
        await store.close();
        await proxy.close();
      }
    },
  );
});
