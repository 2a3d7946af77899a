import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deflateSync } from 'node:zlib';
import { Dispatcher } from 'undici';
import { downloadAssets } from '../src/assets/download-assets.js';
import { storeInlineAssets } from '../src/assets/stored-assets.js';
import { TaskFailure } from '../src/domain/errors.js';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { createGuardedDispatcher } from '../src/outbound/guarded-dispatcher.js';
import { FileStorage } from '../src/storage/file-storage.js';
import { generationParams } from './helpers/generation-params.js';
import { writeTestAudio, writeTestImage, writeTestVideo } from './helpers/media-fixtures.js';

/** What a refusal of a private address adds: the setting that lifts it. */
const PRIVATE_HINT =
  ' (the server reaches only public addresses unless VIDEOGEN_ALLOW_PRIVATE_NETWORKS=true)';

let dir: string;
let server: Server;
let base: string;
let open: Dispatcher;
let guarded: Dispatcher;
const files: Record<string, Buffer> = {};

function params(overrides: Partial<GenerationParams>): GenerationParams {
  return generationParams({ quality: '480p', aspect_ratio: 'adaptive', seed: 1, ...overrides });
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-assets-'));
  await writeTestImage(join(dir, 'a.png'), { width: 300, height: 200, colour: [200, 0, 0] });
  await writeTestVideo(join(dir, 'a.mp4'), { width: 160, height: 120, seconds: 1 });
  await writeTestAudio(join(dir, 'a.m4a'), { seconds: 1 });
  for (const name of ['a.png', 'a.mp4', 'a.m4a']) files[`/${name}`] = await readFile(join(dir, name));
  files['/text'] = Buffer.from('plain text, not media');

  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const hops = /^\/redirect\/(\d+)$/.exec(url.pathname);
    if (hops) {
      const left = Number(hops[1]);
      response.writeHead(302, { location: left > 1 ? `/redirect/${left - 1}` : '/a.png' }).end();
      return;
    }
    if (url.pathname === '/to-loopback') {
      response
        .writeHead(302, { location: `http://localhost:${(server.address() as AddressInfo).port}/a.png` })
        .end();
      return;
    }
    if (url.pathname === '/huge') {
      response.writeHead(200, { 'content-type': 'image/png' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      for (let i = 0; i < 40; i++) response.write(chunk);
      response.end();
      return;
    }
    if (url.pathname === '/empty') {
      response.writeHead(200, { 'content-type': 'image/png' }).end();
      return;
    }
    if (url.pathname === '/stall') {
      response.writeHead(200, { 'content-type': 'image/png' });
      response.write(files['/a.png']!.subarray(0, 100));
      return;
    }
    const body = files[url.pathname];
    if (!body) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  open = createGuardedDispatcher({ allowPrivateNetworks: true });
  guarded = createGuardedDispatcher({ allowPrivateNetworks: false });
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await open.close();
  await guarded.close();
  await rm(dir, { recursive: true, force: true });
});

/** Sends requests for `trusted` through `first` and all others through `rest`: stages a "public" first hop. */
class ByOrigin extends Dispatcher {
  constructor(
    private readonly trusted: string,
    private readonly first: Dispatcher,
    private readonly rest: Dispatcher,
  ) {
    super();
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = new URL(String(options.origin)).origin;
    return (origin === this.trusted ? this.first : this.rest).dispatch(options, handler);
  }
}

function crc32(bytes: Uint8Array): number {
  let crc = ~0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

async function workDir(): Promise<string> {
  return mkdtemp(join(dir, 'work-'));
}

async function failure(promise: Promise<unknown>): Promise<TaskFailure> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TaskFailure, `expected TaskFailure, got ${String(error)}`);
    return error;
  }
  throw new Error('expected a failure');
}

const limits = (work: string, dispatcher: Dispatcher = open) => ({
  workDir: work,
  dispatcher,
  maxBytes: 1024 * 1024,
  timeoutMs: 5000,
});

