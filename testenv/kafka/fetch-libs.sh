#!/usr/bin/env bash
# Fetch the Kafka broker jars (see pom.xml) into .libs/ if they are missing
# or pom.xml changed.  up.sh does this by itself; this script lets CI warm it.
set -euo pipefail
KAFKA_TESTENV_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$KAFKA_TESTENV_DIR/lib.sh"
ensure_libs
