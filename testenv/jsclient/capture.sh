#!/usr/bin/env bash
# Re-captures the confluent-kafka-javascript log fixtures in trace/testdata/jsclient/.
#
# Each variant runs scenario.js against a fresh `kstranded broker` (in-memory kfake on
# 127.0.0.1, topic stranded with 20 partitions), so every run starts from an empty log.
# The raw output (stdout and stderr merged, exactly as printed) is kept in out/ and gzipped
# (-n: no name or mtime in the header) into trace/testdata/jsclient/.
#
#   testenv/jsclient/capture.sh            # all variants
#   testenv/jsclient/capture.sh v1.10.0-json v1.10.1-default-debug   # some
#
# Needs: node and the installs described in README.md (node_modules/ here for 1.10.0,
# v1.10.1/node_modules/ for 1.10.1), Go to build bin/kstranded if it is missing.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
fixtures="$root/trace/testdata/jsclient"
out="$here/out"
mkdir -p "$out" "$fixtures"

kstranded="$root/bin/kstranded"
if [[ ! -x "$kstranded" ]]; then
  (cd "$root" && go build -o bin/kstranded .)
fi

# name | client module (a path is relative to this directory) | scenario.js arguments
variants=(
  "v1.10.0-default-debug|@confluentinc/kafka-javascript|--logger default"
  "v1.10.0-default|@confluentinc/kafka-javascript|--logger default --debug ''"
  "v1.10.0-json|@confluentinc/kafka-javascript|--logger json"
  "v1.10.1-default-debug|./v1.10.1/node_modules/@confluentinc/kafka-javascript|--logger default"
  "v1.10.1-default|./v1.10.1/node_modules/@confluentinc/kafka-javascript|--logger default --debug ''"
  "v1.10.1-json|./v1.10.1/node_modules/@confluentinc/kafka-javascript|--logger json"
)

want=("$@")
selected() {
  [[ ${#want[@]} -eq 0 ]] && return 0
  local w
  for w in "${want[@]}"; do [[ "$w" == "$1" ]] && return 0; done
  return 1
}

broker_pid=""
stop_broker() {
  if [[ -n "$broker_pid" ]]; then
    kill "$broker_pid" 2>/dev/null || true
    wait "$broker_pid" 2>/dev/null || true
    broker_pid=""
  fi
}
trap stop_broker EXIT

for v in "${variants[@]}"; do
  IFS='|' read -r name module args <<<"$v"
  selected "$name" || continue

  "$kstranded" broker --port 0 --topic stranded --partitions 20 >"$out/$name.broker" 2>&1 &
  broker_pid=$!
  bootstrap=""
  for _ in $(seq 1 100); do
    bootstrap="$(sed -n 's/^bootstrap: *//p' "$out/$name.broker")"
    [[ -n "$bootstrap" ]] && break
    sleep 0.1
  done
  [[ -n "$bootstrap" ]] || { echo "broker did not start: $(cat "$out/$name.broker")" >&2; exit 1; }

  cmd="node $root/jsclient/scenario.js --brokers $bootstrap --module $module $args"
  echo "== $name: $cmd" >&2
  (cd "$here" && export NODE_PATH="$here/node_modules" && eval "$cmd") >"$out/$name.log" 2>&1
  stop_broker

  gzip -9 -n -c "$out/$name.log" >"$fixtures/$name.log.gz"
  printf '%s\t%s lines\t%s bytes raw\t%s bytes gz\n' "$name" \
    "$(wc -l <"$out/$name.log")" "$(wc -c <"$out/$name.log")" \
    "$(wc -c <"$fixtures/$name.log.gz")" >&2
  grep -E '^(scenario|committed|summary) |"msg":"(scenario|committed|summary)"' "$out/$name.log" >&2
done
