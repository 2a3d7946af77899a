#!/usr/bin/env node
// The package's bin entry. It exists before the build (npm links bins at install time) and loads the
// compiled CLI: run `npm run build` (or `npm start`/`npm test`, which build first) before using it.
import '../dist/src/cli/main.js';
