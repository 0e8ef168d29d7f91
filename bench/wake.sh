#!/usr/bin/env bash
# bench/wake.sh: how much later live runs fetch records than the JS client would (issue 14
# §3). The live source (confluent-kafka-go) has no queue_non_empty_cb, so workers waiting on
# #nonEmpty are woken by the 1 s valve only; every such wait is a `wake` trace event.
#
# For each shape it runs `kstranded repro` live on the embedded broker RUNS times (default
# 3) with --trace, and `kstranded simulate` once with the same flags, and prints:
#   waits        wake events (waits for the consumer queue some worker awaited), by reason
#   w/records    waits whose next consume returned records: they arrived during the wait,
#                and the JS client would have fetched them up to the wait's length earlier
#   len          those waits' lengths, median and max, scaled (the run's clock) and unscaled
#                (divided by --time-scale, the scenario's own durations)
#   bound        the same, but counted from the latest of the wait's start and the last
#                `produce` event before the wake: a wait spanning the pause between two
#                phases (the loop stops while repro produces) cannot have delayed records
#                that did not exist yet
#   verdict      the run's verdict and lost ranges, then simulate's
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
go build -o /tmp/kstranded-wake .
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'machine: %s CPUs, %s\n' "$(nproc)" "$(go version | cut -d' ' -f3-)"
shapes=(
	""
	"--policy v1.10.1 --spread 0:100,1:40 --concurrency 1 --batch-size -1"
	"--spread 12x10 --concurrency 2"
	"--spread 4x50 --transactions 4 --concurrency 2"
)
for shape in "${shapes[@]}"; do
	echo
	echo "== kstranded repro ${shape:-(seed)}"
	# shellcheck disable=SC2086
	/tmp/kstranded-wake simulate $shape -o json >"$tmp/sim.json" || true
	for i in $(seq 1 "$runs"); do
		# shellcheck disable=SC2086
		/tmp/kstranded-wake repro $shape --trace "$tmp/t.jsonl" -o json >"$tmp/live.json" || true
		keep=0
		python3 - "$tmp/t.jsonl" "$tmp/live.json" "$tmp/sim.json" "$i" <<'PY' || keep=$?
import json, statistics, sys
trace, live, sim, i = sys.argv[1:]
evs = [json.loads(l) for l in open(trace)]
scale = float(evs[0]["settings"]["time_scale"])
wakes, produced = [], []
for e in evs:
    if e["ev"] == "produce":
        produced.append(e["at_ms"])
    if e["ev"] == "wake":
        woke = e["at_ms"]
        start = woke - e["since_fetch_ms"]
        last_produce = max([p for p in produced if p <= woke], default=start)
        wakes.append((e["reason"], e.get("returned", 0), e["since_fetch_ms"], woke - max(start, last_produce)))
reasons = {}
for r, *_ in wakes:
    reasons[r] = reasons.get(r, 0) + 1
withrec = [w for w in wakes if w[1] > 0]
def dist(xs):
    if not xs:
        return "-"
    return f"median {statistics.median(xs):.1f} ms, max {max(xs):.1f} ms (unscaled {statistics.median(xs)/scale/1000:.2f} s, {max(xs)/scale/1000:.2f} s)"
def verdict(path):
    d = json.load(open(path))
    r = d["runs"][0]
    lost = ",".join(f'{x["partition"]}:{x["first"]}-{x["last"]}' for p in r["partitions"] for x in p.get("lost") or []) or "-"
    return f'{r["verdict"]} lost {lost}'
print(f"run {i}: waits {len(wakes)} {reasons}; w/records {len(withrec)} (all valve: {all(w[0] == 'valve' for w in withrec)})")
print(f"  len   {dist([w[2] for w in withrec])}")
print(f"  bound {dist([w[3] for w in withrec])}")
lv, sv = verdict(live), verdict(sim)
print(f"  verdict live {lv} | simulate {sv}")
sys.exit(3 if lv != sv else 0)
PY
		if [ "$keep" = 3 ]; then
			# a verdict unlike the simulation's: keep the trace to read why
			kept=$(mktemp /tmp/wake-differs-XXXXXX.jsonl)
			cp "$tmp/t.jsonl" "$kept"
			echo "  trace kept: $kept"
		elif [ "$keep" != 0 ]; then
			exit "$keep"
		fi
	done
done
