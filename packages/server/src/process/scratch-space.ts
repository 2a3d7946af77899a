/**
 * The temporary files of one server process (uploads being received, inline assets on their way to storage,
 * each run's downloads and render) live in one folder of its own under the OS temp directory, named after its
 * owner: `videogen-scratch-<pid>-<host>-<random>`. The name is the lock: a process killed with SIGKILL cannot
 * clean up after itself, so every start removes the folders whose owner, on this host, no longer runs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'videogen-scratch-';
const FOLDER_NAME = /^videogen-scratch-(\d+)-([0-9a-f]{8})-[0-9a-f]{8}$/;

/**
 * Folders of this process, open or being opened. A folder named with this process's pid but not held here was
 * left by an earlier process that had the same pid (a container's pid 1, restarted).
 */
const held = new Set<string>();

/**
 * Another host's processes cannot be checked from here: a temp directory shared between machines or containers
 * keeps their folders.
 */
function hostTag(): string {
  return createHash('sha256').update(hostname()).digest('hex').slice(0, 8);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class ScratchSpace {
  /** The process's own folder. */
  readonly path: string;

  private constructor(path: string) {
    this.path = path;
  }

  /**
   * Removes the folders left by dead processes of this host under `root` (the OS temp directory by default),
   * telling `onRemoved` of each, then makes this process's own.
   */
  static async open(
    options: { root?: string; onRemoved?: (path: string) => void } = {},
  ): Promise<ScratchSpace> {
    const root = options.root ?? tmpdir();
    const path = join(root, `${PREFIX}${process.pid}-${hostTag()}-${randomBytes(4).toString('hex')}`);
    held.add(path);
    try {
      await sweep(root, options.onRemoved);
      await mkdir(path, { mode: 0o700 });
    } catch (error) {
      held.delete(path);
      throw error;
    }
    return new ScratchSpace(path);
  }

  /** A new folder for one job, named `<prefix><random>`; the job removes it when it ends. */
  makeDir(prefix: string): Promise<string> {
    return mkdtemp(join(this.path, prefix));
  }

  async close(): Promise<void> {
    await rm(this.path, { recursive: true, force: true });
    held.delete(this.path);
  }
}

async function sweep(root: string, onRemoved: ((path: string) => void) | undefined): Promise<void> {
  const host = hostTag();
  const names = await readdir(root);
  await Promise.all(
    names.map(async (name) => {
      const match = FOLDER_NAME.exec(name);
      if (!match || match[2] !== host) return;
      const path = join(root, name);
      const pid = Number(match[1]);
      const alive = pid === process.pid ? held.has(path) : isRunning(pid);
      if (alive) return;
      await rm(path, { recursive: true, force: true });
      onRemoved?.(path);
    }),
  );
}
