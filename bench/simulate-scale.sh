#!/usr/bin/env bash
# bench/simulate-scale.sh: issue 25 §1's growth curve. Each point of
# BenchmarkSimulateScale (repro/scale_bench_test.go: `simulate --spread PxN --partitions P
# --concurrency 20 --max-poll-interval 5m --handler-delay 10ms`, 10^4 to 10^7 records on
# 100 partitions, 10 to 10^4 partitions at 10^5 and 10^6 records, past the CLI's limits)
# runs once as its own process under /usr/bin/time: ns a record from the benchmark,
# wall and peak RSS of the process (the test binary holds about as much as kstranded
# before any simulation). Then a log-scale chart of ns a record. Figures go to BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -c -o /tmp/kstranded-scale.test ./repro
printf '%-9s %-10s %8s %10s %10s\n' records partitions wall_s ns/record peak_MB
out=$(mktemp)
for point in 10000/100 100000/100 1000000/100 10000000/100 \
	100000/10 100000/1000 100000/10000 1000000/10 1000000/1000 1000000/10000; do
	records=${point%/*} parts=${point#*/}
	KSTRANDED_BENCH_SCALE=large /usr/bin/time -f '%e %M' -o /tmp/kstranded-scale.time \
		/tmp/kstranded-scale.test -test.run '^$' -test.benchtime 1x \
		-test.bench "^BenchmarkSimulateScale\$/^records=${records}\$/^partitions=${parts}\$" >/tmp/kstranded-scale.out
	ns=$(awk '/ns\/record/ {for (i = 1; i <= NF; i++) if ($(i+1) == "ns/record") print $i}' /tmp/kstranded-scale.out)
	read -r wall rss </tmp/kstranded-scale.time
	if [ -z "$ns" ]; then
		cat /tmp/kstranded-scale.out >&2
		exit 1
	fi
	printf '%-9s %-10s %8s %10s %10d\n' "$records" "$parts" "$wall" "$ns" $((rss / 1024)) | tee -a "$out"
done
echo
echo "ns a record (each # is 100 ns):"
awk '{ n = int($4 / 100 + 0.5); bar = ""; for (i = 0; i < n; i++) bar = bar "#"; printf "%9s rec %6s part | %s %s\n", $1, $2, bar, $4 }' "$out"
rm -f /tmp/kstranded-scale.test /tmp/kstranded-scale.out /tmp/kstranded-scale.time "$out"
