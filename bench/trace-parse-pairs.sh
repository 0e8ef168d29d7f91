#!/usr/bin/env bash
# Side-by-side timings of `kstranded trace parse -o json` with farm-bench (on PATH in this
# workplace: A/B pairs run alternately, min/median/max), on the eight files of
# bench/trace-parse-shapes.sh, kept in DIR between calls (issue 25 §2):
#   bench/trace-parse-pairs.sh make DIR [SIZE_BYTES]  write the eight files (default 512 MiB each)
#   bench/trace-parse-pairs.sh grep DIR BIN [N]       BIN's parse against grep -c 'Fetch topic'
#   bench/trace-parse-pairs.sh ab DIR BIN_A BIN_B [N] binary A against binary B
#   bench/trace-parse-pairs.sh work DIR TEST_A TEST_B [N]
#       two builds of the trace package's test binary ((cd trace && go test -c -o X .)),
#       alternated N times (default 8): the minimum of each's BenchmarkParseFile, one op at
#       GOMAXPROCS=1, so the figure is the parse's total work, not two cores' wall time; on a
#       shared machine the minimum is the figure least moved by other load
# Each row: the A/B median wall (min-max), the A and B walls, CPU or peak RSS, and the load
# average before and after. SHAPES="long-poll busy-20" limits the shapes.
set -euo pipefail
cd "$(dirname "$0")/.."
plain='^delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)$'
json='"topic":"(?P<topic>[^"]+)","partition":(?P<partition>\d+),"offset":"(?P<offset>\d+)","msg":"delivered"'
shapes=${SHAPES:-"long-poll busy-20 busy-1000 jsclient-20 jsclient-1000 jsclient-json-20 capture-default capture-json"}
pat() { case $1 in jsclient-json-20|capture-json) echo "$json";; jsclient-*|capture-default) echo "$plain";; *) echo "";; esac; }
# parse BIN FILE SHAPE: the words of a parse (farm-bench reads and drops its output)
parse() {
  local p; p=$(pat "$3")
  if [ -n "$p" ]; then printf "%q trace parse -o json %q --pattern %q" "$1" "$2" "$p"
  else printf "%q trace parse -o json %q" "$1" "$2"; fi
}
mode=${1:?usage: trace-parse-pairs.sh make|grep|ab|work DIR ...} dir=${2:?DIR}
case $mode in
make)
  size=${3:-536870912}
  mkdir -p "$dir"
  go build -o "$dir/tracegen" ./bench/tracegen
  for spec in "long-poll|rdkafka|6" "busy-20|busy|20" "busy-1000|busy|1000" "jsclient-20|jsclient|20" \
    "jsclient-1000|jsclient|1000" "jsclient-json-20|jsclient-json|20" \
    "capture-default|trace/testdata/jsclient/v1.10.1-default-debug.log.gz|" "capture-json|trace/testdata/jsclient/v1.10.1-json.log.gz|"; do
    IFS='|' read -r name shape parts <<<"$spec"
    f="$dir/$name.log"
    if [[ "$shape" == *.gz ]]; then
      gzip -dc "$shape" > "$dir/capture"
      : > "$f"
      while (($(stat -c %s "$f") < size)); do cat "$dir/capture" >> "$f"; done
      rm "$dir/capture"
    else
      "$dir/tracegen" -shape "$shape" -partitions "$parts" -size "$size" -o "$f"
    fi
    echo "$f: $(stat -c %s "$f") bytes"
  done ;;
grep|ab)
  n=${4:-5}
  [ "$mode" = ab ] && n=${5:-5}
  for s in $shapes; do
    f="$dir/$s.log"
    cat "$f" > /dev/null # the page cache, warm for both
    a=$(parse "$3" "$f" "$s")
    if [ "$mode" = grep ]; then b="grep -c 'Fetch topic' $(printf %q "$f")"; else b=$(parse "$4" "$f" "$s"); fi
    l0=$(cut -d' ' -f1 /proc/loadavg)
    out=$(eval "farm-bench -n $n --timeout 600 --vs $(printf %q "$b") -- $a" 2>&1) || { echo "$out" >&2; exit 1; }
    l1=$(cut -d' ' -f1 /proc/loadavg)
    printf "%-17s A/B wall %s  A wall %s  B wall %s  A cpu %s  B cpu %s  A peak %s  load %s-%s\n" "$s" \
      "$(echo "$out" | awk '/^A\/B wall/ {print $4" ("$3"-"$5")"}')" "$(echo "$out" | awk '/^A wall/ {print $5}')" \
      "$(echo "$out" | awk '/^B wall/ {print $5}')" "$(echo "$out" | awk '/^A cpu/ {print $5}')" \
      "$(echo "$out" | awk '/^B cpu/ {print $5}')" "$(echo "$out" | awk '/^A peak/ {print $5}')" "$l0" "$l1"
  done ;;
work)
  n=${5:-8}
  for s in $shapes; do
    f="$dir/$s.log"
    cat "$f" > /dev/null
    for ((i = 0; i < n; i++)); do
      for bin in "$3" "$4"; do
        GOMAXPROCS=1 KSTRANDED_TRACE_FILE=$f KSTRANDED_TRACE_PATTERN=$(pat "$s") "$bin" -test.run '^$' \
          -test.bench ParseFile -test.benchtime 1x | awk -v b="$bin" '/^BenchmarkParseFile/ {print b, $3 / 1e6}'
      done
    done | awk -v s="$s" -v a="$3" -v b="$4" '{ if (!($1 in m) || $2 < m[$1]) m[$1] = $2 }
      END { printf "%-17s A min %.0f ms  B min %.0f ms  B/A %.2f\n", s, m[a], m[b], m[b] / m[a] }'
  done ;;
*) echo "usage: trace-parse-pairs.sh make|grep|ab|work DIR ..." >&2; exit 2 ;;
esac
