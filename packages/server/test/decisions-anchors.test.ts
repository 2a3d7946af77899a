/**
 * The comments that give a reason by pointing at docs/decisions.md (`docs/decisions.md#result-videos`) point at
 * a section that exists: renaming a heading without its comments fails here.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SOURCES = [
  'packages/server/src',
  'packages/server/test',
  'packages/server/dashboard',
  'packages/client/src',
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{Letter}\p{Number} _-]/gu, '')
    .replace(/ /g, '-');
}

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, folder), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && /\.(ts|js)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('docs/decisions.md', () => {
  it('has every section the code points at', async () => {
    const document = await readFile(join(ROOT, 'docs/decisions.md'), 'utf8');
    const anchors = new Set(
      [...document.matchAll(/^#{2,3} (.+)$/gm)].map((match) => anchorOf(match[1] ?? '')),
    );
    const pointers: string[] = [];
    for (const folder of SOURCES) {
      for (const file of await sourceFiles(folder)) {
        const text = await readFile(file, 'utf8');
        for (const match of text.matchAll(/decisions\.md#([a-z0-9-]+)/g))
          pointers.push(`${file.slice(ROOT.length)}: ${match[1]}`);
        assert.doesNotMatch(
          text,
          /decisions\.md §/,
          `${file.slice(ROOT.length)} points at a numbered section`,
        );
      }
    }
    assert.ok(pointers.length >= 20, `found only ${pointers.length} pointers`);
    const dangling = pointers.filter((pointer) => !anchors.has(pointer.split(': ')[1] ?? ''));
    assert.deepEqual(dangling, []);
  });
});
