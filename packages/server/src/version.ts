/** The server's version, from its package.json (read once; `dist/src/version.js` sits two levels below it). */
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export const VERSION: string = manifest.version;
