/**
 * Roles as separate processes on one store: `videogen serve --role api` serves the API and sends callbacks
 * without rendering; `videogen worker` renders without serving the API. Together they finish tasks.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PublicTask } from '../src/domain/task.js';
import { Api } from './helpers/api.js';
import { CLI_PATH, runCli, type ServerProcess, serverEnv, startServer } from './helpers/server-process.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

let workDir: string;
let apiServer: ServerProcess;
let worker: ServerProcess | undefined;
let hook: WebhookReceiver;
let api: Api;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'videogen-roles-'));
  hook = await startWebhookReceiver();
  apiServer = await startServer(serverEnv(join(workDir, 'data')), 30_000, ['serve', '--role', 'api']);
  const key = await apiServer.firstKey();
  assert.ok(key, 'an API process prints the first key');
  api = new Api(apiServer.url, key);
});
after(async () => {
  await worker?.stop();
  await apiServer?.stop();
  await hook.close();
  await rm(workDir, { recursive: true, force: true });
});

describe('roles', () => {
  it('an API process queues tasks it does not render; a worker process renders them', async () => {
    const { body: task } = await api.create({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'two processes',
      duration: 4,
      quality: '480p',
      callback_url: hook.url,
    });
    // The API process says, as it starts, how many worker slots it runs: none, so nothing here renders.
    const serving = apiServer
      .stdout()
      .split('\n')
      .find((line) => line.includes('"msg":"videogen is serving"'));
    assert.ok(serving, apiServer.stdout());
    const { role, workers } = JSON.parse(serving) as { role: string; workers: number };
    assert.deepEqual({ role, workers }, { role: 'api', workers: 0 }, 'the API process runs no worker');
    assert.equal((await api.get(task.id)).body.status, 'pending');

    worker = await startServer(serverEnv(join(workDir, 'data')), 30_000, ['worker']);
    const final: PublicTask = await api.waitForFinal(task.id, 60_000);
    assert.equal(final.status, 'completed', JSON.stringify(final.error));
    const video = await fetch(final.results?.[0] ?? '');
    assert.equal(video.status, 200, 'the API process serves the result the worker stored');
    assert.ok((await video.arrayBuffer()).byteLength > 1000);
    await hook.waitFor(2, 15_000);

    const workerApi = new Api(worker.url, api.key);
    assert.equal((await workerApi.get(task.id)).status, 404, 'a worker serves no API');
    assert.equal((await fetch(`${worker.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${worker.url}/readyz`)).status, 200);
    const metrics = await (await fetch(`${worker.url}/metrics`)).text();
    assert.match(
      metrics,
      /^videogen_tasks_finished_total\{model="videogen-2.0-fast-text-to-video",status="completed",error_code=""\} 1$/m,
    );
    const apiMetrics = await (await fetch(`${apiServer.url}/metrics`)).text();
    assert.doesNotMatch(apiMetrics, /^videogen_tasks_finished_total\{/m, 'the API process finished no task');

    // Read once the worker has closed its stdout: a key banner would follow its "serving" line.
    await worker.stop();
    assert.equal(worker.printedKey(), undefined, 'a worker prints no key');
  });

  it('exits with status 1, naming the cause, when its port is taken (and leaves the store closed)', async () => {
    const taken = new URL(apiServer.listenUrl).port;
    // Only a failure waits the minute out: a process that lived on, holding its store, is killed then.
    const exited = await new Promise<{ code: number | null; killed: boolean; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [CLI_PATH, 'serve'],
        {
          env: serverEnv(join(workDir, 'taken'), { VIDEOGEN_PORT: taken }),
          timeout: 60_000,
          killSignal: 'SIGKILL',
        },
        (error, _stdout, stderr) =>
          resolve({
            code: error ? (error.code as number | null) : 0,
            killed: error?.killed ?? false,
            stderr,
          }),
      );
    });
    assert.equal(exited.killed, false, 'it exited by itself');
    assert.equal(exited.code, 1);
    assert.match(exited.stderr, /EADDRINUSE/);
  });

  it('refuses an unknown role', async () => {
    const result = await runCli(['serve', '--role', 'scheduler'], serverEnv(join(workDir, 'data')));
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--role must be one of all, api, worker/);
  });
});
