/**
 * Many machines, as the deployment guide describes them: 2 API processes and 3 worker processes sharing
 * PostgreSQL and S3-compatible storage (s3rver). Tasks of all six models, one worker killed with SIGKILL
 * mid-render and another stopped with SIGTERM: every task completes exactly once (one completion in the logs,
 * one result object, one completed callback per webhook-id), and an interrupted task is taken up again within
 * an orphan check plus a render, without waiting for its lease.
 *
 * The two workers that get the signals render with the local engine, so that the signals land in real renders.
 * The third carries the bulk with an instant engine: an `exec` engine copying a ready-made MP4 of the requested
 * size and length (the pipeline still probes, conforms and stores it), for the three standard models; it renders
 * the three fast models for real, so at least those three results are real renders whoever runs them.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Webhook } from 'standardwebhooks';
import type { PublicTask } from '../src/domain/task.js';
import { Api } from './helpers/api.js';
import { type AssetServer, startAssetServer } from './helpers/asset-server.js';
import { writeTestAudio, writeTestImage, writeTestVideo } from './helpers/media-fixtures.js';
import { mp4Facts } from './helpers/mp4-facts.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { type S3TestServer, startS3Server } from './helpers/s3-server.js';
import { runCli, type ServerProcess, serverEnv, startServer } from './helpers/server-process.js';
import { until } from './helpers/until.js';
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from './helpers/webhook-receiver.js';

/** One of each model first, then the standard models in turn: the bulk, which the instant engine takes. */
const TASKS = 60;
/**
 * Long: a SIGKILLed worker's task is requeued when its database session ends (pg-worker-lock.ts), not when its
 * lease runs out, and a lease this long never lapses for a worker that the loaded machine merely slowed.
 */
const LEASE_SECONDS = 30;
/** How often worker pools look for pools that died (runner/worker-pool.ts). */
const ORPHAN_CHECK_MS = 2000;
/** How long a pool's lock must be missing before it counts as dead (runner/worker-pool.ts, orphan-judge.ts). */
const ORPHAN_GRACE_MS = 5000;
const postgres = await postgresSuite();

interface LogLine {
  msg: string;
  time: number;
  task_id?: string;
  worker_id?: string;
  completed?: boolean;
  ms?: number;
  model?: string;
  engine?: string;
}

