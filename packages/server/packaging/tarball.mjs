#!/usr/bin/env node
/**
 * The server package's `prepack` and `postpack` (`npm pack -w videogen`, `npm publish -w videogen`).
 *
 *   node packaging/tarball.mjs prepare   builds both packages; puts a packed copy of @videogen/client in
 *                                        packages/server/node_modules and writes npm-shrinkwrap.json beside the
 *                                        package.json, both of which npm's pack then takes into the tarball
 *   node packaging/tarball.mjs clean     removes the copy and the shrinkwrap again
 *
 * @videogen/client is ours and on no registry, so the server's tarball carries it (`bundleDependencies`):
 * installing the tarball asks the registry only for public packages. In the workspace the client is a link in
 * the root node_modules, which npm does not bundle (it bundles only what sits in the package's own
 * node_modules), hence a real copy, made from the client's own tarball so that it holds exactly what the client
 * publishes. The copy would shadow the workspace link while it exists, so `clean` removes it, and `prepare`
 * replaces one that a failed pack left behind.
 *
 * The shrinkwrap is the workspace's package-lock.json cut to the server's runtime dependencies: an install of
 * the tarball (global ones included) gets the tree CI tested, with the versions the workspace's `overrides` hold
 * (cookie 1 and content-disposition 2, which run on Node.js 20.18; see docs/deployment.md#nodejs-versions).
 * npm applies `overrides` only in the project being installed, never from a dependency, so without it an
 * install would take the ES-module-only majors. Every entry of the lock that is not dev-only is reachable from
 * the server's dependencies (the client has none, the workspace root no runtime ones), at the same path it
 * has in the workspace, where the server resolves from the root node_modules as an installed package does.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const rootDir = join(serverDir, '..', '..');
const clientDir = join(serverDir, '..', 'client');
const bundledDir = join(serverDir, 'node_modules', '@videogen', 'client');
const shrinkwrapPath = join(serverDir, 'npm-shrinkwrap.json');

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

// Run as an npm script, npm_execpath is the npm that runs it; by hand, the `npm` on the PATH.
function npm(args, cwd) {
  const execPath = process.env.npm_execpath;
  return execPath
    ? execFileSync(process.execPath, [execPath, ...args], { cwd, encoding: 'utf8' })
    : execFileSync('npm', args, { cwd, encoding: 'utf8' });
}

function clean() {
  rmSync(shrinkwrapPath, { force: true });
  rmSync(join(serverDir, 'node_modules', '@videogen'), { recursive: true, force: true });
  try {
    rmdirSync(join(serverDir, 'node_modules'));
  } catch {
    // Not empty (or absent): something else lives there; leave it.
  }
}

function bundleClient() {
  const scratch = mkdtempSync(join(tmpdir(), 'videogen-pack-'));
  try {
    const [packed] = JSON.parse(
      npm(['pack', '--json', '--ignore-scripts', '--pack-destination', scratch], clientDir),
    );
    mkdirSync(bundledDir, { recursive: true });
    execFileSync('tar', ['-xzf', join(scratch, packed.filename), '-C', bundledDir, '--strip-components=1']);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function writeShrinkwrap() {
  const lock = readJson(join(rootDir, 'package-lock.json'));
  const server = readJson(join(serverDir, 'package.json'));
  const client = readJson(join(bundledDir, 'package.json'));
  const ours = new Set(['node_modules/videogen', 'node_modules/@videogen/client']);
  const packages = {
    '': {
      name: server.name,
      version: server.version,
      license: server.license,
      bundleDependencies: server.bundleDependencies,
      dependencies: server.dependencies,
      bin: server.bin,
      engines: server.engines,
    },
    'node_modules/@videogen/client': {
      version: client.version,
      inBundle: true,
      license: client.license,
      engines: client.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    // The workspace's own folders ('', packages/…) are not dependencies.
    if (!path.includes('node_modules/') || entry.dev || entry.link || ours.has(path)) continue;
    // One npm placed in a workspace's own node_modules would have no path of its own in an install.
    if (!path.startsWith('node_modules/'))
      throw new Error(`${path}: a runtime dependency outside node_modules/`);
    packages[path] = entry;
  }
  const missing = Object.keys(server.dependencies).filter((name) => !packages[`node_modules/${name}`]);
  if (missing.length > 0)
    throw new Error(`package-lock.json has no entry for ${missing.join(', ')}: run npm install`);
  writeFileSync(
    shrinkwrapPath,
    `${JSON.stringify({ name: server.name, version: server.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
}

const step = process.argv[2];
if (step === 'prepare') {
  clean();
  // The whole project reference graph: the server's dist/ and the client's, which the copy is packed from.
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-b', serverDir], { stdio: 'inherit' });
  bundleClient();
  writeShrinkwrap();
} else if (step === 'clean') {
  clean();
} else {
  console.error('usage: tarball.mjs prepare|clean');
  process.exit(2);
}
