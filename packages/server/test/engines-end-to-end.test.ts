/**
 * The engines file through the real binary: model IDs routed to an `exec` engine, the built-in engine and
 * `openai` engines (a vLLM-Omni fake that completes, an upstream that refuses); a model ID left out is not
 * claimed; `videogen engines check`; a broken file stops the
 * start; an upstream that echoes the key back leaves it in neither the task nor the logs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile as writeFileAsync } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ffmpegPath } from '../src/media/ffmpeg-paths.js';
import { FakeVideoServer } from './fakes/video-servers.js';
import { Api } from './helpers/api.js';
import { mp4Facts } from './helpers/mp4-facts.js';
import { runCli, type ServerProcess, serverEnv, startServer } from './helpers/server-process.js';

const SCRIPT = fileURLToPath(new URL('../../test/fixtures/fake-generator.mjs', import.meta.url));
const KEY = 'sk-upstream-0123456789abcdefghij';

let dir: string;
let upstream: Server;
let upstreamUrl: string;
let server: ServerProcess | undefined;
let vllm: FakeVideoServer;

/** An OpenAI-style server that refuses every call, quoting the Authorization header it got. */
async function startEchoingUpstream(): Promise<void> {
  upstream = createServer((request, response) => {
    response.writeHead(401, { 'content-type': 'text/plain' });
    response.end(`bad credentials: ${request.headers.authorization ?? '(none)'}`);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
}

function enginesYaml(): string {
  return [
    'engines:',
    '  wan:',
    '    type: exec',
    `    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(SCRIPT)}, --prompt, "{prompt}", --size, "{size_star}", --save_file, "{output}"]`,
    '    env:',
    `      FAKE_FFMPEG: ${JSON.stringify(ffmpegPath())}`,
    '  provider:',
    '    type: openai',
    `    base_url: ${upstreamUrl}`,
    '    api_key: ${PROVIDER_KEY}',
    '    model: sora-2',
    '  vllm:',
    '    type: openai',
    '    server: vllm-omni',
    `    base_url: ${vllm.url}`,
    `    model: ${vllm.servedModel}`,
    '    fps: 16',
    '    frame_step: 4',
    'models:',
    '  videogen-2.0-text-to-video: wan',
    '  videogen-2.0-fast-text-to-video: local',
    '  videogen-2.0-reference-to-video: provider',
    '  videogen-2.0-fast-image-to-video: vllm',
    '',
  ].join('\n');
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-engines-e2e-'));
  await startEchoingUpstream();
  vllm = await FakeVideoServer.start({
    kind: 'vllm-omni',
    cacheDir: join(dir, 'vllm-cache'),
    picture: { colour: '0x2060a0' },
  });
  await writeFileAsync(join(dir, 'engines.yaml'), enginesYaml());
});
after(async () => {
  await server?.stop();
  upstream.close();
  await vllm.close();
  await rm(dir, { recursive: true, force: true });
});

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return serverEnv(join(dir, 'data'), {
    VIDEOGEN_ENGINES_FILE: join(dir, 'engines.yaml'),
    PROVIDER_KEY: KEY,
    ...extra,
  });
}

