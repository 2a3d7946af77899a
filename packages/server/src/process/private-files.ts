/**
 * The data directory and the SQLite store hold webhook signing secrets, the result-link secret and key hashes:
 * only the server's user may read them. They are created 0700 (directories) and 0600 (the database, whose
 * `-wal` and `-shm` files SQLite creates with the database's own mode), and existing ones with looser modes
 * are tightened, with a warning.
 */
import { constants } from 'node:fs';
import { chmod, mkdir, open, stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';

const PRIVATE_DIRECTORY = 0o700;
const PRIVATE_FILE = 0o600;
/** Files SQLite keeps beside the database. */
const SQLITE_COMPANIONS = ['-wal', '-shm', '-journal'] as const;

/** The SQLite file `VIDEOGEN_DATABASE_URL` names, as `openStore` reads it; undefined for PostgreSQL or memory. */
export function sqliteFile(databaseUrl: string): string | undefined {
  if (/^postgres(ql)?:\/\//i.test(databaseUrl)) return undefined;
  const path = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : databaseUrl;
  return path === '' || path === ':memory:' ? undefined : resolve(path);
}

function isWithin(directory: string, path: string): boolean {
  const inside = relative(directory, path);
  return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside));
}

function modeOf(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

/** The mode of `path` when it exists. */
async function existingMode(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function tighten(path: string, mode: number, wanted: number, warn: (message: string) => void) {
  if ((mode & 0o077) === 0) return;
  await chmod(path, wanted);
  warn(
    `${path} was open to other users (${modeOf(mode)}); made it ${modeOf(wanted)}: it holds videogen's ` +
      'secrets (webhook signing secrets, API key hashes)',
  );
}

/**
 * Makes the data directory (when the store, or the file storage if given, is in it) and the SQLite database
 * private to this user, creating what is missing; `warn` hears of every existing one that had to be tightened.
 */
export async function securePrivateFiles(
  config: Pick<Config, 'dataDir' | 'databaseUrl'> & Partial<Pick<Config, 'storageUrl'>>,
  warn: (message: string) => void,
): Promise<void> {
  if (process.platform === 'win32') return;
  const database = sqliteFile(config.databaseUrl);
  const storageRoot = config.storageUrl?.startsWith('file:') ? fileURLToPath(config.storageUrl) : undefined;
  const inDataDir = [database, storageRoot].some((path) => path && isWithin(config.dataDir, path));
  if (inDataDir) {
    const mode = await existingMode(config.dataDir);
    if (mode === undefined) await mkdir(config.dataDir, { recursive: true, mode: PRIVATE_DIRECTORY });
    else await tighten(config.dataDir, mode, PRIVATE_DIRECTORY, warn);
  }
  if (!database) return;
  // A directory of the operator's choosing outside the data directory is made when missing, never changed.
  await mkdir(dirname(database), { recursive: true, mode: PRIVATE_DIRECTORY });
  const mode = await existingMode(database);
  if (mode === undefined) {
    // Created empty (SQLite starts a new database in an empty file) so that it is private from its first byte.
    const created = await open(database, constants.O_WRONLY | constants.O_CREAT, PRIVATE_FILE);
    await created.close();
  } else {
    await tighten(database, mode, PRIVATE_FILE, warn);
  }
  for (const suffix of SQLITE_COMPANIONS) {
    const companion = `${database}${suffix}`;
    const companionMode = await existingMode(companion);
    if (companionMode !== undefined) await tighten(companion, companionMode, PRIVATE_FILE, warn);
  }
}
