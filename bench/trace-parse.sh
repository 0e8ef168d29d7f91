#!/usr/bin/env bash
# Benchmark of `kstranded trace parse` on a generated librdkafka debug log, against
# `grep -c` on the same file: prints both times, the ratio and kstranded's peak memory.
# Usage: bench/trace-parse.sh [SIZE_BYTES]   (default 1 GiB; the file is in /tmp and deleted)
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1073741824}
tmp=$(mktemp -d /tmp/kstranded-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kstranded" .
go run ./bench/tracegen -size "$size" -o "$tmp/rdkafka.log"
echo "cpus: $(nproc)"
ls -l "$tmp/rdkafka.log" | awk '{printf "file: %.0f MB\n", $5/1048576}'
cat "$tmp/rdkafka.log" > /dev/null # warm the page cache for both runs
now() { date +%s.%N; }
t0=$(now); matches=$(grep -c 'Fetch topic' "$tmp/rdkafka.log"); t1=$(now)
/usr/bin/time -f '%M' -o "$tmp/mem" "$tmp/kstranded" trace parse -o json "$tmp/rdkafka.log" > "$tmp/out.json" || true
t2=$(now)
grep_s=$(echo "$t1 - $t0" | bc -l); parse_s=$(echo "$t2 - $t1" | bc -l)
printf "grep -c 'Fetch topic': %.2fs (%s matching lines)\n" "$grep_s" "$matches"
printf "kstranded trace parse:  %.2fs, peak RSS %d MB\n" "$parse_s" "$(( $(cat "$tmp/mem") / 1024 ))"
printf "speed ratio (grep time / parse time): %.2f (>= 0.5 required)\n" "$(echo "$grep_s / $parse_s" | bc -l)"
