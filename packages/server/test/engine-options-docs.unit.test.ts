/**
 * Every engine type has its page in docs/engines/, naming every option of its type (issue 35's drift, held as the
 * error catalogue is): each key of a type's options schema appears in backticks on docs/engines/<type>.md, or, for
 * the keys several types share (the hosted providers', the callbacks'), in the section of the index
 * (docs/engines/README.md) that documents them once. Each page has a worked example, and the test its marker names
 * runs it by that name.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { TObject } from '@sinclair/typebox';
import { CallbackOptionFields } from '../src/engines/callbacks/callback-options.js';
import { EngineOptionsSchema } from '../src/engines/engine-types.js';
import { HostedOptionFields } from '../src/engines/hosted/hosted-options.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const ENGINES_DOCS = join(ROOT, 'docs/engines');
const SHARED_SECTION = 'Options every engine shares';

/** The text from the heading `## <starts>` to the next heading of its level. */
function section(page: string, starts: string): string {
  const at = page.indexOf(`\n## ${starts}`);
  assert.notEqual(at, -1, `docs/engines/README.md has a section "## ${starts}"`);
  const end = page.indexOf('\n## ', at + 1);
  return end === -1 ? page.slice(at) : page.slice(at, end);
}

function documents(text: string, key: string): boolean {
  return new RegExp(`\`${key}(\`|:|=| )`).test(text);
}

const engineTypes = (EngineOptionsSchema.anyOf as TObject[]).map((schema) => ({
  type: (schema.properties.type as unknown as { const: string }).const,
  keys: Object.keys(schema.properties).filter((key) => key !== 'type'),
}));

describe('engine options and their docs', () => {
  it("names every option of every engine type on that type's page, the shared ones in the index", async () => {
    const shared = section(await readFile(join(ENGINES_DOCS, 'README.md'), 'utf8'), SHARED_SECTION);
    const sharedKeys = new Set([...Object.keys(HostedOptionFields), ...Object.keys(CallbackOptionFields)]);
    const missing: string[] = [];
    assert.ok(engineTypes.length >= 10, 'every engine type is in the union');
    for (const { type, keys } of engineTypes) {
      const page = await readFile(join(ENGINES_DOCS, `${type}.md`), 'utf8');
      for (const key of keys) {
        if (!documents(sharedKeys.has(key) ? shared : page, key)) missing.push(`${type}.${key}`);
      }
    }
    for (const key of sharedKeys) if (!documents(shared, key)) missing.push(`shared.${key}`);
    assert.deepEqual(missing, [], 'options no docs page names');
  });

  it('has one page per engine type and no other, each with a worked example its test runs by name', async () => {
    const pages = (await readdir(ENGINES_DOCS)).filter(
      (page) => page.endsWith('.md') && page !== 'README.md',
    );
    assert.deepEqual(pages.sort(), engineTypes.map(({ type }) => `${type}.md`).sort());
    const unrun: string[] = [];
    for (const page of pages) {
      const text = await readFile(join(ENGINES_DOCS, page), 'utf8');
      const examples = [...text.matchAll(/<!-- example: ([\w-]+) \((test\/[\w.-]+\.test\.ts)/g)];
      if (examples.length === 0) unrun.push(`${page} has no worked example`);
      for (const [, name, test] of examples) {
        const file = join(ROOT, 'packages/server', test as string);
        const runs = existsSync(file) && (await readFile(file, 'utf8')).includes(`'${name}'`);
        if (!runs) unrun.push(`${page}: ${test} does not run the example ${name}`);
      }
    }
    assert.deepEqual(unrun, []);
  });
});
