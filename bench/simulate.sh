#!/usr/bin/env bash
# bench/simulate.sh: a 1,000-point sweep of `kstranded simulate` (the seed scenario, one
# policy, max.poll.interval from 1s to 1000s, issue 25), timed as a whole process with
# /usr/bin/time -v (wall clock and peak RSS). Figures go to BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o /tmp/kstranded-bench .
for run in 1 2 3; do
	# the sweep's verdict is the worst of its points: v1.10.0 loses records at some, so 3
	# (1m..1000m/1m no longer runs: --max-poll-interval stops at 12h)
	rc=0
	/usr/bin/time -v /tmp/kstranded-bench simulate --sweep max-poll-interval=1s..1000s/1s -o json \
		>/tmp/kstranded-sweep.json 2>/tmp/kstranded-sweep.time || rc=$?
	if [ "$rc" -ne 3 ]; then
		echo "simulate --sweep exited $rc, want 3 (LOST at some point)" >&2
		exit 1
	fi
	wall=$(grep 'Elapsed (wall clock)' /tmp/kstranded-sweep.time | awk '{print $NF}')
	rss=$(grep 'Maximum resident set size' /tmp/kstranded-sweep.time | awk '{print $NF}')
	rows=$(grep -c '"value"' /tmp/kstranded-sweep.json)
	echo "run $run: $rows rows, wall $wall, peak RSS ${rss} KB"
done
rm -f /tmp/kstranded-bench /tmp/kstranded-sweep.json /tmp/kstranded-sweep.time
