#!/usr/bin/env bash
# Installs testenv/otel's pinned packages (package-lock.json, npm ci) into a cache
# directory keyed by the lock file's hash, and prints that directory: its node_modules is
# what consumer.js runs with (NODE_PATH). npm's own cache is kept under it too, so a
# re-run with an unchanged lock file is instant and one after a change downloads only
# what changed.
#
#   dir=$(testenv/otel/install.sh) && NODE_PATH=$dir/node_modules node testenv/otel/consumer.js ...
#
# KSTRANDED_CACHE overrides the cache root (default ${XDG_CACHE_HOME:-~/.cache}/kstranded).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="${KSTRANDED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kstranded}"
sum="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)"
dir="$root/otel-$sum"
if [[ ! -f "$dir/.installed" ]]; then
  mkdir -p "$dir"
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  # the OpenTelemetry 0.300 / 3.0 packages declare node >=22.15; they run on Node 20 (CI's)
  (cd "$dir" && npm ci --no-audit --no-fund --cache "$root/npm" --loglevel=error --engine-strict=false) >&2
  touch "$dir/.installed"
fi
echo "$dir"