function logLines(process: ServerProcess): LogLine[] {
  return process
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/**
 * The task a worker has started and not finished, if any. With `fresh`, only a standard-model task started
 * in the last `fresh` ms: a fast 480p task can finish within the moment it takes a signal to arrive.
 */
function renderingNow(worker: ServerProcess, fresh?: number): string | undefined {
  const lines = logLines(worker);
  const started = lines.filter((l) => l.msg === 'task started').at(-1);
  if (!started?.task_id) return undefined;
  if (fresh !== undefined && (started.model?.includes('-fast-') || started.time < Date.now() - fresh)) {
    return undefined;
  }
  const ended = new Set(
    lines.filter((l) => l.msg === 'task finished' || l.msg === 'task failed').map((l) => l.task_id),
  );
  return ended.has(started.task_id) ? undefined : started.task_id;
}

describe('a cluster on PostgreSQL and S3', postgres, () => {
  let workDir: string;
  let s3: S3TestServer;
  let assets: AssetServer;
  let hook: WebhookReceiver;
  let env: NodeJS.ProcessEnv;
  const apis: ServerProcess[] = [];
  const workers: ServerProcess[] = [];
  // Registered before freshSchemas registers its own: hooks run in that order, so the schema is dropped once no
  // process of the cluster is left claiming in it (a drop beside live transactions can deadlock with them).
  after(async () => {
    await Promise.all([...apis, ...workers].map((p) => p.stop('SIGKILL')));
    await Promise.all([assets?.close(), hook?.close(), s3?.close()]);
    await rm(workDir, { recursive: true, force: true });
  });
  const schema = freshSchemas()();

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'videogen-cluster-'));
    s3 = await startS3Server();
    hook = await startWebhookReceiver();
    await writeTestImage(join(workDir, 'a.png'), { width: 320, height: 240, colour: [200, 40, 40] });
    await writeTestImage(join(workDir, 'b.png'), { width: 320, height: 240, colour: [40, 40, 200] });
    await writeTestAudio(join(workDir, 'tone.m4a'), { seconds: 2 });
    // What the instant engine hands over: already H.264 yuv420p, 24 fps, 640x480, 4 s, so it is only re-muxed.
    const instantVideo = join(workDir, 'instant.mp4');
    await writeTestVideo(instantVideo, { width: 640, height: 480, fps: 24, seconds: 4 });
    const enginesFile = join(workDir, 'engines.json');
    await writeFile(
      enginesFile,
      JSON.stringify({
        engines: {
          instant: {
            type: 'exec',
            // The first image is passed (and ignored): a command takes only the inputs it names.
            command: ['sh', '-c', 'cp "$1" "$2"', 'instant', instantVideo, '{output}', ['{image}']],
          },
        },
        models: {
          'videogen-2.0-text-to-video': 'instant',
          'videogen-2.0-image-to-video': 'instant',
          'videogen-2.0-reference-to-video': 'instant',
          'videogen-2.0-fast-text-to-video': 'local',
          'videogen-2.0-fast-image-to-video': 'local',
          'videogen-2.0-fast-reference-to-video': 'local',
        },
      }),
    );
    const file = async (name: string, type: string) => ({ body: await readFile(join(workDir, name)), type });
    assets = await startAssetServer({
      '/a.png': await file('a.png', 'image/png'),
      '/b.png': await file('b.png', 'image/png'),
      '/tone.m4a': await file('tone.m4a', 'audio/mp4'),
    });
    env = serverEnv(join(workDir, 'data'), {
      VIDEOGEN_DATABASE_URL: TEST_DATABASE_URL,
      VIDEOGEN_DATABASE_SCHEMA: schema,
      VIDEOGEN_STORAGE_URL: `s3://${s3.bucket}/cluster?force_path_style=true`,
      VIDEOGEN_LEASE_SECONDS: String(LEASE_SECONDS),
      VIDEOGEN_SHUTDOWN_GRACE_SECONDS: '0',
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      AWS_REQUEST_CHECKSUM_CALCULATION: 'when_required',
      AWS_RESPONSE_CHECKSUM_VALIDATION: 'when_required',
    });
    // The first API process migrates and makes the first key; the rest start together. The workers in turn:
    // the one to be SIGKILLed and the one to be SIGTERMed (local engine), then the instant one.
    apis.push(await startServer(env, 60_000, ['serve', '--role', 'api']));
    const started = await Promise.all([
      startServer(env, 60_000, ['serve', '--role', 'api']),
      startServer(env, 60_000, ['worker']),
      startServer(env, 60_000, ['worker']),
      startServer({ ...env, VIDEOGEN_ENGINES_FILE: enginesFile }, 60_000, ['worker']),
    ]);
    apis.push(started[0]!);
    workers.push(...started.slice(1));
  });

  it('completes every task exactly once through a SIGKILL and a SIGTERM', { timeout: 600_000 }, async () => {
    const testStarted = Date.now();
    const key = await apis[0]?.firstKey();
    assert.ok(key, 'the first API process prints a key');
    assert.equal(apis[1]?.printedKey(), undefined);
    const clients = apis.map((api) => new Api(api.url, key));
    const bodies = [
      { model: 'videogen-2.0-text-to-video' },
      { model: 'videogen-2.0-fast-text-to-video' },
      { model: 'videogen-2.0-image-to-video', image_urls: [`${assets.url}/a.png`] },
      {
        model: 'videogen-2.0-fast-image-to-video',
        image_urls: [`${assets.url}/a.png`, `${assets.url}/b.png`],
      },
      { model: 'videogen-2.0-reference-to-video', image_urls: [`${assets.url}/b.png`] },
      {
        model: 'videogen-2.0-fast-reference-to-video',
        image_urls: [`${assets.url}/a.png`],
        audio_urls: [`${assets.url}/tone.m4a`],
      },
    ];
    const standard = bodies.filter((body) => !body.model.includes('-fast-'));
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const { status, body } = await clients[i % 2]!.create({
        ...(i < bodies.length ? bodies[i] : standard[i % standard.length]),
        prompt: `task ${i}`,
        quality: '480p',
        aspect_ratio: '4:3',
        duration: 4,
        callback_url: `${hook.url}/tasks`,
      });
      assert.equal(status, 200, JSON.stringify(body));
      ids.push(body.id);
    }

    const [victim, stopped] = workers;
    assert.ok(victim && stopped);
    await until(() => renderingNow(victim, 150), 'a render just begun on the first worker', {
      timeoutMs: 60_000,
    });
    // Taken before the signal: another worker may take the task up before this process sees the victim's exit.
    const killedAt = Date.now();
    await victim.stop('SIGKILL');
    // Read from the complete log once the worker is dead: a task it finished before the signal landed is not it.
    const killedTask = renderingNow(victim);
    assert.ok(killedTask, 'the SIGKILLed worker died mid-render');
    await until(() => renderingNow(stopped, 150), 'a render just begun on the second worker', {
      timeoutMs: 60_000,
    });
    assert.equal(await stopped.stop('SIGTERM'), 0, 'SIGTERM stops a worker cleanly');
    const released = logLines(stopped).find((l) => l.msg === 'task released at shutdown');
    const releasedTask = released?.task_id;
    assert.ok(released && releasedTask, 'the SIGTERMed worker handed its task back');
    // When it handed the task back, by its own log: another worker may start it while this one is still exiting.
    const releasedAt = released.time;

    const final = new Map<string, PublicTask>();
    await until(
      async () => {
        for (const [i, id] of ids.entries()) {
          if (final.has(id)) continue;
          const { body } = await clients[i % 2]!.get(id);
          if (body.status === 'completed' || body.status === 'failed') final.set(id, body);
        }
        return final.size === TASKS;
      },
      'every task to finish',
      { timeoutMs: 480_000, intervalMs: 100 },
    );
    const failed = [...final.values()].filter((t) => t.status !== 'completed');
    assert.deepEqual(failed, [], 'every task completed');

    // Exactly one completion per task across every worker's log; the interrupted runs never completed.
    const lines = workers.flatMap((worker) => logLines(worker).map((line) => ({ ...line, worker })));
    const completions = new Map<string, number>();
    for (const line of lines) {
      if (line.msg === 'task finished' && line.completed && line.task_id) {
        completions.set(line.task_id, (completions.get(line.task_id) ?? 0) + 1);
      }
    }
    assert.deepEqual(
      ids.filter((id) => completions.get(id) !== 1),
      [],
      'one completion each',
    );
    assert.ok(
      !lines.some((l) => l.worker === victim && l.msg === 'task finished' && l.task_id === killedTask),
    );

    // Taken up again within the orphan grace, the looks around it and one render (the workers were all busy;
    // FIFO puts it first), well before its lease would have run out.
    const longestRender = Math.max(...lines.filter((l) => l.msg === 'task finished').map((l) => l.ms ?? 0));
    // By any worker but the one that gave it up: the killed task may have gone to the worker SIGTERMed later,
    // when that render began too soon before the test looked for one just begun.
    const restartOf = (taskId: string, after: number, notBy: ServerProcess) =>
      lines.find(
        (l) => l.msg === 'task started' && l.task_id === taskId && l.time >= after && l.worker !== notBy,
      )?.time;
    const killedRestart = restartOf(killedTask, killedAt, victim);
    assert.ok(killedRestart !== undefined, 'the killed task ran again');
    assert.ok(
      killedRestart - killedAt <= ORPHAN_GRACE_MS + 2 * ORPHAN_CHECK_MS + longestRender + 2000,
      `re-claimed ${killedRestart - killedAt} ms after the kill (orphan check every ${ORPHAN_CHECK_MS} ms, grace ${ORPHAN_GRACE_MS} ms, longest render ${longestRender} ms)`,
    );
    const releasedRestart = restartOf(releasedTask, releasedAt, stopped);
    assert.ok(releasedRestart !== undefined, 'the released task ran again');
    assert.ok(releasedRestart - releasedAt <= longestRender + 2000, 'a released task needs no lease expiry');

    // One result object per task in the bucket, under the prefix.
    const s3Client = new S3Client(s3.clientConfig);
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3Client.send(
        new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'cluster/results/', ContinuationToken: token }),
      );
      keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ''));
      token = page.NextContinuationToken;
    } while (token);
    s3Client.destroy();
    assert.deepEqual(keys.sort(), ids.map((id) => `cluster/results/${id}.mp4`).sort());

    // The instant engine carried tasks; the fast models were real renders, whichever worker took them.
    const startedOn = (engine: string) =>
      new Set(lines.filter((l) => l.msg === 'task started' && l.engine === engine).map((l) => l.task_id));
    assert.ok(startedOn('instant').size > 0, 'the instant engine rendered tasks');
    const rendered = startedOn('local');
    const fast = ids.slice(0, bodies.length).filter((id) => final.get(id)?.model.includes('-fast-'));
    assert.equal(fast.length, 3);
    assert.deepEqual(
      fast.filter((id) => !rendered.has(id)),
      [],
      'the fast models rendered locally',
    );

    // Results are presigned bucket URLs; one of each model is a real MP4 of the requested size and length.
    const firstOfEach = ids.slice(0, bodies.length).map((id) => final.get(id));
    assert.deepEqual(
      firstOfEach.map((task) => task?.model),
      bodies.map((body) => body.model),
    );
    for (const task of firstOfEach) {
      assert.ok(task);
      const url = task.results?.[0] ?? '';
      assert.ok(url.startsWith(`${s3.endpoint}/${s3.bucket}/cluster/results/${task.id}.mp4?`), url);
      const response = await fetch(url);
      assert.equal(response.status, 200);
      const path = join(workDir, `${task.id}.mp4`);
      await writeFile(path, Buffer.from(await response.arrayBuffer()));
      const facts = await mp4Facts(path);
      assert.equal(facts.video?.width, 640, task.model);
      assert.equal(facts.video?.height, 480, task.model);
      assert.ok(Math.abs(facts.duration - 4) <= 1 / 24 + 0.01, `${task.model}: ${facts.duration} s`);
    }

    // Callbacks: each task's completion reached the receiver under exactly one webhook-id, correctly signed.
    const secret = (await runCli(['webhooks', 'secret'], env)).stdout.trim();
    await until(
      () => {
        const done = new Set(
          hook.received
            .filter((w) => (JSON.parse(w.body) as PublicTask).status === 'completed')
            .map((w) => (JSON.parse(w.body) as PublicTask).id),
        );
        return done.size === TASKS;
      },
      'every completed callback',
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    const completedIds = new Map<string, Set<string>>();
    const signer = new Webhook(secret);
    for (const webhook of hook.received as ReceivedWebhook[]) {
      // Signed as the library signs, compared here: Webhook.verify would also refuse a timestamp over 5 minutes
      // before now, and on a loaded machine this check runs more than 5 minutes after the first callbacks.
      const id = String(webhook.headers['webhook-id']);
      const timestamp = Number(webhook.headers['webhook-timestamp']);
      assert.ok(timestamp * 1000 >= testStarted - 1000 && timestamp * 1000 <= Date.now() + 1000, 'timestamp');
      const expected = signer.sign(id, new Date(timestamp * 1000), webhook.body);
      const given = String(webhook.headers['webhook-signature']).split(' ');
      assert.ok(given.includes(expected), `webhook ${id}: signature`);
      const body = JSON.parse(webhook.body) as PublicTask;
      if (body.status !== 'completed') continue;
      const set = completedIds.get(body.id) ?? new Set();
      set.add(String(webhook.headers['webhook-id']));
      completedIds.set(body.id, set);
    }
    assert.deepEqual(
      ids.filter((id) => completedIds.get(id)?.size !== 1),
      [],
      'one completed webhook-id per task',
    );
  });
});
