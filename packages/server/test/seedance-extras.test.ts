/**
 * Issue 34, item 4, through the whole service: `return_last_frame` (results[1], a PNG of the frame size: the
 * local engine's taken from its video, Ark's own `last_frame_url` when routed there; deleted with the task),
 * `web_search` (reaching Ark as `tools`, refused where the route cannot search), `asset://` ids (reaching Ark
 * untouched, refused on a local-routed model), and the fake of Ark refusing wrong shapes of each new field.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadImage } from '@napi-rs/canvas';
import { frameSize } from '../src/domain/frame-size.js';
import { lastFrameKey, resultKey } from '../src/domain/storage-keys.js';
import type { Storage } from '../src/ports/storage.js';
import { FakeArkServer } from './fakes/ark-server.js';
import { Api } from './helpers/api.js';
import { fullFrame, mp4Facts, psnr } from './helpers/mp4-facts.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const KEY = 'ark-test-3Jd8Qw2Zx7Cv5Bn1Mk4Lp9Rt';
const SEEDANCE_2 = 'dreamina-seedance-2-0-260128';
const ASSET_ID = 'asset://asset-20260224200602-qn7wr';

let dir: string;
let ark: FakeArkServer;
let service: TestService;
let storage: Storage;
let api: Api;

/** The body of a GET of `url`, checked to be 200 with `type`. */
async function download(url: string, type: string): Promise<Buffer> {
  const answer = await fetch(url);
  assert.equal(answer.status, 200, url);
  assert.equal(answer.headers.get('content-type'), type);
  return Buffer.from(await answer.arrayBuffer());
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-seedance-extras-'));
  ark = await FakeArkServer.start({ apiKey: KEY, cacheDir: join(dir, 'cache') });
  const enginesFile = join(dir, 'engines.yaml');
  await writeFile(
    enginesFile,
    [
      'engines:',
      '  seedance:',
      '    type: ark',
      `    base_url: ${ark.baseUrl}`,
      `    api_key: ${KEY}`,
      `    model: ${SEEDANCE_2}`,
      '    poll_interval_ms: 10',
      'models:',
      '  videogen-2.0-text-to-video: seedance',
      '  videogen-2.0-image-to-video: seedance',
      '  videogen-2.0-fast-text-to-video: local',
      '  videogen-2.0-fast-image-to-video: local',
      '',
    ].join('\n'),
  );
  service = await startTestService(
    { VIDEOGEN_ENGINES_FILE: enginesFile, VIDEOGEN_WORKER_CONCURRENCY: '1' },
    {
      wrapStorage: (inner) => {
        storage = inner;
        return inner;
      },
    },
  );
  api = new Api(service.url, (await service.newKey()).key);
});

