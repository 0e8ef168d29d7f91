#!/usr/bin/env bash
# Benchmark of `kstranded trace parse` on every log shape of issue 13 §4, each against
# `grep -c 'Fetch topic'` on the same file: the long-poll librdkafka log (6 partitions), a
# busy librdkafka log (20 and 1,000 partitions, every partition fetching, enqueueing,
# storing and committing), and confluent-kafka-javascript log output shaped like the
# captures in trace/testdata/jsclient (DefaultLogger objects with 20 and 1,000 partitions,
# a JSON logger), with the application's delivery lines read by --pattern; and two real
# captures of the JS client (trace/testdata/jsclient, DefaultLogger with debug and JSON
# logger) repeated end to end to the same size (issue 25 §2).
# Usage: [RUNS=N] bench/trace-parse-shapes.sh [SIZE_BYTES]   (default 1 GiB per file; in /tmp,
# deleted; each file is synced to disk before it is timed; RUNS alternated pairs, default 1)
# KSTRANDED_BIN=PATH times that binary (copied) instead of one built from this tree.
# Prints, per shape: grep's time, trace parse's time and peak RSS (/usr/bin/time -v), the
# speed ratio (grep time / parse time; the target is >= 1.0, issue 25 §2) and RSS target
# (< 64 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1073741824}
tmp=$(mktemp -d /tmp/kstranded-shapes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${KSTRANDED_BIN:-}" ]; then cp "$KSTRANDED_BIN" "$tmp/kstranded"; else go build -o "$tmp/kstranded" .; fi
go build -o "$tmp/tracegen" ./bench/tracegen
plain='^delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)$'
json='"topic":"(?P<topic>[^"]+)","partition":(?P<partition>\d+),"offset":"(?P<offset>\d+)","msg":"delivered"'
now() { date +%s.%N; }
echo "cpus: $(nproc), file size: $size bytes"
# name | tracegen shape | partitions | --pattern
for spec in "long-poll|rdkafka|6|" "busy-20|busy|20|" "busy-1000|busy|1000|" \
  "jsclient-20|jsclient|20|$plain" "jsclient-1000|jsclient|1000|$plain" "jsclient-json-20|jsclient-json|20|$json" \
  "capture-default|trace/testdata/jsclient/v1.10.1-default-debug.log.gz||$plain" \
  "capture-json|trace/testdata/jsclient/v1.10.1-json.log.gz||$json"; do
  IFS='|' read -r name shape parts pattern <<<"$spec"
  f="$tmp/$name.log"
  if [[ "$shape" == *.gz ]]; then # a capture, repeated until the file has size bytes
    gzip -dc "$shape" > "$tmp/capture"
    : > "$f"
    while (($(stat -c %s "$f") < size)); do cat "$tmp/capture" >> "$f"; done
  else
    "$tmp/tracegen" -shape "$shape" -partitions "$parts" -size "$size" -o "$f"
  fi
  sync # the file just written: no writeback of it runs while the commands are timed
  cat "$f" > /dev/null # warm the page cache for both runs
  args=(trace parse -o json "$f")
  [[ -n "$pattern" ]] && args+=(--pattern "$pattern")
  for ((run = 1; run <= ${RUNS:-1}; run++)); do # RUNS=N: N alternated pairs
    # grep's output goes to a file: with stdout on /dev/null GNU grep stops at the first match
    t0=$(now); grep -c 'Fetch topic' "$f" > "$tmp/grep.out"; t1=$(now)
    /usr/bin/time -v -o "$tmp/time" "$tmp/kstranded" "${args[@]}" > "$tmp/out.json" || true
    t2=$(now)
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time")
    grep_s=$(echo "$t1 - $t0" | bc -l); parse_s=$(echo "$t2 - $t1" | bc -l)
    printf "%-17s grep %.2fs  parse %.2fs  ratio %.2f  peak RSS %d MB\n" "$name" "$grep_s" "$parse_s" \
      "$(echo "$grep_s / $parse_s" | bc -l)" "$((rss / 1024))"
  done
  rm -f "$f"
done
