#!/usr/bin/env bash
# Memory and time of reading delivery evidence: `kstranded inspect --delivered` on a
# generated gzip of JSON delivery lines (bench/evidencegen), with /usr/bin/time. The
# broker address is unreachable on purpose: the evidence is read before the first request,
# and the run ends with the connection error after it (exit 1).
# Usage: bench/evidence.sh [SIZE_BYTES]   (default 1 GiB before compression; files in /tmp, deleted)
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1073741824}
tmp=$(mktemp -d /tmp/kstranded-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kstranded" .
go run ./bench/evidencegen -size "$size" > "$tmp/deliveries.jsonl.gz"
echo "cpus: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg)"
ls -l "$tmp/deliveries.jsonl.gz" | awk -v s="$size" '{printf "file: %.1f MB gzip of %.0f MB of delivery lines\n", $5/1e6, s/1e6}'
/usr/bin/time -f 'inspect --delivered: %e s wall, %U s user, peak RSS %M KB' \
	"$tmp/kstranded" inspect --delivered "$tmp/deliveries.jsonl.gz" --brokers 127.0.0.1:1 --group g --timeout 1s 2>&1 | tail -1
