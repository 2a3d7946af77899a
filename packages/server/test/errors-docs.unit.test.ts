/**
 * The error catalogue, held to its docs (as fastify's test/internals/errors.test.js holds its errors): every code
 * of domain/errors.ts is in docs/api.md's table of errors, on the row of its HTTP status and with its type there
 * (http/error-statuses.ts), and the table names no code the catalogue does not have.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_CATALOGUE, type ErrorCode } from '../src/domain/errors.js';
import { ERROR_STATUSES } from '../src/http/error-statuses.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** Fields of a task or an error answer that the table's rows name. */
const FIELDS = ['callback_url', 'request_id'];

/** The rows of docs/api.md's "Errors" table: status, type, and the lower-case names in backticks of its codes. */
async function documentedErrors(): Promise<{ status: number; type: string; names: Set<string> }[]> {
  const api = await readFile(join(ROOT, 'docs/api.md'), 'utf8');
  const section = api.slice(api.indexOf('\n## Errors\n'));
  const end = section.indexOf('\n## ', 1);
  const rows = (end === -1 ? section : section.slice(0, end))
    .split('\n')
    .map((line) => /^\| (\d{3}) \| `([a-z_]+)` \| (.*) \|$/.exec(line))
    .filter((match) => match !== null);
  return rows.map(([, status = '', type = '', codes = '']) => ({
    status: Number(status),
    type,
    names: new Set([...codes.matchAll(/`([a-z]+(?:_[a-z]+)*)`/g)].map((match) => match[1] ?? '')),
  }));
}

describe('the error catalogue and its docs', () => {
  it("documents every code on its status's row, with its type, and no code the catalogue lacks", async () => {
    const rows = await documentedErrors();
    assert.ok(rows.length > 10, `docs/api.md has its table of errors (found ${rows.length} rows)`);
    for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
      const { status, type } = ERROR_STATUSES[code];
      const row = rows.find((candidate) => candidate.status === status && candidate.names.has(code));
      assert.ok(row, `${code} (${status}) is on the ${status} row of docs/api.md#errors`);
      assert.equal(row.type, type, `${code}'s type`);
    }
    // Names with an underscore are codes, types or the fields the rows mention; a bare word may be a field too.
    const known = new Set([...Object.keys(ERROR_CATALOGUE), ...rows.map((row) => row.type), ...FIELDS]);
    const unknown = rows.flatMap((row) =>
      [...row.names].filter((name) => name.includes('_') && !known.has(name)),
    );
    assert.deepEqual(unknown, [], 'codes in docs/api.md#errors that the catalogue does not have');
  });
});
