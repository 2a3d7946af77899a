/** `POST /v1/files` through real HTTP: upload, read back, use in a request, and the refusals. */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PublicFile } from '../src/domain/uploaded-file.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { writeTestAudio, writeTestImage } from './helpers/media-fixtures.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const postgres = await postgresSuite();

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

/** A multipart body written by hand, as a broken or hostile client sends it. */
async function rawUpload(
  client: Api,
  body: Buffer | string,
  contentType = 'multipart/form-data; boundary=B',
) {
  const response = await fetch(`${client.baseUrl}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${client.key}`, 'content-type': contentType },
    body,
  });
  return {
    status: response.status,
    requestId: response.headers.get('x-request-id'),
    body: (await response.json()) as PublicFile & ErrorBody,
  };
}

/** One file part named `file`, with the part's headers exactly as given (bytes included). */
function filePart(bytes: Buffer, headers: { filename: string; type: string }): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--B\r\nContent-Disposition: form-data; name="file"; filename="${headers.filename}"\r\n` +
        `Content-Type: ${headers.type}\r\n\r\n`,
      'latin1',
    ),
    bytes,
    Buffer.from('\r\n--B--\r\n'),
  ]);
}

async function storedUploads(server: TestService): Promise<string[]> {
  return readdir(join(server.dataDir, 'files', 'uploads')).catch(() => []);
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
    assert.equal(content.headers.get('content-type'), 'image/png');
    assert.equal(content.headers.get('x-content-type-options'), 'nosniff');
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

describe('malformed uploads', () => {
  it('answers 400 invalid_parameter naming file to a truncated body, a body without boundary, a plain field', async () => {
    const before = await storedUploads(server);
    const header = '--B\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n';
    const truncated = await rawUpload(api, `${header}abc`);
    const unbounded = await rawUpload(api, 'abc', 'multipart/form-data');
    // What `curl -F file=abc` sends: a field, not a file.
    const field = await rawUpload(
      api,
      '--B\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc\r\n--B--\r\n',
    );
    const midFile = await rawUpload(api, Buffer.concat([Buffer.from(header), png.subarray(0, 100)]));
    for (const [name, answer] of Object.entries({ truncated, unbounded, field, midFile })) {
      assert.equal(answer.status, 400, `${name}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'invalid_parameter', name);
      assert.equal(answer.body.error.type, 'invalid_request_error', name);
      assert.equal(answer.body.error.param, 'file', name);
      assert.equal(answer.body.error.request_id, answer.requestId, name);
    }
    assert.match(field.body.error.message, /plain field/);
    assert.deepEqual(await storedUploads(server), before, 'nothing is stored');
  });

  it('stores a client’s filename and type only once they are safe', async () => {
    const long = `${'é'.repeat(254)}😀😀.png`;
    const hostile = await rawUpload(
      api,
      filePart(png, { filename: 'a\u0000b\u0007c\u001b[31m\u007f.png', type: 'image/png\u0000; x' }),
    );
    assert.equal(hostile.status, 200, JSON.stringify(hostile.body));
    assert.equal(hostile.body.filename, 'abc[31m.png');
    // The content decides the type; the declared one, NUL and all, is not kept.
    assert.equal(hostile.body.content_type, 'image/png');
    const content = await fetch(hostile.body.url, { headers: { authorization: `Bearer ${api.key}` } });
    assert.equal(content.status, 200);
    assert.equal(content.headers.get('content-type'), 'image/png');

    const capped = await upload(api, png, long, 'Image/PNG; charset=binary');
    assert.equal(capped.status, 200, JSON.stringify(capped.body));
    assert.equal(capped.body.filename, `${'é'.repeat(254)}😀`, 'cut to 255 characters, none split');
    assert.equal(capped.body.content_type, 'image/png');
    assert.deepEqual((await api.request('GET', `/v1/files/${capped.body.id}`)).body, capped.body);
  });

  it('keeps no stored file when its record cannot be written', async () => {
    const { store } = server.service;
    const createFile = store.createFile;
    store.createFile = async () => {
      throw new Error('the store refused the row');
    };
    try {
      const before = await storedUploads(server);
      const { status, body } = await upload(api, png, 'photo.png', 'image/png');
      assert.equal(status, 500, JSON.stringify(body));
      assert.equal(body.error.code, 'internal_error');
      assert.deepEqual(await storedUploads(server), before);
    } finally {
      store.createFile = createFile;
    }
  });
});

describe('uploads on PostgreSQL', postgres, () => {
  const schema = freshSchemas();
  let pgServer: TestService;
  let pgApi: Api;

  before(async () => {
    pgServer = await startTestService({
      VIDEOGEN_DATABASE_URL: TEST_DATABASE_URL,
      VIDEOGEN_DATABASE_SCHEMA: schema(),
    });
    pgApi = new Api(pgServer.url, (await pgServer.newKey()).key);
  });
  after(() => pgServer?.close());

  it('stores a file whose name and type carry NUL, which PostgreSQL text refuses, under a safe name', async () => {
    const before = await storedUploads(pgServer);
    const { status, body } = await rawUpload(
      pgApi,
      filePart(png, { filename: 'photo\u0000.png', type: 'image/png\u0000' }),
    );
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.filename, 'photo.png');
    assert.deepEqual((await pgApi.request('GET', `/v1/files/${body.id}`)).body, body);
    assert.deepEqual(await storedUploads(pgServer), [...before, body.id].sort());
  });
});
