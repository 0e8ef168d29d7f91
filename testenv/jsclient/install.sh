#!/usr/bin/env bash
# Installs the real @confluentinc/kafka-javascript VERSION into a cache directory of its
# own and prints that directory; NODE_PATH=$dir/node_modules makes jsclient/scenario.js's
# `--module @confluentinc/kafka-javascript` that release. jsclient.Ensure (Go, what
# `kstranded repro --real-client` and make test-jsclient use) does the same into the same
# directory: keep the two alike. The addon is compiled against
# the system's librdkafka dependencies (CKJS_LINKING=dynamic; needs gcc/g++, make,
# python3 and libzstd-dev liblz4-dev libsasl2-dev libcurl4-openssl-dev): about two minutes
# on two cores, once per release; a cached install is instant.
#
#   dir=$(testenv/jsclient/install.sh 1.10.1)
#
# KSTRANDED_CACHE overrides the cache root (default ${XDG_CACHE_HOME:-~/.cache}/kstranded).
set -euo pipefail
version="${1:?usage: install.sh VERSION}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "install.sh: $version is not a release number (X.Y.Z)" >&2; exit 2; }
root="${KSTRANDED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kstranded}"
dir="$root/jsclient-$version"
mkdir -p "$root"
# one install of a release at a time (jsclient.Ensure takes the same lock): the second
# waits, then finds the first's install
exec 9>"$dir.lock"
flock 9
if [[ ! -f "$dir/.installed" ]]; then
  for tool in node npm gcc g++ make python3; do
    command -v "$tool" >/dev/null || { echo "install.sh: $tool is missing (the real client is compiled from npm)" >&2; exit 1; }
  done
  rm -rf "$dir" && mkdir -p "$dir"
  printf '{"name":"kstranded-jsclient-%s","private":true,"version":"0.0.0"}\n' "$version" > "$dir/package.json"
  (cd "$dir" && CKJS_LINKING=dynamic npm install --no-audit --no-fund --cache "$root/npm" --loglevel=error \
    "@confluentinc/kafka-javascript@$version") >&2
  (cd "$dir" && node -e "require('@confluentinc/kafka-javascript')") >&2
  touch "$dir/.installed"
fi
echo "$dir"
