#!/usr/bin/env bash
# Run a Kafka CLI class with the fetched jars, e.g.
#   testenv/kafka/run-class.sh org.apache.kafka.tools.TopicCommand \
#     --bootstrap-server "$KSTRANDED_TEST_BROKERS" --list
# Logging: warnings only, on stderr.
set -euo pipefail
KAFKA_TESTENV_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$KAFKA_TESTENV_DIR/lib.sh"
[[ $# -ge 1 ]] || die "usage: $0 MAIN_CLASS [ARGS...]"
ensure_libs
JAVA_BIN="$(find_java)"
exec "$JAVA_BIN" -Xmx256m -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
  -Dlog4j2.configurationFile="$KAFKA_TESTENV_DIR/log4j2-tools.properties" \
  -cp "$KAFKA_LIBS_DIR/*" "$@"
