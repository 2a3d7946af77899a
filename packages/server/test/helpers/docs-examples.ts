/**
 * The engines-file examples of docs/engines.md, as written there: each is the YAML block that follows an
 * `<!-- example: NAME … -->` line. Tests run them against fakes, changing only what points at a real machine
 * (a server's address, `python generate.py`, a directory), so an example that stops working fails the suite.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

const ENGINES_DOC = fileURLToPath(new URL('../../../../../docs/engines.md', import.meta.url));

export interface EnginesFileExample {
  engines: Record<string, Record<string, unknown>>;
  models: Record<string, string>;
}

export async function docsExample(name: string): Promise<EnginesFileExample> {
  const text = await readFile(ENGINES_DOC, 'utf8');
  const marker = text.indexOf(`<!-- example: ${name} `);
  if (marker < 0) throw new Error(`docs/engines.md has no example named ${name}`);
  const block = /```yaml\n([\s\S]*?)```/.exec(text.slice(marker));
  if (!block?.[1]) throw new Error(`docs/engines.md: the example ${name} has no yaml block`);
  return parseYaml(block[1]) as EnginesFileExample;
}