after(async () => {
  await service?.close();
  await ark?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('return_last_frame', () => {
  it('local engine: results[1] is a PNG of the frame size whose pixels are the video’s last frame; deleted with the task', async () => {
    const created = await api.create({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'a lantern swinging in the dark',
      duration: 4,
      quality: '480p',
      return_last_frame: true,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.return_last_frame, true);
    const task = await api.waitForFinal(created.body.id, 120_000);
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.equal(task.results?.length, 2);
    const [videoUrl = '', frameUrl = ''] = task.results ?? [];
    assert.match(frameUrl, /\/v1\/results\/task-unified-\w+-last-frame\.png\?expires=\d+&signature=/);
    const videoPath = join(dir, 'local.mp4');
    await writeFile(videoPath, await download(videoUrl, 'video/mp4'));
    const pngPath = join(dir, 'local.png');
    await writeFile(pngPath, await download(frameUrl, 'image/png'));
    const image = await loadImage(await readFile(pngPath));
    const frame = frameSize('480p', '16:9');
    assert.deepEqual({ width: image.width, height: image.height }, frame);
    // Both decoded by ffmpeg to RGB the same way (a browser's decoder may apply the PNG's colour chunks).
    const frames = Math.round((await mp4Facts(videoPath)).duration * 24);
    const png = await fullFrame(pngPath, 0, frame);
    const last = psnr(png, await fullFrame(videoPath, frames - 1, frame), frame.width);
    const previous = psnr(png, await fullFrame(videoPath, frames - 2, frame), frame.width);
    assert.ok(last > 50, `the PNG is the last frame (PSNR ${last.toFixed(1)} dB)`);
    assert.ok(last > previous, 'and not the one before it');
    // A link to the PNG with the video's signature opens nothing.
    const forged = new URL(frameUrl);
    forged.searchParams.set('signature', new URL(videoUrl).searchParams.get('signature') ?? '');
    assert.equal((await fetch(forged)).status, 403);

    assert.ok(await storage.stat(lastFrameKey(task.id)));
    assert.equal((await api.request('DELETE', `/v1/tasks/${task.id}`)).status, 200);
    assert.equal(await storage.stat(lastFrameKey(task.id)), undefined);
    assert.equal(await storage.stat(resultKey(task.id)), undefined);
  });

  it('without it: one result, no PNG stored', async () => {
    const created = await api.create({ model: 'videogen-2.0-fast-text-to-video', prompt: 'a quiet pond' });
    assert.equal(created.body.return_last_frame, false);
    const task = await api.waitForFinal(created.body.id, 120_000);
    assert.equal(task.results?.length, 1);
    assert.equal(await storage.stat(lastFrameKey(task.id)), undefined);
  });

  it('ark engine: asks Ark for it, and results[1] is Ark’s own PNG (its last_frame_url), the frame’s size', async () => {
    const created = await api.create({
      model: 'videogen-2.0-text-to-video',
      prompt: 'a kite over the dunes',
      duration: 4,
      quality: '720p',
      return_last_frame: true,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const task = await api.waitForFinal(created.body.id, 60_000);
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.equal(ark.creates.at(-1)?.body.return_last_frame, true);
    assert.ok(
      ark.requests.some((request) => request.path.endsWith('-last-frame.png') && request.status === 200),
      'the engine fetched last_frame_url',
    );
    const png = await download(task.results?.[1] ?? '', 'image/png');
    // Seedance 2.0's 720p 16:9 is 1280x720, the task's frame: Ark's PNG is kept byte for byte.
    assert.deepEqual(png, await readFile(join(dir, 'cache', 'ark-last-frame-1280x720.png')));
  });
});

describe('web_search and asset:// ids', () => {
  it('web_search reaches Ark as tools: [{type: web_search}]; refused where the route cannot search', async () => {
    const created = await api.create({
      model: 'videogen-2.0-text-to-video',
      prompt: 'the newest electric car driving through Shanghai at night',
      web_search: true,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const task = await api.waitForFinal(created.body.id, 60_000);
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.deepEqual(ark.creates.at(-1)?.body.tools, [{ type: 'web_search' }]);

    const local = await api.create({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'p',
      web_search: true,
    });
    assert.equal(local.status, 400);
    assert.equal(local.body.error.code, 'input_not_supported');
    assert.equal(local.body.error.param, 'web_search');
    assert.match(local.body.error.message, /"local", which cannot search the web/);
    const image = await api.create({
      model: 'videogen-2.0-image-to-video',
      prompt: 'p',
      image_urls: [ASSET_ID],
      web_search: true,
    });
    assert.equal(image.body.error.code, 'invalid_parameter');
    assert.equal(image.body.error.param, 'web_search');
  });

  it('an asset:// id reaches Ark untouched; a local-routed model refuses it, naming the engine', async () => {
    const created = await api.create({
      model: 'videogen-2.0-image-to-video',
      prompt: 'the woman of image 1 turns to the window',
      image_urls: [ASSET_ID],
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const task = await api.waitForFinal(created.body.id, 60_000);
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    const content = ark.creates.at(-1)?.body.content as unknown[];
    assert.deepEqual(content[1], { type: 'image_url', image_url: { url: ASSET_ID }, role: 'first_frame' });

    const local = await api.create({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'p',
      image_urls: [ASSET_ID],
    });
    assert.equal(local.status, 400);
    assert.equal(local.body.error.code, 'input_not_supported');
    assert.equal(local.body.error.param, 'image_urls');
    assert.match(local.body.error.message, /"local", which cannot take image_urls\[0\], an asset:\/\/ id/);
  });
});

describe('the fake of Ark refuses wrong shapes of the new fields', () => {
  async function post(body: Record<string, unknown>): Promise<{ status: number; code?: string }> {
    const answer = await fetch(`${ark.baseUrl}/contents/generations/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: SEEDANCE_2, content: [{ type: 'text', text: 'a lighthouse' }], ...body }),
    });
    const json = (await answer.json()) as { error?: { code?: string } };
    return { status: answer.status, ...(json.error?.code && { code: json.error.code }) };
  }

  it('tools: only [{type: web_search}], in text-to-video, on a 2.x model', async () => {
    for (const tools of [
      { type: 'web_search' },
      [{ type: 'image_search' }],
      [{ type: 'web_search', max_results: 3 }],
      [{ type: 'web_search' }, { type: 'web_search' }],
      ['web_search'],
      [],
    ]) {
      assert.deepEqual(
        await post({ tools }),
        { status: 400, code: 'InvalidParameter' },
        JSON.stringify(tools),
      );
    }
    assert.equal((await post({ tools: [{ type: 'web_search' }] })).status, 200);
    const imageContent = [
      { type: 'text', text: 'a lighthouse' },
      { type: 'image_url', image_url: { url: ASSET_ID }, role: 'first_frame' },
    ];
    assert.equal((await post({ content: imageContent, tools: [{ type: 'web_search' }] })).status, 400);
    assert.equal(
      (await post({ model: 'seedance-1-5-pro-251215', tools: [{ type: 'web_search' }] })).status,
      400,
    );
  });

  it('return_last_frame: a boolean; asset:// with an id', async () => {
    assert.equal((await post({ return_last_frame: 'yes' })).status, 400);
    assert.equal((await post({ return_last_frame: 1 })).status, 400);
    assert.equal((await post({ return_last_frame: true })).status, 200);
    for (const url of ['asset://', 'asset://a b']) {
      const content = [
        { type: 'text', text: 'a lighthouse' },
        { type: 'image_url', image_url: { url }, role: 'first_frame' },
      ];
      assert.deepEqual(await post({ content }), { status: 400, code: 'InvalidParameter' }, url);
    }
  });
});
