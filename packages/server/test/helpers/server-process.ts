/** Runs the built `videogen` binary as a child process, the way an operator would. */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const CLI_PATH = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface ServerProcess {
  readonly child: ChildProcess;
  /** Its public URL, as it logs when serving (VIDEOGEN_PUBLIC_URL when that is set). */
  readonly url: string;
  /** Where it listens, as Fastify logs it: the same as `url` unless VIDEOGEN_PUBLIC_URL names another. */
  readonly listenUrl: string;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** The development key a first start prints, if it printed one. */
  printedKey(): string | undefined;
  /** The development key a first start prints, once printed (it follows the "serving" line). */
  firstKey(timeoutMs?: number): Promise<string>;
  /** Sends SIGTERM and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function serverEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    VIDEOGEN_DATA_DIR: dataDir,
    VIDEOGEN_HOST: '127.0.0.1',
    VIDEOGEN_PORT: '0',
    VIDEOGEN_ALLOW_PRIVATE_NETWORKS: 'true',
    VIDEOGEN_LOG_LEVEL: 'info',
    ...extra,
  };
}

/** Starts `videogen serve` (or the command in `args`) and resolves once it logs the URL it serves. */
export async function startServer(
  env: NodeJS.ProcessEnv,
  timeoutMs = 30_000,
  args: readonly string[] = ['serve'],
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [CLI_PATH, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const [url, listenUrl] = await new Promise<[string, string]>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start in time:\n${out}\n${err}`)),
      timeoutMs,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"videogen is serving"/.exec(out);
      const listening = /"msg":"Server listening at (http:\/\/[^"]+)"/.exec(out);
      if (match?.[1] && listening?.[1]) {
        clearTimeout(timer);
        resolve([match[1], listening[1]]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before serving:\n${out}\n${err}`));
    });
  });
  return {
    child,
    url,
    listenUrl,
    stdout: () => out,
    stderr: () => err,
    printedKey: () => /(vg_dev_[0-9A-Za-z]{32,})/.exec(out)?.[1],
    firstKey: (timeoutMs = 30_000) =>
      new Promise<string>((resolve, reject) => {
        const found = () => /(vg_dev_[0-9A-Za-z]{32,})/.exec(out)?.[1];
        const check = () => {
          const key = found();
          if (!key) return;
          clearTimeout(timer);
          child.stdout?.off('data', check);
          resolve(key);
        };
        const timer = setTimeout(() => {
          child.stdout?.off('data', check);
          reject(new Error(`no key printed in time:\n${out}`));
        }, timeoutMs);
        child.stdout?.on('data', check);
        check();
      }),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      // 'close' rather than 'exit': the log lines a test reads afterwards must all have arrived.
      const exited = once(child, 'close');
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

/** Runs a `videogen` subcommand to completion. */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI_PATH, ...args], { env });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number };
    return { stdout: failed.stdout ?? '', stderr: failed.stderr ?? '', code: failed.code ?? 1 };
  }
}
