/**
 * Every option of every engine type is in its docs (issue 35's drift, held as the error catalogue is): each key of
 * a type's options schema appears in backticks in that type's section of docs/engines.md, or, for the keys several
 * types share (the hosted providers', the callbacks'), in the section that documents them once.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { TObject } from '@sinclair/typebox';
import { CallbackOptionFields } from '../src/engines/callbacks/callback-options.js';
import { EngineOptionsSchema } from '../src/engines/engines-file.js';
import { HostedOptionFields } from '../src/engines/hosted/hosted-options.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** The text from the heading `## <starts>` to the next heading of its level. */
function section(page: string, starts: string): string {
  const at = page.indexOf(`\n## ${starts}`);
  assert.notEqual(at, -1, `docs/engines.md has a section "## ${starts}"`);
  const end = page.indexOf('\n## ', at + 1);
  return end === -1 ? page.slice(at) : page.slice(at, end);
}

function documents(text: string, key: string): boolean {
  return new RegExp(`\`${key}(\`|:|=| )`).test(text);
}

describe('engine options and their docs', () => {
  it("names every option of every engine type in that type's section", async () => {
    const page = await readFile(join(ROOT, 'docs/engines.md'), 'utf8');
    const shared = new Map<string, string>([
      ...Object.keys(HostedOptionFields).map((key): [string, string] => [key, 'Hosted providers']),
      ...Object.keys(CallbackOptionFields).map((key): [string, string] => [key, 'Hosted providers']),
    ]);
    const missing: string[] = [];
    const types = EngineOptionsSchema.anyOf as TObject[];
    assert.ok(types.length >= 10, 'every engine type is in the union');
    for (const schema of types) {
      const type = (schema.properties.type as unknown as { const: string }).const;
      if (type === 'local') continue;
      const own = section(page, `\`${type}\``);
      for (const key of Object.keys(schema.properties)) {
        if (key === 'type') continue;
        const where = shared.get(key);
        const text = where === undefined ? own : `${own}\n${section(page, where)}`;
        if (!documents(text, key)) missing.push(`${type}.${key}`);
      }
    }
    assert.deepEqual(missing, [], 'options no docs section names');
  });
});
