/**
 * A real `videogen serve` for the SDK's tests: the built binary of the server package, on a free port of
 * 127.0.0.1, with its data in a temporary directory. The URL and the first development key are read from
 * what a first start prints.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** From dist/test/helpers/ up to packages/, then the server's bin entry. */
export const VIDEOGEN_BIN = fileURLToPath(new URL('../../../../server/bin/videogen.js', import.meta.url));

export interface TestServer {
  readonly url: string;
  /** The development key the first start printed. */
  readonly apiKey: string;
  readonly dataDir: string;
  readonly env: NodeJS.ProcessEnv;
  /** Runs another `videogen` command against the same data directory; answers its stdout. */
  cli(args: readonly string[]): Promise<string>;
  stop(): Promise<void>;
}

export async function startServer(
  extraEnv: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'videogen-client-test-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    VIDEOGEN_DATA_DIR: dataDir,
    VIDEOGEN_HOST: '127.0.0.1',
    VIDEOGEN_PORT: '0',
    VIDEOGEN_ALLOW_PRIVATE_NETWORKS: 'true',
    VIDEOGEN_LOG_LEVEL: 'info',
    ...extraEnv,
  };
  const child: ChildProcess = spawn(process.execPath, [VIDEOGEN_BIN, 'serve'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const started = await new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start in time:\n${out}\n${err}`)),
      timeoutMs,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"videogen is serving"/.exec(out)?.[1];
      const apiKey = /(vg_dev_[0-9A-Za-z]{32,})/.exec(out)?.[1];
      if (url && apiKey) {
        clearTimeout(timer);
        resolve({ url, apiKey });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before serving:\n${out}\n${err}`));
    });
  });
  return {
    ...started,
    dataDir,
    env,
    async cli(args) {
      const { stdout } = await run(process.execPath, [VIDEOGEN_BIN, ...args], { env });
      return stdout;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const closed = once(child, 'close');
        child.kill('SIGTERM');
        await closed;
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
