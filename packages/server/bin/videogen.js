#!/usr/bin/env node
// The package's bin entry. It exists before the build (npm links bins at install time) and loads the
// compiled CLI: in a checkout, run `npm run build` (or `npm start`/`npm test`, which build first) before using
// it; the packed package (`npm pack -w videogen`) carries dist/, built by its prepack.
import '../dist/src/cli/main.js';
