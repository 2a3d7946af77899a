/**
 * The engines-file examples of the engines' pages (docs/engines/), as written there: each is the YAML block that
 * follows an `<!-- example: NAME … -->` line, its name unique across the pages. Tests run them against fakes,
 * changing only what points at a real machine (a server's address, `python generate.py`, a directory), so an
 * example that stops working fails the suite.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

const ENGINES_DOCS = fileURLToPath(new URL('../../../../../docs/engines/', import.meta.url));

export interface EnginesFileExample {
  engines: Record<string, Record<string, unknown>>;
  models: Record<string, string>;
}

export async function docsExample(name: string): Promise<EnginesFileExample> {
  const pages = (await readdir(ENGINES_DOCS)).filter((page) => page.endsWith('.md'));
  const found: { page: string; text: string }[] = [];
  for (const page of pages) {
    const text = await readFile(join(ENGINES_DOCS, page), 'utf8');
    const marker = text.indexOf(`<!-- example: ${name} `);
    if (marker >= 0) found.push({ page, text: text.slice(marker) });
  }
  const [first, ...others] = found;
  if (!first) throw new Error(`no page of docs/engines/ has an example named ${name}`);
  if (others.length > 0)
    throw new Error(`docs/engines/: ${found.map((f) => f.page).join(', ')} all name ${name}`);
  const block = /```yaml\n([\s\S]*?)```/.exec(first.text);
  if (!block?.[1]) throw new Error(`docs/engines/${first.page}: the example ${name} has no yaml block`);
  return parseYaml(block[1]) as EnginesFileExample;
}
