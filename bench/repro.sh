#!/usr/bin/env bash
# Runs `kstranded repro` (v1.10.0, default scale, embedded broker) N times (default 5)
# and prints, per run: the numbers the verdict rests on, when the loss happened, when
# the verdict was printed (wall time of the whole process) and peak memory (RSS).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
policy=${POLICY:-v1.10.0}
go build -o bin/kstranded .
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'machine: %s CPUs, %s\n' "$(nproc)" "$(go version | cut -d' ' -f3-)"
printf '%-4s %-9s %-10s %-10s %-11s %-6s %-10s %-9s %-8s\n' run policy delivered1 committed1 committed2 lost lost_range loss_at_s wall_s
printf '(last column: peak RSS in MB and the exit code)\n'
for i in $(seq 1 "$runs"); do
  set +e
  /usr/bin/time -f '%e %M' -o "$tmp/time" ./bin/kstranded repro --policy "$policy" -o json > "$tmp/out.json"
  rc=$?
  set -e
  read -r wall rss < <(tail -n 1 "$tmp/time")
  python3 - "$tmp/out.json" "$i" "$policy" "$wall" "$rss" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); i, pol, wall, rss, rc = sys.argv[2:]
r = d["runs"][0]; p = r["partitions"][0]
ph = r["phases"]
lost = ",".join(f'{x["first"]}-{x["last"]}' for x in p["lost"]) or "-"
loss_at = f'{r["loss_at_ms"]/1000:.1f}' if r.get("loss_at_ms") else "-"
print(f'{i:<4} {pol:<9} {ph[0]["partitions"][0]["delivered"]:<10} {p["committed_by_phase"][0]:<10} {p["committed_by_phase"][1]:<11} {p["lost_count"]:<6} {lost:<10} {loss_at:<9} {wall:<8} {int(rss)/1024:.0f} (exit {rc})')
PY
done
