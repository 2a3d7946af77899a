/**
 * The service end to end, as an operator runs it: the built `videogen` binary serving on 127.0.0.1, keys from
 * the CLI, every model rendering a real MP4 that ffprobe confirms, and a task that survives `kill -9`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PublicTask } from '../src/domain/task.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { Api } from './helpers/api.js';
import { type AssetServer, startAssetServer } from './helpers/asset-server.js';
import { writeTestAudio, writeTestImage, writeTestVideo } from './helpers/media-fixtures.js';
import { mp4Facts } from './helpers/mp4-facts.js';
import { runCli, type ServerProcess, serverEnv, startServer } from './helpers/server-process.js';
import { until } from './helpers/until.js';

const FRAME_SECONDS = 1 / 24;

let workDir: string;
let dataDir: string;
let assets: AssetServer;
let server: ServerProcess;
let api: Api;
let firstKey: string;

async function download(url: string, name: string): Promise<string> {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'video/mp4');
  const path = join(workDir, name);
  await writeFile(path, Buffer.from(await response.arrayBuffer()));
  return path;
}

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'videogen-e2e-'));
  dataDir = join(workDir, 'data');
  await writeTestImage(join(workDir, 'red.png'), {
    width: 400,
    height: 400,
    colour: [220, 30, 30],
    accent: [250, 250, 250],
  });
  await writeTestImage(join(workDir, 'blue.jpg'), { width: 640, height: 480, colour: [30, 40, 220] });
  await writeTestVideo(join(workDir, 'clip.mp4'), { width: 320, height: 240, seconds: 2 });
  await writeTestAudio(join(workDir, 'tone.m4a'), { seconds: 2 });
  await writeFile(join(workDir, 'notes.txt'), 'this is not an image');
  const file = async (name: string, type: string) => ({ body: await readFile(join(workDir, name)), type });
  assets = await startAssetServer({
    '/red.png': await file('red.png', 'image/png'),
    '/blue.jpg': await file('blue.jpg', 'image/jpeg'),
    '/clip.mp4': await file('clip.mp4', 'video/mp4'),
    '/tone.m4a': await file('tone.m4a', 'audio/mp4'),
    '/notes.txt': await file('notes.txt', 'image/png'),
  });
  server = await startServer(serverEnv(dataDir, { VIDEOGEN_WORKER_CONCURRENCY: '2' }));
  const printed = await server.firstKey();
  assert.ok(printed, `the first start prints a development key:\n${server.stdout()}`);
  firstKey = printed;
  assert.match(server.stdout(), /curl -s http:\/\/127\.0\.0\.1:\d+\/v1\/videos\/generations/);
  api = new Api(server.url, firstKey);
});

after(async () => {
  await server?.stop();
  await assets?.close();
  await rm(workDir, { recursive: true, force: true });
});

describe('every model renders a video matching the request', () => {
  const cases: {
    name: string;
    body: () => Record<string, unknown>;
    size: [number, number];
    audio: boolean;
  }[] = [
    {
      name: "text-to-video, 480p 16:9, 4 s, with the engine's own soundtrack (generate_audio by default)",
      body: () => ({
        model: 'videogen-2.0-text-to-video',
        prompt: 'a yellow sun over a calm sea',
        quality: '480p',
        duration: 4,
      }),
      size: [854, 480],
      audio: true,
    },
    {
      name: 'fast text-to-video, 480p 9:16, 5 s, silent (generate_audio false)',
      body: () => ({
        model: 'videogen-2.0-fast-text-to-video',
        prompt: 'green rain',
        quality: '480p',
        aspect_ratio: '9:16',
        duration: 5,
        generate_audio: false,
      }),
      size: [480, 854],
      audio: false,
    },
    {
      name: 'image-to-video, first frame, adaptive follows the square image',
      body: () => ({
        model: 'videogen-2.0-image-to-video',
        prompt: 'push in',
        image_urls: [`${assets.url}/red.png`],
        quality: '480p',
        duration: 4,
      }),
      size: [480, 480],
      audio: true,
    },
    {
      name: 'fast image-to-video, first and last frame, 4:3',
      body: () => ({
        model: 'videogen-2.0-fast-image-to-video',
        prompt: 'from red to blue',
        image_urls: [`${assets.url}/red.png`, `${assets.url}/blue.jpg`],
        quality: '480p',
        aspect_ratio: '4:3',
        duration: 4,
        generate_audio: false,
      }),
      size: [640, 480],
      audio: false,
    },
    {
      name: 'reference-to-video with an image, a video and an audio reference',
      body: () => ({
        model: 'videogen-2.0-reference-to-video',
        prompt: 'image 1 then video 1, audio 1 as music',
        image_urls: [`${assets.url}/red.png`],
        video_urls: [`${assets.url}/clip.mp4`],
        audio_urls: [`${assets.url}/tone.m4a`],
        quality: '480p',
        duration: 5,
      }),
      size: [480, 480],
      audio: true,
    },
    {
      name: 'fast reference-to-video from a data: video URL, adaptive follows the 4:3 video',
      body: () => ({
        model: 'videogen-2.0-fast-reference-to-video',
        prompt: 'video 1 with audio 1',
        video_urls: [`${assets.url}/clip.mp4`],
        audio_urls: [`data:audio/mp4;base64,${fixtureBase64('tone.m4a')}`],
        quality: '480p',
        duration: 4,
      }),
      size: [640, 480],
      audio: true,
    },
  ];
  const fixtureCache = new Map<string, string>();
  function fixtureBase64(name: string): string {
    const cached = fixtureCache.get(name);
    if (!cached) throw new Error(`fixture ${name} not loaded`);
    return cached;
  }
  before(async () => {
    fixtureCache.set('tone.m4a', (await readFile(join(workDir, 'tone.m4a'))).toString('base64'));
  });

  for (const [index, testCase] of cases.entries()) {
    it(testCase.name, async () => {
      const body = testCase.body();
      const created = await api.create(body);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.status, 'pending');
      const seen = new Set<string>();
      const task = await api.waitForFinal(created.body.id, 120_000, seen);
      assert.equal(task.status, 'completed', JSON.stringify(task.error));
      assert.equal(task.progress, 100);
      assert.ok(task.completed_at);
      assert.equal(task.results?.length, 1);
      assert.ok(!seen.has('failed'));

      const path = await download(task.results![0]!, `result-${index}.mp4`);
      const facts = await mp4Facts(path);
      assert.equal(facts.video?.codec, 'h264');
      assert.equal(facts.video?.pixelFormat, 'yuv420p');
      assert.equal(facts.video?.width, testCase.size[0]);
      assert.equal(facts.video?.height, testCase.size[1]);
      assert.equal(facts.video?.frameRate, 24);
      assert.ok(
        Math.abs(facts.duration - Number(body.duration)) <= FRAME_SECONDS + 0.01,
        `duration ${facts.duration}`,
      );
      assert.equal(facts.audio !== undefined, testCase.audio, 'audio stream presence');
      assert.equal(task.generate_audio, body.generate_audio ?? true, 'generate_audio echoed');
      assert.ok(facts.moovBeforeMdat);
    });
  }
});

describe('result links', () => {
  let task: PublicTask;
  before(async () => {
    const created = await api.create({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'links',
      quality: '480p',
      duration: 4,
    });
    task = await api.waitForFinal(created.body.id);
    assert.equal(task.status, 'completed');
  });

  it('answer HEAD and Range requests', async () => {
    const url = task.results![0]!;
    const head = await fetch(url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('accept-ranges'), 'bytes');
    const size = Number(head.headers.get('content-length'));
    assert.ok(size > 1000);
    assert.equal(await head.text(), '');

    const part = await fetch(url, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${size}`);
    const partBytes = Buffer.from(await part.arrayBuffer());
    const whole = Buffer.from(await (await fetch(url)).arrayBuffer());
    assert.equal(whole.length, size);
    assert.deepEqual(partBytes, whole.subarray(100, 200));

    const outside = await fetch(url, { headers: { range: `bytes=${size + 10}-` } });
    assert.equal(outside.status, 416);
    assert.equal(outside.headers.get('content-range'), `bytes */${size}`);
  });

  it('are absolute, signed, valid for at least 24 hours, and refused when tampered with', async () => {
    const url = new URL(task.results![0]!);
    assert.equal(url.origin, server.url);
    const expires = Number(url.searchParams.get('expires'));
    assert.ok(expires >= Date.now() / 1000 + 24 * 3600 - 5);
    url.searchParams.set('expires', String(expires + 3600));
    assert.equal((await fetch(url)).status, 403);
  });
});

describe('failed tasks', () => {
  it('name the field and index of an asset that cannot be fetched', async () => {
    const created = await api.create({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'missing',
      image_urls: [`${assets.url}/red.png`, `${assets.url}/missing.png`],
    });
    const task = await api.waitForFinal(created.body.id);
    assert.equal(task.status, 'failed');
    assert.equal(task.error?.code, 'asset_fetch_failed');
    assert.match(task.error?.message ?? '', /^image_urls\[1\]: .*404/);
    assert.equal(task.results, undefined);
  });

  it('name the field and index of an asset that is not what the field says', async () => {
    const created = await api.create({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'text',
      image_urls: [`${assets.url}/notes.txt`],
    });
    const task = await api.waitForFinal(created.body.id);
    assert.equal(task.status, 'failed');
    assert.equal(task.error?.code, 'invalid_asset');
    assert.match(task.error?.message ?? '', /^image_urls\[0\]: /);
  });
});

describe('keys from the CLI', () => {
  it('keys create prints only the key; the key works until keys revoke', async () => {
    const env = serverEnv(dataDir);
    const created = await runCli(['keys', 'create', '--name', 'ci', '--env', 'production'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^vg_prod_[0-9A-Za-z]{32,}\n$/);
    const key = created.stdout.trim();
    const client = api.withKey(key);
    // The cheapest render there is: the server makes it while the rest of the file runs.
    const task = await client.create({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'production',
      quality: '480p',
      duration: 4,
    });
    assert.equal(task.status, 200);
    assert.equal(
      (await api.get(task.body.id)).status,
      404,
      'a development key does not see production tasks',
    );

    const listed = await runCli(['keys', 'list', '--json'], env);
    const keys = JSON.parse(listed.stdout) as {
      id: string;
      prefix: string;
      name: string;
      environment: string;
    }[];
    const ours = keys.find((k) => k.name === 'ci');
    assert.ok(ours);
    assert.equal(ours.environment, 'production');
    assert.ok(key.startsWith(ours.prefix));
    assert.ok(!listed.stdout.includes(key), 'keys list never shows a key');

    const revoked = await runCli(['keys', 'revoke', ours.prefix], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    // The server caches keys for up to 1 s (api-key-cache.test.ts holds it to that with a clock of its own).
    const refused = await until(
      async () => {
        const answer = await client.get(task.body.id);
        return answer.status === 200 ? undefined : answer;
      },
      'the revoked key refused',
      { intervalMs: 50 },
    );
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'invalid_api_key');
    assert.equal((await runCli(['keys', 'revoke', ours.prefix], env)).code, 1);
  });

  it('keys create refuses a bad environment with a usage error', async () => {
    const result = await runCli(['keys', 'create', '--name', 'x', '--env', 'staging'], serverEnv(dataDir));
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--env must be one of development, production/);
    assert.equal(result.stdout, '');
  });
});

describe('logs', () => {
  it('are one JSON line per request that never carries the API key', async () => {
    await api.get('task-unified-AAAAAAAAAAAAAAAAAAAAAAAAAA');
    // The line is written once the answer has gone out, and comes through the pipe after it.
    await until(() => server.stdout().includes('"path":"/v1/tasks/task-unified-AAAA'), 'the request logged', {
      intervalMs: 50,
    });
    const lines = server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    const requests = lines.map((line) => JSON.parse(line) as { msg: string; path?: string; status?: number });
    const logged = requests.filter(
      (entry) =>
        entry.msg === 'request' && entry.path === '/v1/tasks/task-unified-AAAAAAAAAAAAAAAAAAAAAAAAAA',
    );
    assert.equal(logged.length, 1);
    assert.equal(logged[0]?.status, 404);
    for (const line of lines) assert.ok(!line.includes(firstKey), `a log line carries the key: ${line}`);
    for (const line of lines)
      assert.ok(!line.includes('signature='), `a log line carries a link signature: ${line}`);
  });
});

/** A render that has visibly started, so that stopping the server now interrupts it. */
const underWay = (task: PublicTask) => task.status === 'processing' && task.progress >= 10;

// Each test has a server and a data directory of its own, and spends much of its time waiting (for a lease to
// run out, for a server to start or stop): they run side by side.
describe('crashes and restarts', { concurrency: true }, () => {
  it('a server killed with SIGKILL mid-render completes the task after a restart', async () => {
    const crashDir = join(workDir, 'crash-data');
    const env = serverEnv(crashDir, { VIDEOGEN_LEASE_SECONDS: '2' });
    const first = await startServer(env);
    const key = await first.firstKey();
    assert.ok(key);
    let client = new Api(first.url, key);
    const created = await client.create({
      model: 'videogen-2.0-text-to-video',
      prompt: 'a render',
      quality: '720p',
      duration: 4,
    });
    assert.equal(created.status, 200);
    const polled = await client.pollUntil(created.body.id, underWay, 60_000);
    assert.equal(polled.status, 'processing', 'the render is under way when the server is killed');
    await first.stop('SIGKILL');

    const second = await startServer(env);
    try {
      client = new Api(second.url, key);
      const task = await client.waitForFinal(created.body.id, 180_000);
      assert.equal(task.status, 'completed', JSON.stringify(task.error));
      const facts = await mp4Facts(await download(task.results![0]!, 'crash.mp4'));
      assert.equal(facts.video?.width, 1280);
      assert.equal(facts.video?.height, 720);
      assert.ok(Math.abs(facts.duration - 4) <= FRAME_SECONDS + 0.01);
    } finally {
      assert.equal(await second.stop('SIGTERM'), 0, 'SIGTERM shuts down cleanly');
    }
    // Read once the process has closed its stdout: a key banner would follow the "serving" line.
    assert.ok(!/vg_dev_/.test(second.stdout()), 'a restart does not print a new key');
  });

  it('SIGTERM stops a running render and hands the task back to the queue without counting the attempt', async () => {
    const drainDir = join(workDir, 'drain-data');
    const env = serverEnv(drainDir, { VIDEOGEN_SHUTDOWN_GRACE_SECONDS: '0' });
    const running = await startServer(env);
    const key = await running.firstKey();
    assert.ok(key);
    const client = new Api(running.url, key);
    const created = await client.create({
      model: 'videogen-2.0-text-to-video',
      prompt: 'drain',
      quality: '1080p',
      duration: 15,
    });
    const polled = await client.pollUntil(created.body.id, underWay, 60_000);
    assert.equal(polled.status, 'processing');
    assert.equal(await running.stop('SIGTERM'), 0);

    const store = new SqliteStore({ path: join(drainDir, 'videogen.db') });
    try {
      const task = await store.getTask(created.body.id);
      // A render waited for would have completed the task: pending, short of 100 %, it was stopped.
      assert.equal(task?.status, 'pending');
      assert.ok((task?.progress ?? 100) < 100, `stopped at ${task?.progress} %`);
      assert.equal(task?.attempts, 0);
      assert.equal(task?.leaseOwner, null);
      assert.ok((task?.progress ?? 0) >= 10, 'progress is kept, never lowered');
    } finally {
      await store.close();
    }
  });
});
