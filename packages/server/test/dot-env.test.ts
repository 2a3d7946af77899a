/** `.env` beside the command: read at start, a variable already set in the environment winning. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLI_PATH, serverEnv } from './helpers/server-process.js';

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-dot-env-'));
  await writeFile(join(dir, '.env'), '# as .env.example has it\nVIDEOGEN_PORT=port-from-dotenv\n');
});
after(() => rm(dir, { recursive: true, force: true }));

/** `videogen serve` in `dir`: a port that is not a number stops it at once with a configuration error. */
function serve(env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_PATH, 'serve'],
      { cwd: dir, env, timeout: 60_000, killSignal: 'SIGKILL' },
      (error, _stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr }),
    );
  });
}

describe('.env', () => {
  it('is read from the directory the command runs in', async () => {
    const { VIDEOGEN_PORT: _unset, ...env } = serverEnv(join(dir, 'data'));
    const result = await serve(env);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /configuration error: VIDEOGEN_PORT.*"port-from-dotenv"/);
  });

  it('does not override a variable already set', async () => {
    const result = await serve(serverEnv(join(dir, 'data'), { VIDEOGEN_PORT: 'port-from-environment' }));
    assert.equal(result.code, 1);
    assert.match(result.stderr, /configuration error: VIDEOGEN_PORT.*"port-from-environment"/);
  });
});
