#!/usr/bin/env bash
# Benchmarks for `kstranded inspect` on the embedded broker (kfake, in process):
#   1. inspect of a group over a 2,000-partition topic (offsets view; target < 1 s);
#   2. classifying 1,000,000 offsets versus kcat reading the same range, both measured
#      in one run against the same broker (target: scan rate >= 70% of kcat's).
# Needs kcat (Debian: apt-get update && apt-get install -y kcat).
# Usage: bench/inspect.sh [N offsets, default 1000000]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v kcat >/dev/null; then
	echo "kcat not found: apt-get update && apt-get install -y kcat" >&2
	exit 1
fi
echo "# $(go version); kcat $(kcat -V 2>&1 | sed -n 's/^Version \([^ ]*\).*librdkafka \([^ ]*\).*/\1 (librdkafka \2)/p'); $(nproc) CPUs"
go test ./inspect/ -run 'TestInspectingTwoThousandPartitionsTakesSevenRequests' -count=1 -v 2>&1 | grep -E 'inspect of 2000|^(ok|FAIL|---)'
go test ./inspect/ -run '^$' -bench 'BenchmarkInspect2000Partitions' -benchtime 20x -count=1 2>&1 | grep -E '^Benchmark|^ok'
KSTRANDED_BENCH_KCAT=1 KSTRANDED_BENCH_N="${1:-1000000}" go test ./inspect/ -run 'TestScanRateVersusKcat' -count=1 -v -timeout 900s 2>&1 | grep -E 'BENCH|round|^(ok|FAIL|---)'
