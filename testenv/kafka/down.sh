#!/usr/bin/env bash
# Stop the test broker started by up.sh and remove its state dir.
# Idempotent: succeeds when nothing is running or there is no state dir.
#
#   KAFKA_STATE_DIR      state dir (default: <this dir>/.state)
#   KAFKA_STOP_TIMEOUT   seconds to wait after SIGTERM before SIGKILL (default: 30)
#   KAFKA_KEEP_STATE=1   stop the broker but keep the state dir (logs, certs)
set -euo pipefail

KAFKA_TESTENV_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$KAFKA_TESTENV_DIR/lib.sh"

STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"

PID="$(running_pid)"
if [[ -n "$PID" ]]; then
  log "stopping broker (pid $PID)"
  kill -TERM "$PID" 2>/dev/null || true
  deadline=$((SECONDS + STOP_TIMEOUT))
  while kill -0 "$PID" 2>/dev/null && ((SECONDS < deadline)); do
    sleep 0.2
  done
  if kill -0 "$PID" 2>/dev/null; then
    log "broker still running after ${STOP_TIMEOUT}s; sending SIGKILL"
    kill -KILL "$PID" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$PID" 2>/dev/null || break
      sleep 0.1
    done
  fi
  if kill -0 "$PID" 2>/dev/null; then
    die "could not stop pid $PID"
  fi
fi

if [[ -e "$KAFKA_STATE_DIR" ]]; then
  if [[ "${KAFKA_KEEP_STATE:-0}" == 1 ]]; then
    log "keeping $KAFKA_STATE_DIR (KAFKA_KEEP_STATE=1)"
    rm -f "$KAFKA_STATE_DIR/kafka.pid" "$KAFKA_STATE_DIR/env"
  elif [[ -f "$KAFKA_STATE_DIR/$KAFKA_STATE_MARKER" ]]; then
    rm -rf "$KAFKA_STATE_DIR"
  else
    log "not removing $KAFKA_STATE_DIR: it has no $KAFKA_STATE_MARKER marker, so up.sh did not make it"
  fi
fi
