/**
 * `.env` in the directory the command runs in, read into the environment when it is there (Node.js's own
 * `process.loadEnvFile`): what `.env.example` describes, copied to `.env`, takes effect without a tool of its
 * own. A variable already set in the environment wins over the file.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

export function loadDotEnv(directory = process.cwd()): void {
  const path = resolve(directory, '.env');
  if (existsSync(path)) process.loadEnvFile(path);
}