describe('downloadAssets', () => {
  it('downloads and measures images, videos and audio, in field order', async () => {
    const work = await workDir();
    const assets = await downloadAssets(
      params({
        image_urls: [`${base}/a.png`, `data:image/png;base64,${files['/a.png']!.toString('base64')}`],
        video_urls: [`${base}/a.mp4`],
        audio_urls: [`${base}/a.m4a`],
      }),
      limits(work),
      new AbortController().signal,
    );
    assert.deepEqual(
      assets.images.map((a) => [a.index, a.width, a.height]),
      [
        [0, 300, 200],
        [1, 300, 200],
      ],
    );
    assert.equal(assets.videos[0]?.width, 160);
    assert.ok(Math.abs((assets.videos[0]?.duration ?? 0) - 1) < 0.1);
    assert.ok((assets.audios[0]?.duration ?? 0) > 0.9);
    assert.deepEqual(await readFile(assets.images[1]!.path), files['/a.png']);
  });

  it('follows 3 redirects but not 4', async () => {
    const ok = await downloadAssets(
      params({ image_urls: [`${base}/redirect/3`] }),
      limits(await workDir()),
      new AbortController().signal,
    );
    assert.equal(ok.images[0]?.width, 300);
    const error = await failure(
      downloadAssets(
        params({ image_urls: [`${base}/redirect/4`] }),
        limits(await workDir()),
        new AbortController().signal,
      ),
    );
    assert.equal(error.code, 'asset_fetch_failed');
    assert.match(error.message, /^image_urls\[0\]: more than 3 redirects/);
  });

  it('names the field and index of an HTTP error', async () => {
    const error = await failure(
      downloadAssets(
        params({ image_urls: [`${base}/a.png`], video_urls: [`${base}/a.mp4`, `${base}/gone.mp4`] }),
        limits(await workDir()),
        new AbortController().signal,
      ),
    );
    assert.equal(error.code, 'asset_fetch_failed');
    assert.equal(error.message, 'video_urls[1]: HTTP 404');
  });

  it('stops at the byte limit and leaves no partial file', async () => {
    const work = await workDir();
    const error = await failure(
      downloadAssets(
        params({ image_urls: [`${base}/huge`] }),
        { ...limits(work), maxBytes: 1024 * 1024 },
        new AbortController().signal,
      ),
    );
    assert.match(error.message, /^image_urls\[0\]: larger than 1 MB/);
    assert.deepEqual(await readdir(work), []);
    const big = `data:image/png;base64,${Buffer.alloc(2 * 1024 * 1024).toString('base64')}`;
    const dataError = await failure(
      downloadAssets(params({ image_urls: [big] }), limits(work), new AbortController().signal),
    );
    assert.match(dataError.message, /^image_urls\[0\]: larger than/);
  });

  it('gives up on a stalled server within the time limit', async () => {
    const started = Date.now();
    const error = await failure(
      downloadAssets(
        params({ image_urls: [`${base}/stall`] }),
        { ...limits(await workDir()), timeoutMs: 500 },
        new AbortController().signal,
      ),
    );
    // The server never answers: only the 0.5 s limit ends the download (a bound far from any machine's speed).
    assert.ok(Date.now() - started < 30_000, `gave up after ${Date.now() - started} ms`);
    assert.match(error.message, /^image_urls\[0\]: no complete answer within/);
  });

  it('refuses private addresses unless allowed, also behind a redirect', async () => {
    const direct = await failure(
      downloadAssets(
        params({ image_urls: [`${base}/a.png`] }),
        limits(await workDir(), guarded),
        new AbortController().signal,
      ),
    );
    assert.equal(direct.code, 'asset_fetch_failed');
    assert.equal(direct.message, `image_urls[0]: address 127.0.0.1 is not public${PRIVATE_HINT}`);
    const privateLiteral = await failure(
      downloadAssets(
        params({ image_urls: [`${base}/a.png`], video_urls: ['http://10.0.0.1/clip.mp4'] }),
        limits(await workDir(), new ByOrigin(base, open, guarded)),
        new AbortController().signal,
      ),
    );
    assert.equal(privateLiteral.message, `video_urls[0]: address 10.0.0.1 is not public${PRIVATE_HINT}`);
    // A redirect from an allowed first hop (127.0.0.1 stands in for a public server) to a private one.
    const redirected = await failure(
      downloadAssets(
        params({ image_urls: [`${base}/to-loopback`] }),
        limits(await workDir(), new ByOrigin(base, open, guarded)),
        new AbortController().signal,
      ),
    );
    assert.equal(redirected.code, 'asset_fetch_failed');
    assert.match(
      redirected.message,
      /^image_urls\[0\]: address (127\.0\.0\.1|::1) \(localhost\) is not public/,
    );
    // …and the same redirect succeeds when private networks are allowed.
    const allowed = await downloadAssets(
      params({ image_urls: [`${base}/to-loopback`] }),
      limits(await workDir()),
      new AbortController().signal,
    );
    assert.equal(allowed.images[0]?.width, 300);
  });

  it('refuses an empty body', async () => {
    const error = await failure(
      downloadAssets(
        params({ image_urls: [`${base}/empty`] }),
        limits(await workDir()),
        new AbortController().signal,
      ),
    );
    assert.equal(error.code, 'asset_fetch_failed');
    assert.equal(error.message, 'image_urls[0]: the response body is empty');
  });

  it('refuses content that is not what the field says', async () => {
    const png = await failure(
      downloadAssets(
        params({ video_urls: [`${base}/a.png`] }),
        limits(await workDir()),
        new AbortController().signal,
      ),
    );
    assert.equal(png.code, 'invalid_asset');
    assert.equal(png.message, 'video_urls[0]: not a video (found image/png)');
    const text = await failure(
      downloadAssets(
        params({ image_urls: [`${base}/a.png`, `${base}/text`] }),
        limits(await workDir()),
        new AbortController().signal,
      ),
    );
    assert.equal(text.code, 'invalid_asset');
    assert.equal(text.message, 'image_urls[1]: not a readable image, video or audio file');
    const audio = await failure(
      downloadAssets(
        params({ audio_urls: [`${base}/a.png`], image_urls: [`${base}/a.png`] }),
        limits(await workDir()),
        new AbortController().signal,
      ),
    );
    assert.equal(audio.message, 'audio_urls[0]: not an audio file (found image/png)');
    const video = await failure(
      downloadAssets(
        params({ image_urls: [`${base}/a.mp4`] }),
        limits(await workDir()),
        new AbortController().signal,
      ),
    );
    assert.equal(video.message, 'image_urls[0]: not an image (found video/h264)');
  });

  it('rejects with the abort reason when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = downloadAssets(
      params({ image_urls: [`${base}/stall`] }),
      { ...limits(await workDir()), timeoutMs: 10_000 },
      controller.signal,
    );
    const reason = new Error('cancelled by test');
    setTimeout(() => controller.abort(reason), 100);
    await assert.rejects(pending, (error) => error === reason);
  });

  it('does nothing when the signal is already aborted', async () => {
    const work = await workDir();
    const reason = new Error('aborted before start');
    await assert.rejects(
      downloadAssets(params({ image_urls: [`${base}/a.png`] }), limits(work), AbortSignal.abort(reason)),
      (error) => error === reason,
    );
    assert.deepEqual(await readdir(work), []);
  });

  it('refuses images over the pixel limit (decompression bombs)', async () => {
    // A small, valid PNG that claims 10000x5000 pixels: decoding it would need 150 MB.
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(10_000, 0);
    ihdr.writeUInt32BE(5_000, 4);
    ihdr.set([8, 2, 0, 0, 0], 8);
    const header = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', ihdr),
      pngChunk('IDAT', deflateSync(Buffer.alloc(100))),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
    const error = await failure(
      downloadAssets(
        params({ image_urls: [`data:image/png;base64,${header.toString('base64')}`] }),
        limits(await workDir()),
        new AbortController().signal,
      ),
    );
    assert.equal(error.code, 'invalid_asset');
    assert.match(error.message, /^image_urls\[0\]: 10000x5000 is over the 40 megapixel limit/);
  });
});

