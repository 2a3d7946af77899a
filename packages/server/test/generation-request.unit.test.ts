import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ApiError } from '../src/domain/errors.js';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import { MODEL_IDS } from '../src/domain/models.js';

const IMG = 'https://example.com/a.png';
const VID = 'https://example.com/a.mp4';
const AUD = 'https://example.com/a.mp3';

function rejects(body: unknown, code: string, param?: string, message?: RegExp): void {
  assert.throws(
    () => parseGenerationRequest(body),
    (error: unknown) => {
      assert.ok(error instanceof ApiError, `expected ApiError, got ${String(error)}`);
      assert.equal(error.code, code, error.message);
      if (param !== undefined) assert.equal(error.param, param);
      if (message) assert.match(error.message, message);
      return true;
    },
  );
}

describe('parseGenerationRequest', () => {
  it('applies the defaults of docs/decisions.md#models-and-requests per mode', () => {
    const text = parseGenerationRequest(
      { model: 'videogen-2.0-text-to-video', prompt: '  a fox  ' },
      () => 7,
    );
    assert.deepEqual(text.params, {
      prompt: 'a fox',
      image_urls: [],
      video_urls: [],
      audio_urls: [],
      duration: 5,
      quality: '720p',
      aspect_ratio: '16:9',
      seed: 7,
      callback_url: null,
      return_last_frame: false,
      web_search: false,
      generate_audio: true,
    });
    assert.equal(text.audioGiven, false);
    const image = parseGenerationRequest({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'p',
      image_urls: [IMG],
    });
    assert.equal(image.params.aspect_ratio, 'adaptive');
    assert.equal(image.model.fast, true);
    assert.equal(image.model.mode, 'image');
    const reference = parseGenerationRequest({
      model: 'videogen-2.0-reference-to-video',
      prompt: 'p',
      video_urls: [VID],
    });
    assert.equal(reference.params.aspect_ratio, 'adaptive');
  });

  it('return_last_frame on every model; web_search on text models only; asset:// ids as asset URLs', () => {
    const text = parseGenerationRequest({
      model: 'videogen-2.0-text-to-video',
      prompt: 'p',
      return_last_frame: true,
      web_search: true,
    });
    assert.equal(text.params.return_last_frame, true);
    assert.equal(text.params.web_search, true);
    const image = parseGenerationRequest({
      model: 'videogen-2.0-image-to-video',
      prompt: 'p',
      image_urls: ['asset://asset-20260224200602-qn7wr'],
      return_last_frame: true,
      web_search: false,
    });
    assert.deepEqual(image.params.image_urls, ['asset://asset-20260224200602-qn7wr']);
    for (const model of ['videogen-2.0-image-to-video', 'videogen-2.0-fast-reference-to-video']) {
      rejects(
        { model, prompt: 'p', image_urls: [IMG], web_search: true },
        'invalid_parameter',
        'web_search',
        /text-to-video/,
      );
    }
    rejects(
      { model: 'videogen-2.0-text-to-video', prompt: 'p', web_search: 'yes' },
      'invalid_parameter',
      'web_search',
    );
    for (const bad of ['asset://', 'asset://a b', 'asset://../x']) {
      rejects(
        { model: 'videogen-2.0-image-to-video', prompt: 'p', image_urls: [bad] },
        'invalid_parameter',
        'image_urls[0]',
      );
    }
  });

  it('takes generate_audio as a boolean only, default true, and tells whether it was given', () => {
    const text = { model: 'videogen-2.0-text-to-video', prompt: 'p' };
    for (const value of [true, false]) {
      const parsed = parseGenerationRequest({ ...text, generate_audio: value });
      assert.equal(parsed.params.generate_audio, value);
      assert.equal(parsed.audioGiven, true);
    }
    for (const value of ['true', 1, null, 0, [], {}]) {
      rejects({ ...text, generate_audio: value }, 'invalid_parameter', 'generate_audio', /boolean/);
    }
  });

  it('draws a random seed in range when none is given, and keeps a given one', () => {
    const seeds = new Set(
      Array.from(
        { length: 20 },
        () => parseGenerationRequest({ model: MODEL_IDS[0], prompt: 'p' }).params.seed,
      ),
    );
    assert.ok(seeds.size > 1);
    for (const seed of seeds) assert.ok(Number.isInteger(seed) && seed >= 0 && seed <= 4294967295);
    assert.equal(
      parseGenerationRequest({ model: MODEL_IDS[0], prompt: 'p', seed: 4294967295 }).params.seed,
      4294967295,
    );
  });

  it('rejects bodies that are not objects', () => {
    for (const body of [null, [], 'x', 3, undefined]) rejects(body, 'invalid_json');
  });

  it('names unknown fields', () => {
    rejects(
      { model: MODEL_IDS[0], prompt: 'p', negative_prompt: 'x' },
      'unknown_parameter',
      'negative_prompt',
    );
  });

  it('requires model and prompt, and knows the six models', () => {
    rejects({ prompt: 'p' }, 'missing_parameter', 'model');
    rejects({ model: MODEL_IDS[0] }, 'missing_parameter', 'prompt');
    rejects({ model: 'videogen-1.0-text-to-video', prompt: 'p' }, 'model_not_found', 'model');
    rejects({ model: 42, prompt: 'p' }, 'model_not_found', 'model');
  });

  it('bounds the prompt after trimming', () => {
    rejects({ model: MODEL_IDS[0], prompt: '' }, 'invalid_parameter', 'prompt');
    rejects({ model: MODEL_IDS[0], prompt: '   ' }, 'invalid_parameter', 'prompt');
    rejects({ model: MODEL_IDS[0], prompt: 'x'.repeat(5001) }, 'invalid_parameter', 'prompt');
    assert.equal(
      parseGenerationRequest({ model: MODEL_IDS[0], prompt: 'x'.repeat(5000) }).params.prompt.length,
      5000,
    );
  });

  it('checks duration, quality, aspect_ratio and seed ranges', () => {
    const base = { model: MODEL_IDS[0], prompt: 'p' };
    for (const duration of [3, 16, 5.5, '5']) rejects({ ...base, duration }, 'invalid_parameter', 'duration');
    for (const duration of [4, 15])
      assert.equal(parseGenerationRequest({ ...base, duration }).params.duration, duration);
    rejects({ ...base, quality: '4k' }, 'invalid_parameter', 'quality', /480p, 720p, 1080p/);
    rejects({ ...base, aspect_ratio: '2:1' }, 'invalid_parameter', 'aspect_ratio');
    for (const seed of [-1, 4294967296, 1.5]) rejects({ ...base, seed }, 'invalid_parameter', 'seed');
  });

  it('refuses asset fields a model does not accept, naming the models that do', () => {
    rejects(
      { model: 'videogen-2.0-text-to-video', prompt: 'p', image_urls: [IMG] },
      'invalid_parameter',
      'image_urls',
      /not accepted by videogen-2\.0-text-to-video.*videogen-2\.0-image-to-video/,
    );
    rejects(
      { model: 'videogen-2.0-image-to-video', prompt: 'p', image_urls: [IMG], video_urls: [VID] },
      'invalid_parameter',
      'video_urls',
      /reference-to-video/,
    );
    rejects(
      { model: 'videogen-2.0-image-to-video', prompt: 'p', image_urls: [IMG], audio_urls: [AUD] },
      'invalid_parameter',
      'audio_urls',
    );
  });

  it('needs 1 or 2 images in image mode', () => {
    const model = 'videogen-2.0-image-to-video';
    rejects({ model, prompt: 'p' }, 'missing_parameter', 'image_urls');
    rejects({ model, prompt: 'p', image_urls: [] }, 'invalid_parameter', 'image_urls');
    rejects({ model, prompt: 'p', image_urls: [IMG, IMG, IMG] }, 'invalid_parameter', 'image_urls');
    assert.equal(
      parseGenerationRequest({ model, prompt: 'p', image_urls: [IMG, IMG] }).params.image_urls.length,
      2,
    );
  });

  it('bounds reference assets and refuses audio alone', () => {
    const model = 'videogen-2.0-reference-to-video';
    rejects({ model, prompt: 'p' }, 'missing_parameter');
    rejects(
      { model, prompt: 'p', audio_urls: [AUD] },
      'missing_parameter',
      undefined,
      /audio cannot be the only/,
    );
    rejects({ model, prompt: 'p', image_urls: Array(10).fill(IMG) }, 'invalid_parameter', 'image_urls');
    rejects({ model, prompt: 'p', video_urls: Array(4).fill(VID) }, 'invalid_parameter', 'video_urls');
    rejects(
      { model, prompt: 'p', image_urls: [IMG], audio_urls: Array(4).fill(AUD) },
      'invalid_parameter',
      'audio_urls',
    );
    rejects(
      {
        model,
        prompt: 'p',
        image_urls: Array(9).fill(IMG),
        video_urls: Array(3).fill(VID),
        audio_urls: [AUD],
      },
      'invalid_parameter',
      undefined,
      /At most 12/,
    );
    const ok = parseGenerationRequest({
      model,
      prompt: 'p',
      image_urls: Array(9).fill(IMG),
      video_urls: Array(3).fill(VID),
    });
    assert.equal(ok.params.video_urls.length, 3);
  });

  it('accepts http(s) and base64 data: asset URLs only, naming the index', () => {
    const model = 'videogen-2.0-image-to-video';
    rejects({ model, prompt: 'p', image_urls: [IMG, 'ftp://x/y.png'] }, 'invalid_parameter', 'image_urls[1]');
    rejects({ model, prompt: 'p', image_urls: ['not a url'] }, 'invalid_parameter', 'image_urls[0]');
    rejects({ model, prompt: 'p', image_urls: ['data:image/png,abc'] }, 'invalid_parameter', 'image_urls[0]');
    rejects({ model, prompt: 'p', image_urls: [3] }, 'invalid_parameter', 'image_urls[0]');
    assert.ok(
      parseGenerationRequest({ model, prompt: 'p', image_urls: ['data:image/png;base64,iVBORw0KGgo='] }),
    );
  });

  it('checks callback_url', () => {
    const base = { model: MODEL_IDS[0], prompt: 'p' };
    rejects({ ...base, callback_url: 'ftp://example.com/hook' }, 'invalid_parameter', 'callback_url');
    rejects(
      { ...base, callback_url: 'https://user:pw@example.com/hook' },
      'invalid_parameter',
      'callback_url',
      /credentials/,
    );
    rejects(
      { ...base, callback_url: `https://example.com/${'a'.repeat(2048)}` },
      'invalid_parameter',
      'callback_url',
    );
    assert.equal(
      parseGenerationRequest({ ...base, callback_url: 'https://example.com/h' }).params.callback_url,
      'https://example.com/h',
    );
  });

  it('refuses control characters in http(s) URLs and a NUL in the prompt, the same on every store', () => {
    const text = { model: MODEL_IDS[0], prompt: 'p' };
    for (const control of ['\u0000', '\u0001', '\n', '\t', '\u007f']) {
      rejects(
        { ...text, callback_url: `https://example.com/a${control}b` },
        'invalid_parameter',
        'callback_url',
        /control characters/,
      );
      rejects(
        {
          model: 'videogen-2.0-image-to-video',
          prompt: 'p',
          image_urls: [IMG, `https://x.test/${control}.png`],
        },
        'invalid_parameter',
        'image_urls[1]',
      );
    }
    rejects({ ...text, prompt: 'a\u0000b' }, 'invalid_parameter', 'prompt', /NUL/);
    // Other whitespace belongs in a prompt, and percent-encoded controls in a URL.
    assert.equal(
      parseGenerationRequest({ ...text, prompt: 'line one\nline\ttwo' }).params.prompt,
      'line one\nline\ttwo',
    );
    assert.ok(parseGenerationRequest({ ...text, callback_url: 'https://example.com/a%00b' }));
  });

  it('accepts every well-formed text request and echoes what was given (property)', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            model: fc.constantFrom('videogen-2.0-text-to-video', 'videogen-2.0-fast-text-to-video'),
            prompt: fc.string({ minLength: 1, maxLength: 200 }).filter((s) => s.trim().length > 0),
            duration: fc.integer({ min: 4, max: 15 }),
            quality: fc.constantFrom('480p', '720p', '1080p'),
            aspect_ratio: fc.constantFrom('16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive'),
            seed: fc.integer({ min: 0, max: 4294967295 }),
          },
          { requiredKeys: ['model', 'prompt'] },
        ),
        (body) => {
          const { params } = parseGenerationRequest(body);
          assert.equal(params.prompt, body.prompt.trim());
          if (body.duration !== undefined) assert.equal(params.duration, body.duration);
          if (body.quality !== undefined) assert.equal(params.quality, body.quality);
          // With no image to follow, adaptive is 16:9 from the start.
          const ratio = body.aspect_ratio === 'adaptive' ? '16:9' : body.aspect_ratio;
          if (ratio !== undefined) assert.equal(params.aspect_ratio, ratio);
          if (body.seed !== undefined) assert.equal(params.seed, body.seed);
        },
      ),
    );
  });

  it('names any unknown field (property)', () => {
    const known = new Set([
      'model',
      'prompt',
      'image_urls',
      'video_urls',
      'audio_urls',
      'duration',
      'quality',
      'aspect_ratio',
      'seed',
      'callback_url',
    ]);
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 20 }).filter((k) => !known.has(k) && k !== '__proto__'),
        (key) => rejects({ model: MODEL_IDS[0], prompt: 'p', [key]: 1 }, 'unknown_parameter', key),
      ),
    );
  });
});
