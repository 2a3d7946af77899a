/**
 * The addresses of the URLs in answers (result links, uploaded files'), over real HTTP: without
 * VIDEOGEN_PUBLIC_URL they are at the address each request was sent to (its Host header), so that a dashboard
 * opened at `localhost` plays what a client at `127.0.0.1` created; callbacks, answering no request, get the
 * listener's address; with VIDEOGEN_PUBLIC_URL every answer is under it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PublicTask } from '../src/domain/task.js';
import type { PublicFile } from '../src/domain/uploaded-file.js';
import { Api } from './helpers/api.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

interface Answer<T> {
  status: number;
  body: T;
}

/**
 * A request to the server at 127.0.0.1 with the Host header `host`, as a client that reached it by that name
 * sends it (fetch sets the Host header itself).
 */
function sendAs<T>(
  server: TestService,
  host: string,
  key: string,
  method: string,
  path: string,
  body?: { type: string; bytes: Buffer },
): Promise<Answer<T>> {
  const port = portOf(server);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          host: `${host}:${port}`,
          authorization: `Bearer ${key}`,
          ...(body ? { 'content-type': body.type, 'content-length': body.bytes.length } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString()) as T,
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body?.bytes);
  });
}

/** The port the server listens on (its URL is the public URL when one is set). */
function portOf(server: TestService): number {
  const address = server.service.app.server.address();
  assert.ok(address && typeof address === 'object');
  return address.port;
}

function json(value: unknown) {
  return { type: 'application/json', bytes: Buffer.from(JSON.stringify(value)) };
}

function multipartFile(bytes: Buffer, filename: string, type: string) {
  return {
    type: 'multipart/form-data; boundary=B',
    bytes: Buffer.concat([
      Buffer.from(
        `--B\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`,
      ),
      bytes,
      Buffer.from('\r\n--B--\r\n'),
    ]),
  };
}

let dir: string;
let png: Buffer;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-addresses-'));
  await writeTestImage(join(dir, 'photo.png'), { width: 320, height: 240, colour: [20, 160, 90] });
  png = await readFile(join(dir, 'photo.png'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('answers without VIDEOGEN_PUBLIC_URL', () => {
  let server: TestService;
  let key: string;
  let receiver: WebhookReceiver;

  before(async () => {
    server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
    key = (await server.newKey()).key;
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver?.close();
    await server?.close();
  });

  it('are at the address each request was sent to; callbacks at the address the server listens on', async () => {
    const port = portOf(server);
    assert.equal(server.url, `http://127.0.0.1:${port}`, 'the server listens on 127.0.0.1');
    const created = await sendAs<PublicTask>(
      server,
      '127.0.0.1',
      key,
      'POST',
      '/v1/videos/generations',
      json({
        model: 'videogen-2.0-fast-text-to-video',
        prompt: 'a kite over hills',
        duration: 4,
        quality: '480p',
        callback_url: `${receiver.url}/hooks`,
      }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const final = await new Api(server.url, key).waitForFinal(created.body.id, 120_000);
    assert.equal(final.status, 'completed', JSON.stringify(final.error));

    for (const host of ['localhost', '127.0.0.1', 'videos.lan']) {
      const answer = await sendAs<PublicTask>(server, host, key, 'GET', `/v1/tasks/${created.body.id}`);
      const link = new URL(answer.body.results?.[0] ?? '');
      assert.equal(link.origin, `http://${host}:${port}`, `GET /v1/tasks at ${host}`);
      const listed = await sendAs<{ data: PublicTask[] }>(server, host, key, 'GET', '/v1/tasks');
      assert.equal(new URL(listed.body.data[0]?.results?.[0] ?? '').origin, `http://${host}:${port}`);
      // Whatever the address in it, the link is this server's: fetched at the listener, it plays.
      const video = await fetch(`${server.url}${link.pathname}${link.search}`);
      assert.equal(video.status, 200);
      assert.equal(video.headers.get('content-type'), 'video/mp4');
    }

    const deliveries = await receiver.waitFor(2, 60_000);
    const completed = deliveries
      .map((delivery) => JSON.parse(delivery.body) as PublicTask)
      .find((task) => task.status === 'completed');
    assert.equal(new URL(completed?.results?.[0] ?? '').origin, server.url);
  });

  it("answers an upload's URL at the request's address, and takes a file at it or at the default one", async () => {
    const port = portOf(server);
    const uploaded = await sendAs<PublicFile>(
      server,
      'localhost',
      key,
      'POST',
      '/v1/files',
      multipartFile(png, 'photo.png', 'image/png'),
    );
    assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
    assert.equal(uploaded.body.url, `http://localhost:${port}/v1/files/${uploaded.body.id}/content`);
    const read = await sendAs<PublicFile>(server, 'videos.lan', key, 'GET', `/v1/files/${uploaded.body.id}`);
    assert.equal(read.body.url, `http://videos.lan:${port}/v1/files/${uploaded.body.id}/content`);

    for (const url of [uploaded.body.url, `${server.url}/v1/files/${uploaded.body.id}/content`]) {
      const created = await sendAs<PublicTask>(
        server,
        'localhost',
        key,
        'POST',
        '/v1/videos/generations',
        json({ model: 'videogen-2.0-fast-image-to-video', prompt: 'it moves', image_urls: [url] }),
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const stored = await server.service.store.getTask(created.body.id);
      assert.deepEqual(stored?.params.image_urls, [`storage:uploads/${uploaded.body.id}`], url);
      await sendAs(server, 'localhost', key, 'POST', `/v1/tasks/${created.body.id}/cancel`);
    }
    // An address that is not the request's nor the default is someone else's: downloaded, not looked up.
    const elsewhere = `http://videos.lan:${port}/v1/files/${uploaded.body.id}/content`;
    const created = await sendAs<PublicTask>(
      server,
      'localhost',
      key,
      'POST',
      '/v1/videos/generations',
      json({ model: 'videogen-2.0-fast-image-to-video', prompt: 'it moves', image_urls: [elsewhere] }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.deepEqual((await server.service.store.getTask(created.body.id))?.params.image_urls, [elsewhere]);
    await sendAs(server, 'localhost', key, 'POST', `/v1/tasks/${created.body.id}/cancel`);
  });
});

describe('answers with VIDEOGEN_PUBLIC_URL', () => {
  let server: TestService;
  let key: string;

  before(async () => {
    server = await startTestService({ VIDEOGEN_PUBLIC_URL: 'https://videos.example.com' });
    key = (await server.newKey()).key;
  });
  after(async () => {
    await server?.close();
  });

  it('are under it, whatever address the request was sent to', async () => {
    const uploaded = await sendAs<PublicFile>(
      server,
      'localhost',
      key,
      'POST',
      '/v1/files',
      multipartFile(png, 'photo.png', 'image/png'),
    );
    assert.equal(uploaded.body.url, `https://videos.example.com/v1/files/${uploaded.body.id}/content`);
    const created = await sendAs<PublicTask>(
      server,
      'localhost',
      key,
      'POST',
      '/v1/videos/generations',
      json({
        model: 'videogen-2.0-fast-image-to-video',
        prompt: 'it moves',
        image_urls: [`http://localhost:${portOf(server)}/v1/files/${uploaded.body.id}/content`],
      }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.notDeepEqual(
      (await server.service.store.getTask(created.body.id))?.params.image_urls,
      [`storage:uploads/${uploaded.body.id}`],
      'the request address is not the public URL: not this server’s file',
    );
  });
});
