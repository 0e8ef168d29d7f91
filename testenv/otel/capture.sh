#!/usr/bin/env bash
# Re-captures the OTLP JSON fixture evidence/testdata/otlp/kafkajs-0.33.0.jsonl.gz: the
# spans testenv/otel/consumer.js (kafkajs 2.2.4, @opentelemetry/instrumentation-kafkajs
# 0.33.0) exported to `kstranded watch --otlp --otlp-capture` in the integration test
# (the seed: 0-81 and 201 handled, 82-199 seeked past, 202 committed), gzipped with -n
# (no name or mtime in the header).
#
#   testenv/otel/capture.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cd "$root"
KSTRANDED_TEST_OTEL=1 KSTRANDED_OTEL_CAPTURE="$out/spans.jsonl" go test ./integration -count=1 \
  -run '^TestWatchJudgesAKafkajsConsumerFromItsOpenTelemetrySpans$'
mkdir -p evidence/testdata/otlp
gzip -9 -n -c "$out/spans.jsonl" >evidence/testdata/otlp/kafkajs-0.33.0.jsonl.gz
printf '%s lines, %s bytes raw, %s bytes gz\n' "$(wc -l <"$out/spans.jsonl")" "$(wc -c <"$out/spans.jsonl")" \
  "$(wc -c <evidence/testdata/otlp/kafkajs-0.33.0.jsonl.gz)" >&2
