/** A spawned ffmpeg: its exit as a promise, the tail of its stderr for error messages, and a hard kill. */
import { type ChildProcess, spawn } from 'node:child_process';

const STDERR_KEEP_BYTES = 8192;
const STDERR_LINES_IN_MESSAGE = 6;

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  readonly spawnError?: Error;
}

export class FfmpegProcess {
  readonly child: ChildProcess;
  /** Resolves (never rejects) once the process has exited and its pipes are closed. */
  readonly exited: Promise<ProcessExit>;
  #stderr = '';
  #exit: ProcessExit | undefined;

  constructor(ffmpegPath: string, args: readonly string[], stdio: { stdin: boolean; stdout: boolean }) {
    this.child = spawn(ffmpegPath, args, {
      stdio: [stdio.stdin ? 'pipe' : 'ignore', stdio.stdout ? 'pipe' : 'ignore', 'pipe'],
      windowsHide: true,
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_KEEP_BYTES);
    });
    this.exited = new Promise((resolve) => {
      this.child.on('error', (error) => {
        // Without a pid the binary never ran; other errors (a failed kill) are followed by 'close'.
        if (this.child.pid === undefined) {
          this.#exit ??= { code: null, signal: null, spawnError: error };
          resolve(this.#exit);
        }
      });
      this.child.once('close', (code, signal) => {
        this.#exit ??= { code, signal };
        resolve(this.#exit);
      });
    });
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  /** SIGKILL: ffmpeg gets no chance to finish writing, which is what an abort wants. */
  kill(): void {
    if (this.#exit === undefined && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
    }
  }

  /** The last lines ffmpeg wrote to stderr, joined for a message. */
  stderrTail(): string {
    return this.#stderr
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter(Boolean)
      .slice(-STDERR_LINES_IN_MESSAGE)
      .join(' | ');
  }

  /** A one-line description of how the process ended, with its stderr tail. */
  describeExit(exit: ProcessExit): string {
    if (exit.spawnError) return `could not start ffmpeg: ${exit.spawnError.message}`;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    const tail = this.stderrTail();
    return tail ? `ffmpeg ${how}: ${tail}` : `ffmpeg ${how}`;
  }
}
