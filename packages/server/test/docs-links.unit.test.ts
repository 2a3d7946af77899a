/**
 * Links into the docs resolve, as fastify's test/internals/errors.test.js holds its errors to its docs:
 * - every `docs/<page>.md`, with or without `#anchor`, that the code names (the packages' src, test, bench and
 *   scripts, the dashboard, the root's scripts) is a page, and its anchor a heading of that page;
 * - every relative link of README.md and docs/ (`[text](page.md#anchor)`, `[text](#anchor)`, images) reaches a
 *   file, and its anchor a heading of the page it names;
 * - every path the docs cite as code in backticks (`packages/server/src/domain/errors.ts`,
 *   `store/operations/claim-task.ts`, `test/pg-store.test.ts`) is a file, read from the root, from a package, its
 *   src/ or bench/, or engines/ (whose folders the engines' pages name alone).
 * Anchors are GitHub's, made by github-slugger as GitHub makes them: lower case, spaces as hyphens, punctuation
 * dropped, a repeated heading's anchor numbered (`-1`).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CODE_FOLDERS = [
  'packages/server/src',
  'packages/server/test',
  'packages/server/bench',
  'packages/server/scripts',
  'packages/server/dashboard',
  'packages/client/src',
  'packages/client/test',
  'scripts',
];
/** Where a path the docs cite in backticks may be read from, besides the citing page's own folder. */
const CODE_ROOTS = [
  '',
  'packages/server/',
  'packages/server/src/',
  'packages/server/src/engines/',
  'packages/server/bench/',
  'packages/client/',
  'packages/client/src/',
];
/** A path with at least one folder, ending in a file type of this repository: `src/x.ts`, `test/fakes/y.ts`. */
const CITED_PATH = /^(?:\.{1,2}\/)?[\w@.-]+(?:\/[\w@.-]+)+\.(?:ts|js|mjs|json|md|sh|sql|ya?ml|html|css)$/;

function filesUnder(folder: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(join(ROOT, folder))) return [];
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === 'dist' ? [] : filesUnder(path, keep);
    return keep(entry.name) ? [path] : [];
  });
}

const pages = ['README.md', ...filesUnder('docs', (name) => name.endsWith('.md'))];
const codeFiles = CODE_FOLDERS.flatMap((folder) => filesUnder(folder, (name) => /\.(ts|js|mjs)$/.test(name)));

/** The lines of a markdown page outside fenced code blocks, with their numbers. */
function proseLines(page: string): { line: string; at: string }[] {
  let fenced = false;
  return readFileSync(join(ROOT, page), 'utf8')
    .split('\n')
    .flatMap((line, index) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return [];
      }
      return fenced ? [] : [{ line, at: `${page}:${index + 1}` }];
    });
}

const anchorsByPage = new Map<string, Set<string>>();

/** The anchors of a page: its headings' slugs, and any `<a id>` or `<a name>`. */
function anchorsOf(page: string): Set<string> {
  const known = anchorsByPage.get(page);
  if (known) return known;
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const { line } of proseLines(page)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    // A heading's anchor is made from its text as shown: a link in it shows its text only.
    if (heading) anchors.add(slugger.slug((heading[1] ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')));
    for (const named of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(named[1] as string);
  }
  anchorsByPage.set(page, anchors);
  return anchors;
}

/** Why a link to `page` (a path from the root) and `anchor` does not resolve, or undefined when it does. */
function brokenLink(page: string, anchor: string | undefined): string | undefined {
  if (!existsSync(join(ROOT, page))) return `${page} does not exist`;
  if (anchor === undefined || !page.endsWith('.md')) return undefined;
  return anchorsOf(page).has(anchor) ? undefined : `${page} has no heading #${anchor}`;
}

describe('links into the docs', () => {
  it('reads the pages and the code (a reader that found nothing would pass everything)', () => {
    assert.ok(pages.includes('docs/decisions.md') && pages.length >= 10, pages.join(', '));
    assert.ok(codeFiles.includes('packages/server/src/service.ts') && codeFiles.length > 300);
    assert.ok(
      anchorsOf('docs/decisions.md').has('outbound-http-on-undici-7'),
      'a heading with digits and spaces',
    );
    assert.ok(anchorsOf('docs/decisions.md').has('the-aws-sdks-nodejs-20-warning'), 'punctuation dropped');
  });

  it('from the code: each docs/<page>.md is a page and each #anchor one of its headings', () => {
    const links: string[] = [];
    const broken: string[] = [];
    for (const file of codeFiles) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      // Not preceded by a path or a word: `owner/repo/docs/x.md` is another repository's page.
      for (const match of text.matchAll(/(?<![\w./-])(?:\.\.\/)*(docs\/[\w./-]+?\.md)(?:#([\w-]+))?/g)) {
        const [, page = '', anchor] = match;
        links.push(`${file}: ${page}`);
        const why = brokenLink(page, anchor);
        if (why) broken.push(`${file}: ${why}`);
      }
      if (/docs\/[\w-]+\.md §/.test(text)) broken.push(`${file} points at a numbered section`);
    }
    assert.ok(links.length >= 60, `found only ${links.length} links`);
    assert.deepEqual(broken, []);
  });

  it('from README.md and docs/: each relative link reaches a file, and each #anchor a heading of its page', () => {
    const links: string[] = [];
    const broken: string[] = [];
    for (const page of pages) {
      for (const { line, at } of proseLines(page)) {
        // Text in backticks is code, not a link.
        for (const match of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          const url = match[1] as string;
          if (/^[a-z][a-z0-9+.-]*:/i.test(url)) continue;
          const [path = '', anchor] = url.split('#');
          links.push(`${at}: ${url}`);
          const why = brokenLink(path === '' ? page : normalize(join(dirname(page), path)), anchor);
          if (why) broken.push(`${at}: ${url}: ${why}`);
        }
      }
    }
    assert.ok(links.length >= 100, `found only ${links.length} links`);
    assert.deepEqual(broken, []);
  });

  it('from docs/: each path cited as code in backticks is a file', () => {
    const cited: string[] = [];
    const missing: string[] = [];
    for (const page of pages) {
      for (const { line, at } of proseLines(page)) {
        for (const match of line.matchAll(/`([^`\s]+)`/g)) {
          const path = match[1] as string;
          if (!CITED_PATH.test(path)) continue;
          cited.push(`${at}: ${path}`);
          const found =
            CODE_ROOTS.some((root) => existsSync(join(ROOT, root, path))) ||
            existsSync(join(ROOT, dirname(page), path));
          if (!found) missing.push(`${at}: ${path}`);
        }
      }
    }
    assert.ok(cited.length >= 40, `found only ${cited.length} paths`);
    assert.deepEqual(missing, []);
  });
});
