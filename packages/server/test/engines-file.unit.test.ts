import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MODEL_IDS } from '../src/domain/models.js';
import {
  DEFAULT_ROUTING,
  defaultEnginesConfig,
  EnginesFileError,
  loadEnginesFile,
  parseEnginesConfig,
} from '../src/engines/engines-file.js';
import { docsExample } from './helpers/docs-examples.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-engines-file-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function problem(data: unknown, env: Record<string, string> = {}): string {
  try {
    parseEnginesConfig(data, 'engines.yaml', env);
  } catch (error) {
    assert.ok(error instanceof EnginesFileError, String(error));
    return error.message;
  }
  assert.fail('the file was accepted');
}

describe('the engines file', () => {
  it('defaults to the local engine for all six model IDs', () => {
    const config = defaultEnginesConfig();
    assert.deepEqual([...config.models.keys()], [...MODEL_IDS]);
    assert.deepEqual(
      [...config.models.values()].map((route) => route.flat().map(({ engine }) => engine)),
      MODEL_IDS.map(() => ['local']),
    );
  });

  it('reads YAML with named engines, environment variables and the built-in engine', async () => {
    const path = join(dir, 'engines.yaml');
    await writeFile(
      path,
      [
        'engines:',
        '  sglang:',
        '    type: openai',
        '    base_url: http://gpu-1:30000',
        '    api_key: ${SGLANG_KEY}',
        '    model: Wan-AI/Wan2.2-T2V-A14B-Diffusers',
        '  wan:',
        '    type: exec',
        '    command: [python, generate.py, --prompt, "{prompt}", [--image, "{image}"], --note, "$${HOME}"]',
        'models:',
        '  videogen-2.0-text-to-video: sglang',
        '  videogen-2.0-image-to-video: wan',
        '  videogen-2.0-fast-text-to-video: local',
        '',
      ].join('\n'),
    );
    const config = loadEnginesFile(path, { SGLANG_KEY: 'sk-secret' });
    assert.equal(config.baseDir, dir);
    assert.deepEqual(Object.fromEntries(config.models), {
      'videogen-2.0-text-to-video': [[{ engine: 'sglang', weight: 1 }]],
      'videogen-2.0-image-to-video': [[{ engine: 'wan', weight: 1 }]],
      'videogen-2.0-fast-text-to-video': [[{ engine: 'local', weight: 1 }]],
    });
    const sglang = config.engines.get('sglang');
    assert.equal(sglang?.type === 'openai' && sglang.api_key, 'sk-secret');
    const wan = config.engines.get('wan');
    assert.deepEqual(wan?.type === 'exec' && wan.command, [
      'python',
      'generate.py',
      '--prompt',
      '{prompt}',
      ['--image', '{image}'],
      '--note',
      '${HOME}',
    ]);
    assert.deepEqual(config.engines.get('local'), { type: 'local' });
  });

  it('reads JSON too', async () => {
    const path = join(dir, 'engines.json');
    await writeFile(path, JSON.stringify({ models: { 'videogen-2.0-reference-to-video': 'local' } }));
    assert.deepEqual([...loadEnginesFile(path).models.keys()], ['videogen-2.0-reference-to-video']);
  });

  it("defines the operator's models after the six, with their limits, defaults and aliases", () => {
    const config = parseEnginesConfig(
      {
        models: {
          'videogen-2.0-text-to-video': { route: 'local', aliases: ['seedance-2.0-text-to-video'] },
          'veo-3.1': { route: 'local', mode: 'text', durations: [8, 4, 6], qualities: ['1080p', '720p'] },
          'ref-x': {
            mode: 'reference',
            durations: { min: 4, max: 30 },
            video_urls: { min: 0, max: 2 },
            image_urls: { min: 0, max: 4 },
          },
        },
      },
      'engines.yaml',
    );
    const { catalogue } = config;
    assert.deepEqual(catalogue.ids(), [...MODEL_IDS, 'veo-3.1', 'ref-x']);
    assert.equal(catalogue.find('seedance-2.0-text-to-video')?.id, 'videogen-2.0-text-to-video');
    const veo = catalogue.get('veo-3.1');
    assert.deepEqual(
      [
        veo.durations,
        veo.defaultDuration,
        veo.qualities,
        veo.defaultQuality,
        veo.defaultAspectRatio,
        veo.fast,
      ],
      [[4, 6, 8], 4, ['1080p', '720p'], '720p', '16:9', false],
    );
    const ref = catalogue.get('ref-x');
    assert.deepEqual([ref.durations.length, ref.defaultDuration, ref.maxReferenceAssets], [27, 5, 6]);
    assert.deepEqual(ref.assets, { image_urls: { min: 0, max: 4 }, video_urls: { min: 0, max: 2 } });
    assert.deepEqual(
      [...config.models.keys()],
      ['videogen-2.0-text-to-video', 'veo-3.1'],
      'ref-x has no route here',
    );
  });

  it('refuses a model definition that cannot hold, at its place', () => {
    const cases: [unknown, RegExp][] = [
      [
        { 'videogen-2.0-text-to-video': { route: 'local', durations: [4] } },
        /\/models\/videogen-2.0-text-to-video\/durations: a built-in model's limits are the interface's/,
      ],
      [
        { x: { route: 'local', mode: 'text', image_urls: { min: 0, max: 1 } } },
        /\/models\/x\/image_urls: a text model takes no assets/,
      ],
      [
        { x: { mode: 'image', image_urls: { min: 1, max: 3 } } },
        /\/models\/x\/image_urls\/max: an image model takes at most 2/,
      ],
      [
        { x: { mode: 'image', video_urls: { min: 0, max: 1 } } },
        /\/models\/x\/video_urls: an image model takes image_urls only/,
      ],
      [
        { x: { mode: 'reference', audio_urls: { min: 0, max: 1 } } },
        /\/models\/x: a reference model takes image_urls or video_urls/,
      ],
      [
        { x: { mode: 'text', durations: [4, 6], default_duration: 5 } },
        /\/models\/x\/default_duration: must be one of 4, 6/,
      ],
      [
        { x: { mode: 'text', durations: { min: 8, max: 4 } } },
        /\/models\/x\/durations\/min: must not be more than max/,
      ],
      [
        { x: { mode: 'text', aspect_ratios: ['adaptive'] } },
        /\/models\/x\/aspect_ratios: a text model needs a fixed ratio/,
      ],
      [{ x: { mode: 'video' } }, /\/models\/x\/mode: /],
      [{ x: { mode: 'text', colour: 'red' } }, /\/models\/x: .*colour|\/models\/x\/colour/],
      [{ 'a/b': { mode: 'text' } }, /\/models\/a\/b: not a valid model ID/],
      [
        { x: { mode: 'text', aliases: ['videogen-2.0-text-to-video'] } },
        /"videogen-2.0-text-to-video" already names videogen-2.0-text-to-video/,
      ],
      [{ x: { mode: 'text', aliases: ['y'] }, y: { mode: 'text' } }, /\/models\/y: "y" already names x/],
    ];
    for (const [models, expected] of cases) {
      assert.match(
        problem({ models: { 'videogen-2.0-text-to-video': 'local', ...(models as object) } }),
        expected,
      );
    }
    assert.match(
      problem({
        models: { 'videogen-2.0-text-to-video': { route: 'local', aliases: ['sd'] } },
        prices: { currency: 'USD', models: { sd: { '720p': 1 } } },
      }),
      /\/prices\/models\/sd: an alias of videogen-2.0-text-to-video: price the model by its ID/,
    );
    assert.match(
      problem({
        models: { 'videogen-2.0-text-to-video': 'local' },
        prices: { currency: 'USD', models: { nope: {} } },
      }),
      /\/prices\/models\/nope: not a model ID/,
    );
  });

  it('names the file and the place of every problem', async () => {
    assert.match(
      problem({ engines: { x: { type: 'relay', base_url: 'http://a', api_key: '${KEY}' } }, models: {} }),
      /engines\.yaml: \/engines\/x\/api_key: the environment variable KEY is not set/,
    );
    assert.match(
      problem({ models: { 'videogen-3-text': 'local' } }),
      /\/models\/videogen-3-text: not a built-in model ID .*needs its mode/,
    );
    assert.match(
      problem({ models: { 'videogen-2.0-text-to-video': 'wan' } }),
      /\/models\/videogen-2.0-text-to-video: no engine named "wan"/,
    );
    assert.match(
      problem({ engines: { s: { type: 'openai', base_url: 'http://gpu:1' } }, models: {} }),
      /\/engines\/s\/model: /,
    );
    assert.match(
      problem({ engines: { s: { type: 'magic' } }, models: {} }),
      /\/engines\/s\/type: must be one of/,
    );
    assert.match(
      problem({ engines: { s: { type: 'exec', command: ['x'], shell: true } }, models: {} }),
      /\/engines\/s\/shell/,
    );
    assert.match(problem({ models: {} }), /maps no model ID/);
    assert.match(
      problem({
        engines: { local: { type: 'exec', command: ['x'] } },
        models: { 'videogen-2.0-text-to-video': 'local' },
      }),
      /built-in/,
    );
  });

  it('says when the file cannot be read or parsed', async () => {
    assert.throws(() => loadEnginesFile(join(dir, 'missing.yaml')), /missing\.yaml: cannot be read/);
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'models: [unclosed');
    assert.throws(() => loadEnginesFile(bad), /bad\.yaml: is not valid YAML or JSON/);
  });

  it('reads routes: fallback lists, balanced sets, caps, accept timeouts and the routing policy', () => {
    const config = parseEnginesConfig(
      {
        engines: {
          'gpu-a': { type: 'relay', base_url: 'http://gpu-a:8080', api_key: 'k', max_concurrency: 10 },
          'gpu-b': { type: 'relay', base_url: 'http://gpu-b:8080', api_key: 'k', max_concurrency: 4 },
          ark: {
            type: 'relay',
            base_url: 'http://ark:8080',
            api_key: 'k',
            accept_timeout_seconds: 5,
            max_requests_per_second: 2.5,
            job_timeout_seconds: 7200,
          },
        },
        models: {
          'videogen-2.0-text-to-video': ['ark', { balance: { 'gpu-a': 2, 'gpu-b': 1 } }, 'local'],
          'videogen-2.0-fast-text-to-video': 'gpu-a',
        },
        routing: { accept_timeout_seconds: 20, circuit_breaker: { failures: 3, cooldown_seconds: 45 } },
      },
      'engines.yaml',
    );
    assert.deepEqual(config.models.get('videogen-2.0-text-to-video'), [
      [{ engine: 'ark', weight: 1 }],
      [
        { engine: 'gpu-a', weight: 2 },
        { engine: 'gpu-b', weight: 1 },
      ],
      [{ engine: 'local', weight: 1 }],
    ]);
    assert.deepEqual(Object.fromEntries(config.limits), {
      'gpu-a': { maxConcurrency: 10 },
      'gpu-b': { maxConcurrency: 4 },
      ark: { acceptTimeoutMs: 5000, maxRequestsPerSecond: 2.5, jobTimeoutMs: 7_200_000 },
    });
    assert.deepEqual(config.routing, {
      acceptTimeoutMs: 20_000,
      circuit: { failures: 3, cooldownMs: 45_000 },
      fallbackOnRefusal: false,
    });
    // The routing keys are not the engine type's options.
    assert.deepEqual(config.engines.get('gpu-a'), {
      type: 'relay',
      base_url: 'http://gpu-a:8080',
      api_key: 'k',
    });
  });

  it("reads the docs' routing example as written", async () => {
    const config = parseEnginesConfig(await docsExample('routing'), 'engines.yaml', {
      ARK_API_KEY: 'ark-key',
    });
    assert.deepEqual(config.models.get('videogen-2.0-text-to-video'), [
      [{ engine: 'seedance', weight: 1 }],
      [
        { engine: 'gpu-a', weight: 2 },
        { engine: 'gpu-b', weight: 1 },
      ],
      [{ engine: 'local', weight: 1 }],
    ]);
    assert.deepEqual(config.models.get('videogen-2.0-fast-text-to-video'), [
      [
        { engine: 'gpu-a', weight: 1 },
        { engine: 'gpu-b', weight: 1 },
      ],
    ]);
    assert.deepEqual(Object.fromEntries(config.limits), {
      'gpu-a': { maxConcurrency: 4 },
      'gpu-b': { maxConcurrency: 2 },
    });
    assert.deepEqual(config.routing, DEFAULT_ROUTING);
    assert.deepEqual([...config.engines.keys()].sort(), ['gpu-a', 'gpu-b', 'local', 'seedance']);
  });

  it('names the place of every routing problem', () => {
    const relay = { type: 'relay', base_url: 'http://a:1', api_key: 'k' };
    assert.match(
      problem({ engines: { a: relay }, models: { 'videogen-2.0-text-to-video': ['a', 'b'] } }),
      /\/models\/videogen-2.0-text-to-video: no engine named "b"/,
    );
    assert.match(
      problem({
        engines: { a: relay },
        models: { 'videogen-2.0-text-to-video': ['a', { balance: { a: 1 } }] },
      }),
      /\/models\/videogen-2.0-text-to-video: the route names "a" twice/,
    );
    assert.match(
      problem({
        engines: { a: { ...relay, max_concurrency: 0 } },
        models: { 'videogen-2.0-text-to-video': 'a' },
      }),
      /\/engines\/a\/max_concurrency: /,
    );
    assert.match(
      problem({
        engines: { a: { ...relay, max_requests_per_second: 0 } },
        models: { 'videogen-2.0-text-to-video': 'a' },
      }),
      /\/engines\/a\/max_requests_per_second: /,
    );
    assert.match(
      problem({
        engines: { a: { ...relay, job_timeout_seconds: -1 } },
        models: { 'videogen-2.0-text-to-video': 'a' },
      }),
      /\/engines\/a\/job_timeout_seconds: /,
    );
    // Only engines with upstream jobs have a job time limit; a command has its own timeout_seconds.
    assert.match(
      problem({
        engines: { a: { type: 'exec', command: ['gen', '{output}'], job_timeout_seconds: 60 } },
        models: { 'videogen-2.0-text-to-video': 'a' },
      }),
      /\/engines\/a\/job_timeout_seconds: an exec engine has no upstream jobs \(its command has timeout_seconds\)/,
    );
    assert.match(
      problem({ engines: { a: relay }, models: { 'videogen-2.0-text-to-video': [] } }),
      /\/models\/videogen-2.0-text-to-video/,
    );
    assert.match(
      problem({ models: { 'videogen-2.0-text-to-video': 'local' }, routing: { retries: 3 } }),
      /\/routing/,
    );
  });
});
