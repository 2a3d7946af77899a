#!/usr/bin/env node
/**
 * `npm test` and `npm run test:unit`: runs the compiled `*.test.js` files of both packages with `node --test`.
 * Listed by name because `node --test <directory>` runs every .js file under a test/ folder as a test file,
 * helpers, fakes and conformance harnesses included, and Node 20 has no glob for `--test`.
 *
 *   node scripts/run-tests.mjs           every test file
 *   node scripts/run-tests.mjs --unit    only `*.unit.test.js`: no server process, PostgreSQL, browser or render
 *
 * Files run several at a time (VIDEOGEN_TEST_CONCURRENCY, default 3): most of them wait on sockets, child
 * processes and the database rather than on the CPU, and each takes its own ports, temporary directories and
 * PostgreSQL schemas. `node --test` sorts the files by path whatever order they are given in.
 * Other arguments go to `node --test` (a reporter, `--test-name-pattern`). The reporter is `spec` unless one is
 * given: it ends with the failing tests, each with its error, where TAP (the default off a terminal) leaves them
 * among thousands of lines, and a CI log that keeps only its tail would not show which test failed.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const PACKAGES = ['packages/client', 'packages/server'];

const args = process.argv.slice(2);
const unit = args.includes('--unit');
const passOn = args.filter((arg) => arg !== '--unit');
const suffix = unit ? '.unit.test.ts' : '.test.ts';

// Listed from the sources, so that a compiled file whose source was renamed or deleted never runs.
const files = PACKAGES.flatMap((pkg) =>
  readdirSync(join(root, pkg, 'test'))
    .filter((name) => name.endsWith(suffix))
    .map((name) => join(pkg, 'dist/test', name.replace(/\.ts$/, '.js'))),
);
const missing = files.filter((file) => !existsSync(join(root, file)));
if (missing.length > 0) {
  console.error(`not built: ${missing.join(', ')}; run \`npm run build\` first`);
  process.exit(1);
}

const concurrency = process.env.VIDEOGEN_TEST_CONCURRENCY || '3';
const reporter = passOn.some((arg) => arg.startsWith('--test-reporter')) ? [] : ['--test-reporter=spec'];
const child = spawn(
  process.execPath,
  ['--test', `--test-concurrency=${concurrency}`, ...reporter, ...passOn, ...files],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
});
