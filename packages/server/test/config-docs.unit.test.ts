/**
 * The server's settings, held to their docs (as fastify holds its errors to its docs): every `VIDEOGEN_*`
 * variable that config.ts reads is in `.env.example` and in docs/deployment.md, and `.env.example` names no
 * variable the server's code does not read (ffmpeg's paths and the CLI's are read outside config.ts), so that
 * neither can drift from the code.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** The `VIDEOGEN_*` names in `text`, each once. */
function variablesIn(text: string): Set<string> {
  return new Set(text.match(/\bVIDEOGEN_[A-Z0-9_]*[A-Z0-9]\b/g) ?? []);
}

async function read(path: string): Promise<string> {
  return readFile(join(ROOT, path), 'utf8');
}

/** Every `VIDEOGEN_*` name the server's source mentions. */
async function variablesInSource(): Promise<Set<string>> {
  const src = join(ROOT, 'packages/server/src');
  const files = (await readdir(src, { recursive: true })).filter((file) => file.endsWith('.ts'));
  const texts = await Promise.all(files.map((file) => readFile(join(src, file), 'utf8')));
  return variablesIn(texts.join('\n'));
}

describe('the settings and their docs', () => {
  it('names every variable config.ts reads in .env.example and docs/deployment.md, and .env.example no other', async () => {
    const inConfig = variablesIn(await read('packages/server/src/config.ts'));
    assert.ok(inConfig.size > 20, `config.ts reads its variables (found ${inConfig.size})`);
    const example = variablesIn(await read('.env.example'));
    const deployment = variablesIn(await read('docs/deployment.md'));
    assert.deepEqual(
      [...inConfig].filter((name) => !example.has(name)),
      [],
      'missing from .env.example',
    );
    assert.deepEqual(
      [...inConfig].filter((name) => !deployment.has(name)),
      [],
      'missing from docs/deployment.md',
    );
    const inSource = await variablesInSource();
    assert.deepEqual(
      [...example].filter((name) => !inSource.has(name)),
      [],
      'in .env.example, read by nobody',
    );
  });
});