describe('engines chosen per model ID', () => {
  it('render each model ID with its engine, and leave unmapped model IDs to other workers', async () => {
    server = await startServer(env());
    const key = await server.firstKey();
    assert.ok(key);
    const api = new Api(server.url, key);
    const request = { prompt: 'a "quoted" prompt; $(not a shell)', duration: 4, quality: '480p' as const };

    const { body: viaExec } = await api.create({ model: 'videogen-2.0-text-to-video', ...request });
    const { body: viaLocal } = await api.create({ model: 'videogen-2.0-fast-text-to-video', ...request });
    const { body: viaVllm } = await api.create({
      model: 'videogen-2.0-fast-image-to-video',
      ...request,
      aspect_ratio: '9:16',
      image_urls: [`data:image/png;base64,${PNG_1X1}`],
    });
    const { body: unmapped } = await api.create({
      model: 'videogen-2.0-image-to-video',
      ...request,
      image_urls: ['https://example.com/a.png'],
    });
    for (const [task, width, height] of [
      [viaExec, 854, 480],
      [viaLocal, 854, 480],
      [viaVllm, 480, 854],
    ] as const) {
      const final = await api.waitForFinal(task.id, 60_000);
      assert.equal(final.status, 'completed', JSON.stringify(final.error));
      const video = await fetch(final.results?.[0] ?? '');
      const path = join(dir, `${task.id}.mp4`);
      await writeFileAsync(path, Buffer.from(await video.arrayBuffer()));
      const facts = await mp4Facts(path);
      assert.equal(facts.video?.width, width);
      assert.equal(facts.video?.height, height);
      assert.ok(Math.abs(facts.duration - 4) <= 1 / 24);
    }
    assert.equal(vllm.creates[0]?.effective.seed, viaVllm.seed, "vLLM-Omni got the task's seed");
    const log = server.stdout();
    assert.match(log, /"engine":"wan"/, 'the exec engine rendered the text model');
    assert.match(log, /"engine":"local"/, 'the local engine rendered the fast text model');
    assert.match(log, /"engine":"vllm"/, 'vLLM-Omni rendered the fast image model');
    assert.equal((await api.get(unmapped.id)).body.status, 'pending', 'no engine here for image-to-video');
  });

  it('fail with upstream_error without the key reaching the task or the logs', async () => {
    assert.ok(server);
    const key = server.printedKey();
    assert.ok(key);
    const api = new Api(server.url, key);
    const { body: task } = await api.create({
      model: 'videogen-2.0-reference-to-video',
      prompt: 'to the provider',
      duration: 4,
      quality: '480p',
      image_urls: [`data:image/png;base64,${PNG_1X1}`],
    });
    const final = await api.waitForFinal(task.id, 60_000);
    assert.equal(final.status, 'failed');
    assert.equal(final.error?.code, 'upstream_error');
    assert.match(final.error?.message ?? '', /openai engine "provider".*HTTP 401/);
    assert.ok(!JSON.stringify(final).includes(KEY), 'the key is not in the task');
    assert.ok(!server.stdout().includes(KEY), 'the key is not in the logs');
  });
});

describe('videogen engines check', () => {
  it('reports each engine, and exits 1 when one is not ready', async () => {
    const result = await runCli(['engines', 'check'], env());
    assert.equal(result.code, 1);
    assert.match(result.stdout, /wan\s+exec\s+ready\s+videogen-2\.0-text-to-video/);
    assert.match(result.stdout, /local\s+local\s+ready\s+videogen-2\.0-fast-text-to-video/);
    assert.match(result.stdout, /provider\s+openai\s+FAILED\s+videogen-2\.0-reference-to-video/);
    assert.match(result.stderr, /provider: openai engine "provider": .*401/);
    assert.match(result.stdout, /vllm\s+openai\s+ready\s+videogen-2\.0-fast-image-to-video/);
    assert.ok(!`${result.stdout}${result.stderr}`.includes(KEY));

    const json = await runCli(['engines', 'check', '--json'], env());
    const parsed = JSON.parse(json.stdout) as { engines: { engine: string; ok: boolean }[] };
    assert.deepEqual(
      parsed.engines.map((e) => [e.engine, e.ok]),
      // In the order the file's models name them.
      [
        ['wan', true],
        ['local', true],
        ['provider', false],
        ['vllm', true],
      ],
    );
  });
});

describe('a broken engines file', () => {
  it('stops the start with the file, the place in it and the problem', async () => {
    const broken = join(dir, 'broken.yaml');
    await writeFileAsync(
      broken,
      'engines:\n  x:\n    type: exec\n    command: [run, "{nonsense}"]\nmodels:\n  videogen-2.0-text-to-video: x\n',
    );
    const result = await runCli(
      ['serve'],
      serverEnv(join(dir, 'data-broken'), { VIDEOGEN_ENGINES_FILE: broken }),
    );
    assert.equal(result.code, 1);
    assert.match(result.stderr, /configuration error: .*broken\.yaml: \/engines\/x: .*nonsense/);

    const unset = await runCli(
      ['engines', 'check'],
      serverEnv(join(dir, 'data-broken'), {
        VIDEOGEN_ENGINES_FILE: join(dir, 'engines.yaml'),
      }),
    );
    assert.equal(unset.code, 1);
    assert.match(
      unset.stderr,
      /\/engines\/provider\/api_key: the environment variable PROVIDER_KEY is not set/,
    );
  });
});

const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
