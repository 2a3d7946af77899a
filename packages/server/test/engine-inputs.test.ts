/**
 * What the engines that run the operator's own models take (issue 33, item 1): `openai` what its server takes
 * (one `input_reference` image on OpenAI, SGLang Diffusion and vLLM-Omni), `exec` and `comfyui` what their
 * command or workflow has placeholders for. With the docs' own engines files, what the routed engine cannot take
 * is refused at creation with `input_not_supported` and absent from `GET /v1/models`, rather than rendered
 * without it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EngineOptions } from '../src/engines/engine-types.js';
import { capabilitiesOf } from '../src/engines/engine-types.js';
import type { PublicModelList } from '../src/models/model-list.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { docsExample, type EnginesFileExample } from './helpers/docs-examples.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const IMAGE = 'videogen-2.0-image-to-video';
const REFERENCE = 'videogen-2.0-reference-to-video';
const A = 'https://example.com/a.png';
const B = 'https://example.com/b.png';
const CLIP = 'https://example.com/clip.mp4';
const TUNE = 'https://example.com/tune.mp3';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-engine-inputs-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The docs' example `name` as an engines file, keys from the environment given values. */
async function exampleFile(name: string): Promise<string> {
  const example: EnginesFileExample = await docsExample(name);
  for (const options of Object.values(example.engines)) {
    if (typeof options.api_key === 'string') options.api_key = 'test-key';
  }
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(example));
  return file;
}

function assertRefused(
  response: { status: number; body: ErrorBody },
  param: string,
  message: RegExp,
  example: string,
): void {
  assert.equal(response.status, 400, `${example}: ${JSON.stringify(response.body)}`);
  assert.equal(response.body.error.code, 'input_not_supported', example);
  assert.equal(response.body.error.param, param, example);
  assert.match(response.body.error.message, message, example);
}

for (const example of ['openai-sora', 'sglang-wan', 'vllm-omni-wan', 'wan-exec']) {
  describe(`the docs’ ${example} engines file`, () => {
    let server: TestService;
    let api: Api;
    before(async () => {
      server = await startTestService({ VIDEOGEN_ENGINES_FILE: await exampleFile(example) });
      api = new Api(server.url, (await server.newKey()).key);
    });
    after(async () => {
      await server?.close();
    });

    it('refuses a last frame, reference videos, audio and a second reference image at creation', async () => {
      assertRefused(
        await api.create({ model: IMAGE, prompt: 'from a to b', image_urls: [A, B] }),
        'image_urls',
        /takes a first frame but no last frame/,
        example,
      );
      assertRefused(
        await api.create({ model: REFERENCE, prompt: 'like video 1', video_urls: [CLIP] }),
        'video_urls',
        /takes no reference videos; this request has 1/,
        example,
      );
      assertRefused(
        await api.create({ model: REFERENCE, prompt: 'image 1 and image 2', image_urls: [A, B] }),
        'image_urls',
        /takes at most 1 reference image; this request has 2/,
        example,
      );
      assertRefused(
        await api.create({
          model: REFERENCE,
          prompt: 'image 1 to audio 1',
          image_urls: [A],
          audio_urls: [TUNE],
        }),
        'audio_urls',
        /takes no reference audio files/,
        example,
      );
    });

    it('creates what the engine takes: one image', async () => {
      for (const model of [IMAGE, REFERENCE]) {
        const created = await api.create({ model, prompt: 'image 1 comes alive', image_urls: [A] });
        assert.equal(created.status, 200, `${example}: ${JSON.stringify(created.body)}`);
        assert.equal(created.body.status, 'pending');
      }
    });

    it('lists in GET /v1/models only what the engine takes', async () => {
      const { status, body } = await api.request<PublicModelList>('GET', '/v1/models');
      assert.equal(status, 200);
      const inputs = (id: string) => body.data.find((model) => model.id === id)?.inputs;
      assert.deepEqual(inputs(IMAGE), { image_urls: { min: 1, max: 1 } }, example);
      assert.deepEqual(inputs(REFERENCE), { image_urls: { min: 0, max: 1 } }, example);
    });
  });
}

describe('exec: what the command has placeholders for', () => {
  const exec = (command: (string | string[])[]): EngineOptions => ({ type: 'exec', command });

  it('takes no input its command does not name', () => {
    assert.deepEqual(capabilitiesOf(exec(['cp', '/videos/ready.mp4', '{output}'])), {
      firstFrame: false,
      lastFrame: false,
      referenceImages: 0,
      referenceVideos: 0,
      referenceAudios: 0,
      audio: false,
    });
  });

  it('takes each input a placeholder names, in a group or not, and makes sound with {generate_audio}', () => {
    assert.deepEqual(
      capabilitiesOf(exec(['gen', '--image', '{image}', ['--end', '{last_image}'], '--out', '{output}'])),
      {
        firstFrame: true,
        lastFrame: true,
        referenceImages: 2,
        referenceVideos: 0,
        referenceAudios: 0,
        audio: false,
      },
    );
    assert.equal(capabilitiesOf(exec(['gen', '--sound={generate_audio}', '{output}'])).audio, true);
    assert.deepEqual(
      capabilitiesOf(
        exec([
          'gen',
          ['--ref', '{image_1}'],
          ['--ref', '{image_3}'],
          ['--v', '{video_2}'],
          ['--a', '{audio_1}'],
        ]),
      ),
      {
        firstFrame: true,
        lastFrame: false,
        referenceImages: 3,
        referenceVideos: 2,
        referenceAudios: 1,
        audio: false,
      },
    );
  });
});

describe('comfyui: what the workflow has placeholders for', () => {
  /** A workflow in API format whose LoadImage nodes take `images`. */
  async function workflow(name: string, images: string[]): Promise<EngineOptions> {
    const nodes: Record<string, unknown> = {
      '1': { class_type: 'CLIPTextEncode', inputs: { text: '{{prompt}}' } },
      '2': { class_type: 'SaveVideo', inputs: { filename_prefix: 'out' } },
    };
    images.forEach((placeholder, i) => {
      nodes[String(10 + i)] = { class_type: 'LoadImage', inputs: { image: `{{${placeholder}}}` } };
    });
    await writeFile(join(dir, name), JSON.stringify(nodes));
    return { type: 'comfyui', base_url: 'http://comfy:8188', workflow: name };
  }

  it('takes no image into a workflow without image placeholders', async () => {
    const capabilities = capabilitiesOf(await workflow('t2v.json', []), dir);
    assert.equal(capabilities.firstFrame, false);
    assert.equal(capabilities.referenceImages, 0);
  });

  it('takes a first and a last frame, and as many reference images as it names; never videos, audio or sound', async () => {
    assert.deepEqual(capabilitiesOf(await workflow('flf.json', ['image', 'last_image']), dir), {
      firstFrame: true,
      lastFrame: true,
      referenceImages: 2,
      referenceVideos: 0,
      referenceAudios: 0,
      audio: false,
    });
    assert.deepEqual(capabilitiesOf(await workflow('i2v.json', ['image_1']), dir), {
      firstFrame: true,
      lastFrame: false,
      referenceImages: 1,
      referenceVideos: 0,
      referenceAudios: 0,
      audio: false,
    });
  });
});
