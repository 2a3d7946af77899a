import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MODEL_IDS } from '../src/domain/models.js';
import {
  defaultEnginesConfig,
  EnginesFileError,
  loadEnginesFile,
  parseEnginesConfig,
} from '../src/engines/engines-file.js';

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
    assert.deepEqual([...new Set(config.models.values())], ['local']);
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
      'videogen-2.0-text-to-video': 'sglang',
      'videogen-2.0-image-to-video': 'wan',
      'videogen-2.0-fast-text-to-video': 'local',
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

  it('names the file and the place of every problem', async () => {
    assert.match(
      problem({ engines: { x: { type: 'relay', base_url: 'http://a', api_key: '${KEY}' } }, models: {} }),
      /engines\.yaml: \/engines\/x\/api_key: the environment variable KEY is not set/,
    );
    assert.match(
      problem({ models: { 'videogen-3-text': 'local' } }),
      /\/models\/videogen-3-text: not a model ID/,
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
});