describe('data: URLs', () => {
  it('decode to the same bytes', async () => {
    const work = await workDir();
    await writeFile(join(work, 'x'), '');
    const assets = await downloadAssets(
      params({
        audio_urls: [`data:audio/mp4;base64,${files['/a.m4a']!.toString('base64')}`],
        image_urls: [`${base}/a.png`],
      }),
      limits(work),
      new AbortController().signal,
    );
    assert.deepEqual(await readFile(assets.audios[0]!.path), files['/a.m4a']);
    assert.ok(existsSync(assets.images[0]!.path));
  });
});

describe('assets stored at creation', () => {
  it('are moved out of the task into storage, then read back by the run with their bytes', async () => {
    const storage = new FileStorage({ root: await workDir() });
    const png = files['/a.png']!;
    const inline = params({
      image_urls: [`${base}/a.png`, `data:image/png;base64,${png.toString('base64')}`],
      audio_urls: [`data:audio/mp4;base64,${files['/a.m4a']!.toString('base64')}`],
    });
    const stored = await storeInlineAssets('task-unified-X', inline, storage, 1024 * 1024);
    assert.deepEqual(stored.image_urls, [`${base}/a.png`, 'storage:assets/task-unified-X/image_urls-1']);
    assert.deepEqual(stored.audio_urls, ['storage:assets/task-unified-X/audio_urls-0']);
    assert.equal(stored.prompt, inline.prompt);
    const object = await storage.stat('assets/task-unified-X/image_urls-1');
    assert.equal(object?.size, png.length);
    assert.equal(object?.contentType, 'image/png');

    const assets = await downloadAssets(
      stored,
      { ...limits(await workDir()), storage },
      new AbortController().signal,
    );
    assert.deepEqual(await readFile(assets.images[1]!.path), png);
    assert.equal(assets.images[1]!.url, 'storage:assets/task-unified-X/image_urls-1');
    assert.deepEqual(await readFile(assets.audios[0]!.path), files['/a.m4a']);
  });

  it('leave an undecodable data: URL inline, for the run to fail with its usual message', async () => {
    const storage = new FileStorage({ root: await workDir() });
    const inline = params({ image_urls: ['data:image/png;base64,'] });
    assert.deepEqual(await storeInlineAssets('task-unified-Y', inline, storage, 1024), inline);
    const error = await failure(
      downloadAssets(inline, limits(await workDir()), new AbortController().signal),
    );
    assert.equal(error.message, 'image_urls[0]: the data: URL is empty');
  });

  it('fail the run as asset_fetch_failed when the stored object is gone', async () => {
    const storage = new FileStorage({ root: await workDir() });
    const error = await failure(
      downloadAssets(
        params({ image_urls: ['storage:assets/task-unified-Z/image_urls-0'] }),
        { ...limits(await workDir()), storage },
        new AbortController().signal,
      ),
    );
    assert.equal(error.code, 'asset_fetch_failed');
    assert.equal(error.message, 'image_urls[0]: the stored asset is missing');
  });
});
