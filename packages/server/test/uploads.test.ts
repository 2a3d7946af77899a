/** `POST /v1/files` through real HTTP: upload, read back, use in a request, and the refusals. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PublicFile } from '../src/domain/uploaded-file.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { writeTestAudio, writeTestImage } from './helpers/media-fixtures.js';
import { startTestService, type TestService } from './helpers/test-service.js';

let server: TestService;
let api: Api;
let dir: string;
let png: Buffer;
let wav: Buffer;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-uploads-'));
  await writeTestImage(join(dir, 'photo.png'), { width: 640, height: 360, colour: [200, 40, 40] });
  await writeTestAudio(join(dir, 'music.wav'), { seconds: 1 });
  png = await readFile(join(dir, 'photo.png'));
  wav = await readFile(join(dir, 'music.wav'));
  server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1', VIDEOGEN_ASSET_MAX_MB: '1' });
  api = new Api(server.url, (await server.newKey()).key);
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function upload(client: Api, bytes: Buffer, filename: string, type: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), filename);
  const response = await fetch(`${client.baseUrl}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${client.key}` },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as PublicFile & ErrorBody };
}

describe('uploads', () => {
  it('stores an image for the account, answers its URL, and serves it back to its owner', async () => {
    const { status, body } = await upload(api, png, 'photo.png', 'image/png');
    assert.equal(status, 200, JSON.stringify(body));
    assert.match(body.id, /^file-[0-9a-f]{32}$/);
    assert.equal(body.kind, 'image');
    assert.equal(body.bytes, png.length);
    assert.equal(body.filename, 'photo.png');
    assert.equal(body.url, `${server.url}/v1/files/${body.id}/content`);
    assert.deepEqual((await api.request('GET', `/v1/files/${body.id}`)).body, body);
    const content = await fetch(body.url, { headers: { authorization: `Bearer ${api.key}` } });
    assert.equal(content.status, 200);
    assert.ok(Buffer.from(await content.arrayBuffer()).equals(png));
    const other = new Api(server.url, (await server.newKey()).key);
    assert.equal(
      (await other.request('GET', `/v1/files/${body.id}`)).status,
      404,
      'another account sees nothing',
    );
  });

  it('is usable in a request, and outlives the task that used it', async () => {
    const { body: file } = await upload(api, png, 'photo.png', 'image/png');
    const { body: task } = await api.create({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'the uploaded photo comes to life',
      image_urls: [file.url],
      duration: 4,
      quality: '480p',
    });
    const final = await api.waitForFinal(task.id, 60_000);
    assert.equal(final.status, 'completed', JSON.stringify(final.error));
    assert.equal((await api.request('DELETE', `/v1/tasks/${task.id}`)).status, 200);
    assert.equal((await api.request('GET', `/v1/files/${file.id}/content`)).status, 200);
  });

  it('refuses what is not an image, video or audio file, and what is too large', async () => {
    const text = await upload(api, Buffer.from('just some text'), 'notes.txt', 'text/plain');
    assert.equal(text.status, 415);
    assert.equal(text.body.error.code, 'unsupported_media_type');
    const big = await upload(api, Buffer.alloc(2 * 1024 * 1024, 1), 'big.png', 'image/png');
    assert.equal(big.status, 413);
    assert.equal(big.body.error.code, 'payload_too_large');
  });

  it('refuses a request naming another account’s file, or a file of the wrong kind', async () => {
    const { body: audio } = await upload(api, wav, 'music.wav', 'audio/wav');
    assert.equal(audio.kind, 'audio');
    const wrongKind = await api.create({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'p',
      image_urls: [audio.url],
    });
    assert.equal(wrongKind.status, 400);
    assert.equal(wrongKind.body.error.param, 'image_urls[0]');
    assert.match(wrongKind.body.error.message, /is audio, not image/);

    const other = new Api(server.url, (await server.newKey()).key);
    const { body: image } = await upload(api, png, 'photo.png', 'image/png');
    const theirs = await other.create({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'p',
      image_urls: [image.url],
    });
    assert.equal(theirs.status, 400);
    assert.equal(theirs.body.error.code, 'invalid_parameter');
    assert.match(theirs.body.error.message, /no uploaded file/);
  });
});
