# shellcheck shell=bash
# Shared helpers for up.sh, down.sh, fetch-libs.sh and run-class.sh.
# Sourced, not executed.  Expects KAFKA_TESTENV_DIR to be set by the caller
# (the directory holding these scripts).

: "${KAFKA_TESTENV_DIR:?KAFKA_TESTENV_DIR must be set}"

# Where the jars live and where a running broker keeps its state.
KAFKA_LIBS_DIR="${KAFKA_LIBS_DIR:-$KAFKA_TESTENV_DIR/.libs}"
KAFKA_STATE_DIR="${KAFKA_STATE_DIR:-$KAFKA_TESTENV_DIR/.state}"
# A file in every state dir that up.sh creates; down.sh only deletes a
# directory that has it.
# shellcheck disable=SC2034 # used by up.sh and down.sh
KAFKA_STATE_MARKER=".kstranded-kafka-testenv"

log() { printf 'kafka-testenv: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# The java binary: $JAVA, else $JAVA_HOME/bin/java, else java on PATH.
find_java() {
  if [[ -n "${JAVA:-}" ]]; then
    printf '%s\n' "$JAVA"
  elif [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    printf '%s\n' "$JAVA_HOME/bin/java"
  elif command -v java >/dev/null 2>&1; then
    command -v java
  else
    die "java not found (install a JDK 17+, or set JAVA or JAVA_HOME)"
  fi
}

# keytool from the same JDK as java when possible.
find_keytool() {
  local java dir
  java="$(find_java)"
  dir="$(dirname "$(readlink -f "$java")")"
  if [[ -x "$dir/keytool" ]]; then
    printf '%s\n' "$dir/keytool"
  elif command -v keytool >/dev/null 2>&1; then
    command -v keytool
  else
    die "keytool not found (it comes with the JDK)"
  fi
}

pom_hash() {
  sha256sum "$KAFKA_TESTENV_DIR/pom.xml" | cut -d' ' -f1
}

# Fetch the jars named by pom.xml into $KAFKA_LIBS_DIR unless they are there
# already for this exact pom.xml.  Uses Maven (and its ~/.m2 cache), so the
# only thing downloaded is from Maven Central.
ensure_libs() {
  local stamp="$KAFKA_LIBS_DIR/.pom.sha256" want
  want="$(pom_hash)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found; it is needed once to fetch the Kafka jars into $KAFKA_LIBS_DIR"
  log "fetching Kafka jars from Maven Central into $KAFKA_LIBS_DIR ..."
  local tmp="$KAFKA_LIBS_DIR.tmp.$$"
  rm -rf "$tmp"
  # KAFKA_MVN_ARGS: extra Maven arguments, e.g. -Dmaven.repo.local=DIR.
  # (sed drops the stray colour-reset codes Maven 3.8 prints even with -B.)
  local -a extra=()
  read -r -a extra <<<"${KAFKA_MVN_ARGS:-}"
  if ! mvn -B -q -Dstyle.color=never "${extra[@]}" -f "$KAFKA_TESTENV_DIR/pom.xml" \
        dependency:copy-dependencies -Dlibs.dir="$tmp" 2>&1 |
      sed -e 's/\x1b\[[0-9;]*m//g' -e '/^$/d' >&2; then
    rm -rf "$tmp"
    die "mvn could not fetch the Kafka jars (see the output above)"
  fi
  printf '%s\n' "$want" >"$tmp/.pom.sha256"
  rm -rf "$KAFKA_LIBS_DIR"
  mv "$tmp" "$KAFKA_LIBS_DIR"
  log "fetched $(find "$KAFKA_LIBS_DIR" -name '*.jar' | wc -l) jars"
}

# The pid from the state dir's pid file if that process is alive and is our
# Kafka broker (guards against a reused pid); nothing otherwise.
running_pid() {
  local pidfile="$KAFKA_STATE_DIR/kafka.pid" pid
  [[ -f "$pidfile" ]] || return 0
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  if [[ -r "/proc/$pid/cmdline" ]]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'kafka\.Kafka' || return 0
  fi
  printf '%s\n' "$pid"
}
