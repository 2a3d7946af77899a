/**
 * A run's scratch directory, its first engine's directory already inside. Worker slots make the next one while
 * they wait for work (worker-pool.ts), so that a claimed task reaches its engine without waiting on the file
 * system: each awaited file operation hands the CPU back, and on a busy machine getting it again took
 * milliseconds; the two between claim and engine (the run's directory, then the engine's) were 17 of the 20 ms
 * a task took from its claim to its engine in a loaded run.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';

export class RunDirectory {
  readonly path: string;
  /** The engines whose directories exist (the first from the start). */
  readonly #made = new Set([1]);

  private constructor(path: string) {
    this.path = path;
  }

  /** A new directory for one run under `parent`. */
  static async make(parent: string): Promise<RunDirectory> {
    const path = await mkdtemp(join(parent, 'task-'));
    try {
      await mkdir(engineDirectory(path, 1));
    } catch (error) {
      await rm(path, { recursive: true, force: true });
      throw error;
    }
    return new RunDirectory(path);
  }

  /** The working directory of the `n`th engine the run tries (from 1), made when first asked for. */
  async engine(n: number): Promise<string> {
    const path = engineDirectory(this.path, n);
    if (!this.#made.has(n)) {
      await mkdir(path);
      this.#made.add(n);
    }
    return path;
  }

  remove(): Promise<void> {
    return rm(this.path, { recursive: true, force: true });
  }
}

function engineDirectory(run: string, n: number): string {
  return join(run, `engine-${n}`);
}
