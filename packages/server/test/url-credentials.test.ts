/**
 * One rule for every URL of a request: asset URLs, like callback_url, are refused at creation when they carry
 * credentials (`user:password@`), with a 400 naming the field and index, and nothing is created.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Api, type ErrorBody } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/test-service.js';

describe('URLs with credentials', () => {
  let server: TestService;
  let api: Api;

  before(async () => {
    server = await startTestService();
    api = new Api(server.url, (await server.newKey()).key);
  });
  after(() => server?.close());

  const cases = [
    {
      body: {
        model: 'videogen-2.0-image-to-video',
        prompt: 'p',
        image_urls: ['https://example.com/first.png', 'http://user:pass@example.com/last.png'],
      },
      param: 'image_urls[1]',
    },
    {
      body: {
        model: 'videogen-2.0-reference-to-video',
        prompt: 'p',
        image_urls: ['https://example.com/a.png'],
        video_urls: ['https://token@example.com/clip.mp4'],
      },
      param: 'video_urls[0]',
    },
    {
      body: {
        model: 'videogen-2.0-fast-reference-to-video',
        prompt: 'p',
        image_urls: ['https://example.com/a.png'],
        audio_urls: ['https://example.com/a.mp3', 'https://:secret@example.com/b.mp3'],
      },
      param: 'audio_urls[1]',
    },
    {
      body: {
        model: 'videogen-2.0-text-to-video',
        prompt: 'p',
        callback_url: 'https://user:pass@hooks.example.com/videogen',
      },
      param: 'callback_url',
    },
  ];

  for (const { body, param } of cases) {
    it(`refuses ${param} with credentials, naming it, and creates nothing`, async () => {
      const { status, body: answer } = await api.create(body);
      assert.equal(status, 400);
      const { error } = answer as ErrorBody;
      assert.equal(error.code, 'invalid_parameter');
      assert.equal(error.param, param);
      assert.equal(
        error.message,
        `${param} must not contain credentials (user:password@); URLs end up in logs.`,
      );
      const listed = await api.request<{ data: unknown[] }>('GET', '/v1/tasks');
      assert.deepEqual(listed.body.data, []);
    });
  }

  it('still accepts asset URLs without credentials', async () => {
    const { status } = await api.create({
      model: 'videogen-2.0-image-to-video',
      prompt: 'p',
      image_urls: ['https://example.com/first.png?user=a&password=b'],
    });
    assert.equal(status, 200);
  });
});
