#!/usr/bin/env bash
# bench/simulate-same.sh OLD NEW: a speed-up of `kstranded simulate` must not change a
# verdict, a range, a commit or a trace (issue 25). It runs two kstranded binaries on
# the seed and the shapes below (the text output, -o json and --trace, each with its
# exit code; some shapes stall on purpose and their error is compared), four sweeps
# and an --advise, plus with BIG=1 the 10^6-record run and its trace, and says
# whether every file is byte for byte the same. BENCHMARKS.md lists the shapes.
set -uo pipefail
old=$1 new=$2
out=$(mktemp -d)
run() { # BIN DIR
	local bin=$1 dir=$out/$2 name args
	mkdir -p "$dir"
	while IFS='|' read -r name args; do
		[ -z "$name" ] && continue
		# shellcheck disable=SC2086 # args are flags, split on purpose
		"$bin" simulate $args -o json --trace "$dir/$name.trace" >"$dir/$name.json" 2>"$dir/$name.err" </dev/null
		echo "rc=$?" >>"$dir/$name.json"
		# shellcheck disable=SC2086
		"$bin" simulate $args >"$dir/$name.txt" 2>&1 </dev/null
		echo "rc=$?" >>"$dir/$name.txt"
	done <<'SHAPES'
seed|
s8x5|--spread 8x5 --concurrency 2 --batch-size 1
join|--members 2 --rebalance-at 5m:join
ledger|--commit ledger
eachmsg|--handler each-message
fail|--handler-fail-at 5,90
s20x500|--spread 20x500 --partitions 30 --concurrency 4 --max-poll-interval 30s --handler-delay 10ms
s100x100|--spread 100x100 --partitions 100 --concurrency 20 --max-poll-interval 5m --handler-delay 10ms
s10x300|--spread 10x300 --partitions 10 --concurrency 3 --max-poll-interval 20s --handler-delay 50ms --commit ledger
v1101|--policy v1.10.1 --spread 5x200 --concurrency 2 --max-poll-interval 10s
v1101b|--policy v1.10.1 --spread 12x5 --concurrency 2
leave3|--members 3 --rebalance-at 2m:leave --commit ledger --spread 10x200 --partitions 10
manualpause|--commit manual --pause-at 3m
pauseout|--pause-at 3m --pause-from outside --spread 4x50 --partitions 4 --concurrency 2
seek|--seek-at 2m --seek-to 50
s1000x10|--spread 1000x10 --partitions 1000 --concurrency 20 --max-poll-interval 5m --handler-delay 10ms
joinleave|--spread 0:100,1:100 --rebalance-at 5m:join --rebalance-at 8m:leave=1
consumer|--members 2 --group-protocol consumer --spread 20x10 --rebalance-at 5m:join --rebalance-at 8m:leave=1
consumer2|--members 2 --partitions 2 --group-protocol consumer --spread 0:100,1:100 --rebalance-at 8m:leave
all|--client all --commit all --handler all --spread 3x40 --concurrency 2 --max-poll-interval 2m
fo|--spread 0:100,1:40 --concurrency 1 --batch-size -1 --client 1.10.1
fo2|--spread 4x30 --partitions 4 --concurrency 1 --fetch-order 2,0,3,1
v170|--client 1.7.0 --spread 8x5 --concurrency 2 --cache-size-per-worker 3s
txn|--transactions 3 --spread 4x60 --partitions 4 --concurrency 2 --max-poll-interval 1m
inflight|--commit ledger --max-in-flight 10 --spread 4x100 --partitions 4 --concurrency 2 --max-poll-interval 1m --handler-delay 1s
hb|--heartbeat --auto-resolve=false --spread 3x50 --partitions 3 --concurrency 2 --max-poll-interval 3m
all2|--client all --commit all --handler all --spread 3x40 --concurrency 2 --max-poll-interval 10m
v1101c|--policy v1.10.1 --spread 5x200 --concurrency 2 --max-poll-interval 1m --handler-delay 1s
v130|--client 1.3.0
v130s|--client 1.3.0 --spread 8x5 --concurrency 2 --batch-size 1 --max-poll-interval 5m
v100|--client 1.0.0 --seek-at 2m --seek-to 50
v100s|--client 1.0.0 --spread 12x5 --concurrency 2 --handler-parallel 1 --max-poll-interval 5m
SHAPES
	"$bin" simulate --sweep 'max-poll-interval=1m..60m/1m' -o json >"$dir/sweep60.json" 2>&1
	echo "rc=$?" >>"$dir/sweep60.json"
	"$bin" simulate --sweep 'max-poll-interval=1s..1000s/1s' -o json >"$dir/sweep1000.json" 2>&1
	echo "rc=$?" >>"$dir/sweep1000.json"
	"$bin" simulate --client all --sweep 'batch-size=1..40' -o json >"$dir/sweepbs.json" 2>&1
	echo "rc=$?" >>"$dir/sweepbs.json"
	"$bin" simulate --spread 12x10 --concurrency 2 --advise -o json >"$dir/advise.json" 2>&1
	echo "rc=$?" >>"$dir/advise.json"
	if [ -n "${BIG:-}" ]; then
		"$bin" simulate --spread 100x10000 --partitions 100 --concurrency 20 --max-poll-interval 5m \
			--handler-delay 10ms -o json --trace "$dir/big.trace" >"$dir/big.json" 2>&1
		echo "rc=$?" >>"$dir/big.json"
	fi
}
run "$old" old
run "$new" new
if diff -r "$out/old" "$out/new"; then
	echo "same: $(find "$out/new" -type f | wc -l) files ($out)"
else
	echo "DIFFERENT ($out)" >&2
	exit 1
fi
