#!/bin/sh
# Installs the server's tarball (`npm pack -w videogen`) as a production install: runtime dependencies only,
# every one from the public registry. The container image's runtime stage runs this, and so does CI
# (scripts/check-installed-server.mjs), which then takes a task end to end with the result.
#
#   deploy/install-server.sh TARBALL PREFIX    installs into PREFIX/node_modules/videogen, with the command
#                                              at PREFIX/node_modules/.bin/videogen
#
# PREFIX becomes a small npm project of its own, so that npm applies what it applies only to the project it
# installs, never from a dependency: the package's `overrides` (the CommonJS majors of cookie and
# content-disposition that Node.js 20.18 can load; docs/deployment.md#nodejs-versions), and which dependencies
# may run install scripts (`allowScripts`, npm 11: building better-sqlite3, marking the ffmpeg and ffprobe
# binaries executable; @scarf/scarf's report is refused). The tarball's npm-shrinkwrap.json pins every
# dependency to the version CI tested. @videogen/client is bundled in the tarball; its scope is pointed at an
# address where nothing listens, so an install that asked a registry for it fails here.
set -eu

if [ "$#" -ne 2 ]; then
  echo "usage: $0 TARBALL PREFIX" >&2
  exit 2
fi
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
prefix=$2

mkdir -p "$prefix"
overrides=$(tar -xzOf "$tarball" package/package.json | node -e '
  let text = "";
  process.stdin.on("data", (chunk) => { text += chunk; });
  process.stdin.on("end", () => { process.stdout.write(JSON.stringify(JSON.parse(text).overrides ?? {})); });
')
cat >"$prefix/package.json" <<JSON
{
  "name": "videogen-install",
  "private": true,
  "overrides": $overrides,
  "allowScripts": {
    "better-sqlite3": true,
    "@ffmpeg-installer/linux-x64": true,
    "@ffprobe-installer/linux-x64": true,
    "@ffmpeg-installer/linux-arm64": true,
    "@ffprobe-installer/linux-arm64": true,
    "@scarf/scarf": false
  }
}
JSON

cd "$prefix"
npm install --omit=dev --no-audit --no-fund --@videogen:registry=http://127.0.0.1:9/ "$tarball"

test -f node_modules/videogen/node_modules/@videogen/client/package.json || {
  echo "$0: @videogen/client is not bundled in $tarball" >&2
  exit 1
}
# The command loads: its dependencies resolve and the built CLI is there.
node_modules/.bin/videogen help >/dev/null
