/**
 * Every engine type's folder has the same parts under the same names (docs/engines/README.md, "Adding an engine
 * type"): `<type>-engine-type.ts`, `<type>-options.ts`, `<type>-engine.ts` and `<type>-capabilities.ts`, and for
 * a type whose work is a job on another server also `<type>-request.ts` and `<type>-job.ts`. The registry
 * (engines/engine-types.ts) lists every folder that has an engine type, and only those.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ENGINE_TYPES } from '../src/engines/engine-types.js';

const ENGINES = fileURLToPath(new URL('../../src/engines/', import.meta.url));

const EVERY_TYPE = ['engine-type', 'options', 'engine', 'capabilities'];
const WITH_UPSTREAM_JOBS = ['request', 'job'];

describe('engine folders', () => {
  it('give every engine type the same files, named for the type', () => {
    const missing: string[] = [];
    for (const engineType of ENGINE_TYPES) {
      const { type } = engineType;
      const parts = engineType.hasUpstreamJobs ? [...EVERY_TYPE, ...WITH_UPSTREAM_JOBS] : EVERY_TYPE;
      for (const part of parts) {
        const file = `${type}/${type}-${part}.ts`;
        if (!existsSync(join(ENGINES, file))) {
          const why = WITH_UPSTREAM_JOBS.includes(part) ? ' (its work is an upstream job)' : '';
          missing.push(`engines/${file}${why}`);
        }
      }
    }
    assert.deepEqual(
      missing,
      [],
      `missing in packages/server/src/engines (see docs/engines/README.md, "Adding an engine type"): ${missing.join(', ')}`,
    );
  });

  it('list in the registry every folder that has an engine type', () => {
    const folders = readdirSync(ENGINES, { withFileTypes: true })
      .filter(
        (entry) =>
          entry.isDirectory() && existsSync(join(ENGINES, entry.name, `${entry.name}-engine-type.ts`)),
      )
      .map((entry) => entry.name)
      .sort();
    const listed = ENGINE_TYPES.map((engineType) => engineType.type).sort();
    assert.deepEqual(
      folders,
      listed,
      'the folders with a <type>-engine-type.ts are the types engine-types.ts lists',
    );
  });
});
