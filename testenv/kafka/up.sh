#!/usr/bin/env bash
# Start a single-node Apache Kafka (KRaft, combined broker+controller) on
# 127.0.0.1 for kstranded's integration tests.  See README.md.
#
# Prints, and writes to $KAFKA_STATE_DIR/env:
#   KSTRANDED_TEST_BROKERS=127.0.0.1:PORT          (PLAINTEXT listener)
#   KSTRANDED_TEST_SSL_BROKERS=127.0.0.1:PORT2     (SSL, client cert required)
#   KSTRANDED_TEST_SSL_CONFIG=/abs/client.properties  (librdkafka names)
#
# Environment overrides (all optional):
#   KAFKA_STATE_DIR        state dir (default: <this dir>/.state)
#   KAFKA_PLAINTEXT_PORT   PLAINTEXT listener port (default: a free one)
#   KAFKA_SSL_PORT         SSL listener port (default: a free one)
#   KAFKA_CONTROLLER_PORT  KRaft controller port (default: a free one)
#   KAFKA_START_TIMEOUT    seconds to wait for the broker (default: 90)
#   KAFKA_HEAP_OPTS        default: -Xms256m -Xmx512m
#   KAFKA_JVM_OPTS         extra JVM options
#   KAFKA_EXTRA_CONFIG     extra server.properties lines (newline separated)
#   JAVA / JAVA_HOME       which java to use
set -euo pipefail

KAFKA_TESTENV_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$KAFKA_TESTENV_DIR/lib.sh"

START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
HOST=127.0.0.1

# --- already running? -------------------------------------------------------
if [[ -n "$(running_pid)" && -f "$KAFKA_STATE_DIR/env" ]]; then
  log "already running (pid $(running_pid)), state in $KAFKA_STATE_DIR"
  cat "$KAFKA_STATE_DIR/env"
  exit 0
fi

command -v openssl >/dev/null 2>&1 || die "openssl not found"
JAVA_BIN="$(find_java)"
KEYTOOL_BIN="$(find_keytool)"

ensure_libs

# --- fresh state dir ----------------------------------------------------------
if [[ -e "$KAFKA_STATE_DIR" ]]; then
  # A leftover from a broker that died or was not stopped: clear it, but only
  # if it is ours.
  if [[ -f "$KAFKA_STATE_DIR/$KAFKA_STATE_MARKER" ]]; then
    "$KAFKA_TESTENV_DIR/down.sh" >/dev/null
  elif [[ -n "$(ls -A "$KAFKA_STATE_DIR" 2>/dev/null)" ]]; then
    die "$KAFKA_STATE_DIR exists, is not empty and is not a kafka testenv state dir; refusing to use it"
  fi
fi
mkdir -p "$KAFKA_STATE_DIR"
KAFKA_STATE_DIR="$(cd "$KAFKA_STATE_DIR" && pwd)"
touch "$KAFKA_STATE_DIR/$KAFKA_STATE_MARKER"
STARTED_OK=0
cleanup_on_failure() {
  if [[ "$STARTED_OK" != 1 ]]; then
    # Leave the log for inspection but stop anything we started.
    local pid
    pid="$(running_pid)"
    if [[ -n "$pid" ]]; then kill -KILL "$pid" 2>/dev/null || true; fi
  fi
}
trap cleanup_on_failure EXIT

CERTS="$KAFKA_STATE_DIR/certs"
DATA="$KAFKA_STATE_DIR/data"
mkdir -p "$CERTS" "$DATA"
chmod 700 "$CERTS"

# --- ports ------------------------------------------------------------------
# Free = nothing accepts a TCP connection on it.  Picked from 20000-32767,
# below Linux's default ephemeral range, so outgoing connections don't take
# it between now and the broker's bind.
port_in_use() {
  (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}
PICKED_PORTS=" "
pick_port() {
  local p i
  for ((i = 0; i < 200; i++)); do
    p=$((20000 + RANDOM % 12768))
    [[ "$PICKED_PORTS" == *" $p "* ]] && continue
    port_in_use "$p" && continue
    PICKED_PORTS+="$p "
    printf '%s\n' "$p"
    return 0
  done
  die "could not find a free port"
}
PLAINTEXT_PORT="${KAFKA_PLAINTEXT_PORT:-}"
SSL_PORT="${KAFKA_SSL_PORT:-}"
CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-}"
for p in "$PLAINTEXT_PORT" "$SSL_PORT" "$CONTROLLER_PORT"; do
  if [[ -n "$p" ]]; then
    [[ "$p" =~ ^[0-9]+$ ]] || die "bad port: $p"
    PICKED_PORTS+="$p "
    port_in_use "$p" && die "port $p (from the environment) is already in use"
  fi
done
[[ -n "$PLAINTEXT_PORT" ]] || PLAINTEXT_PORT="$(pick_port)"
PICKED_PORTS+="$PLAINTEXT_PORT "
[[ -n "$SSL_PORT" ]] || SSL_PORT="$(pick_port)"
PICKED_PORTS+="$SSL_PORT "
[[ -n "$CONTROLLER_PORT" ]] || CONTROLLER_PORT="$(pick_port)"

# --- certificates -------------------------------------------------------------
# A throwaway CA; a broker certificate for localhost/127.0.0.1 in a PKCS12
# keystore; a PKCS12 truststore with the CA; a client certificate signed by
# the CA, as PEM with a password-protected key (for librdkafka) and as a
# PKCS12 keystore (for Java tools).
log "generating certificates in $CERTS"
rand_pass() { openssl rand -hex 16; }
STORE_PASS="$(rand_pass)"
CLIENT_KEY_PASS="$(rand_pass)"
DAYS=30

cat >"$CERTS/openssl.cnf" <<'CNF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = placeholder
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[v3_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
CNF

(
  set -euo pipefail
  cd "$CERTS"
  q() { "$@" 2>openssl.err || { cat openssl.err >&2; exit 1; }; }
  # CA
  q openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem \
    -days "$DAYS" -subj "/CN=kstranded-test-ca" -config openssl.cnf -extensions v3_ca
  # Broker
  q openssl req -new -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr \
    -subj "/CN=localhost" -config openssl.cnf
  q openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -set_serial "0x$(openssl rand -hex 16)" \
    -days "$DAYS" -extfile openssl.cnf -extensions v3_server -out broker.pem
  q openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem \
    -name broker -out broker.keystore.p12 -passout "pass:$STORE_PASS"
  # Truststore (keytool marks the CA as a trusted entry; an openssl-made
  # PKCS12 would not be read as trusted by Java)
  q "$KEYTOOL_BIN" -importcert -noprompt -alias kstranded-test-ca -file ca.pem \
    -keystore truststore.p12 -storetype PKCS12 -storepass "$STORE_PASS"
  # Client
  q openssl req -new -newkey rsa:2048 -nodes -keyout client.plain.key -out client.csr \
    -subj "/CN=kstranded-test-client" -config openssl.cnf
  q openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -set_serial "0x$(openssl rand -hex 16)" \
    -days "$DAYS" -extfile openssl.cnf -extensions v3_client -out client.pem
  # PKCS#8, AES-256 encrypted ("BEGIN ENCRYPTED PRIVATE KEY"): what OpenSSL
  # and so librdkafka read with ssl.key.password.
  q openssl pkey -in client.plain.key -aes256 -passout "pass:$CLIENT_KEY_PASS" -out client.key
  # Same key in the legacy PEM encryption ("Proc-Type: 4,ENCRYPTED"), which
  # Go's crypto/x509 (DecryptPEMBlock) can still read; OpenSSL reads it too.
  q openssl rsa -in client.plain.key -aes256 -traditional -passout "pass:$CLIENT_KEY_PASS" -out client-legacy.key
  q openssl pkcs12 -export -in client.pem -inkey client.plain.key -certfile ca.pem \
    -name client -out client.keystore.p12 -passout "pass:$STORE_PASS"
  # The same client material in JKS, the Java client's default store type (kstranded
  # translates JKS stores itself: librdkafka reads none).
  q "$KEYTOOL_BIN" -importkeystore -noprompt -srckeystore client.keystore.p12 -srcstoretype PKCS12 \
    -srcstorepass "$STORE_PASS" -destkeystore client.keystore.jks -deststoretype JKS \
    -deststorepass "$STORE_PASS" -destkeypass "$STORE_PASS"
  q "$KEYTOOL_BIN" -importcert -noprompt -alias kstranded-test-ca -file ca.pem \
    -keystore truststore.jks -storetype JKS -storepass "$STORE_PASS"
  rm -f client.plain.key ./*.csr openssl.err
  chmod 600 ./*.key ./*.p12 ./*.jks
)
printf '%s\n' "$STORE_PASS" >"$CERTS/store.password"
printf '%s\n' "$CLIENT_KEY_PASS" >"$CERTS/client-key.password"
chmod 600 "$CERTS"/*.password

# librdkafka-style client config (what kstranded reads).
cat >"$KAFKA_STATE_DIR/client.properties" <<EOF
# SSL client config for the kafka testenv broker (librdkafka property names).
security.protocol=SSL
ssl.ca.location=$CERTS/ca.pem
ssl.certificate.location=$CERTS/client.pem
ssl.key.location=$CERTS/client.key
ssl.key.password=$CLIENT_KEY_PASS
EOF
# Java-client form, for Kafka's own CLI tools (--command-config).
cat >"$KAFKA_STATE_DIR/client-java.properties" <<EOF
# SSL client config for the kafka testenv broker (Java client property names).
security.protocol=SSL
ssl.truststore.type=PKCS12
ssl.truststore.location=$CERTS/truststore.p12
ssl.truststore.password=$STORE_PASS
ssl.keystore.type=PKCS12
ssl.keystore.location=$CERTS/client.keystore.p12
ssl.keystore.password=$STORE_PASS
ssl.key.password=$STORE_PASS
EOF
cat >"$KAFKA_STATE_DIR/client-java-jks.properties" <<EOF
# The same in JKS key stores (the Java client's default ssl.*.type).
security.protocol=SSL
ssl.truststore.location=$CERTS/truststore.jks
ssl.truststore.password=$STORE_PASS
ssl.keystore.location=$CERTS/client.keystore.jks
ssl.keystore.password=$STORE_PASS
ssl.key.password=$STORE_PASS
EOF
chmod 600 "$KAFKA_STATE_DIR/client.properties" "$KAFKA_STATE_DIR/client-java.properties" "$KAFKA_STATE_DIR/client-java-jks.properties"

# --- broker config ----------------------------------------------------------
cat >"$KAFKA_STATE_DIR/server.properties" <<EOF
# Generated by testenv/kafka/up.sh: single-node KRaft broker+controller.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$CONTROLLER_PORT
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://$HOST:$PLAINTEXT_PORT,SSL://$HOST:$SSL_PORT,CONTROLLER://$HOST:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$PLAINTEXT_PORT,SSL://$HOST:$SSL_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT

# SSL listener: mutual TLS, client certificate required.
listener.name.ssl.ssl.client.auth=required
ssl.keystore.type=PKCS12
ssl.keystore.location=$CERTS/broker.keystore.p12
ssl.keystore.password=$STORE_PASS
ssl.key.password=$STORE_PASS
ssl.truststore.type=PKCS12
ssl.truststore.location=$CERTS/truststore.p12
ssl.truststore.password=$STORE_PASS

log.dirs=$DATA

# Single node: every internal topic with one replica.
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1

# Tests should not wait for rebalances, and should create the topics they use
# (like kfake's default, a metadata request does not create a topic).
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
delete.topic.enable=true

# Small machine.
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
log.cleaner.threads=1
EOF
if [[ -n "${KAFKA_EXTRA_CONFIG:-}" ]]; then
  printf '\n# KAFKA_EXTRA_CONFIG\n%s\n' "$KAFKA_EXTRA_CONFIG" >>"$KAFKA_STATE_DIR/server.properties"
fi

# --- format storage ---------------------------------------------------------------
# Cluster id: 16 random bytes, URL-safe base64 without padding (Kafka's Uuid).
# Like Kafka's Uuid.randomUuid(), never one starting with '-', which the
# command line would take for an option.
CLUSTER_ID=-
while [[ "$CLUSTER_ID" == -* ]]; do
  CLUSTER_ID="$(openssl rand -base64 16 | tr '+/' '-_' | tr -d '=\n')"
done
printf '%s\n' "$CLUSTER_ID" >"$KAFKA_STATE_DIR/cluster.id"
CP="$KAFKA_LIBS_DIR/*"
log "formatting KRaft storage (cluster id $CLUSTER_ID)"
if ! "$JAVA_BIN" -Xmx256m -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
      -Dlog4j2.configurationFile="$KAFKA_TESTENV_DIR/log4j2-tools.properties" \
      -cp "$CP" kafka.tools.StorageTool format \
      --config "$KAFKA_STATE_DIR/server.properties" --cluster-id "$CLUSTER_ID" \
      >"$KAFKA_STATE_DIR/format.log" 2>&1; then
  cat "$KAFKA_STATE_DIR/format.log" >&2
  die "kafka.tools.StorageTool format failed"
fi

# --- start ------------------------------------------------------------------------
# In its own session (setsid) so that ^C in the terminal or make's process
# group does not reach it; down.sh stops it by pid.  The inner shell writes
# its own pid and then execs java, so the pid file is java's pid.
LOG="$KAFKA_STATE_DIR/broker.log"
read -r -a HEAP <<<"${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
read -r -a EXTRA_JVM <<<"${KAFKA_JVM_OPTS:-}"
SETSID=()
command -v setsid >/dev/null 2>&1 && SETSID=(setsid)
log "starting broker: PLAINTEXT $HOST:$PLAINTEXT_PORT, SSL $HOST:$SSL_PORT, controller $HOST:$CONTROLLER_PORT"
START_NS="$(date +%s%N)"
# shellcheck disable=SC2016 # $$ is for the inner shell
"${SETSID[@]}" bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$KAFKA_STATE_DIR/kafka.pid" \
  "$JAVA_BIN" "${HEAP[@]}" "${EXTRA_JVM[@]}" \
  -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
  -Djava.awt.headless=true \
  -Dlog4j2.configurationFile="$KAFKA_TESTENV_DIR/log4j2.properties" \
  -Dkafka.logs.dir="$KAFKA_STATE_DIR" \
  -cp "$CP" kafka.Kafka "$KAFKA_STATE_DIR/server.properties" \
  </dev/null >"$LOG" 2>&1 &

# Wait for the pid file (the inner shell writes it at once).
for ((i = 0; i < 50; i++)); do
  [[ -s "$KAFKA_STATE_DIR/kafka.pid" ]] && break
  sleep 0.1
done
PID="$(cat "$KAFKA_STATE_DIR/kafka.pid" 2>/dev/null || true)"
[[ -n "$PID" ]] || die "broker did not start (no pid file)"

# --- wait until it answers ----------------------------------------------------
fail_start() {
  log "ERROR: $1"
  if grep -qE '^\[[^]]*\] (ERROR|FATAL) ' "$LOG" 2>/dev/null; then
    log "first errors in $LOG:"
    grep -m 5 -A 3 -E '^\[[^]]*\] (ERROR|FATAL) ' "$LOG" >&2 || true
  fi
  log "last lines of $LOG:"
  tail -n 40 "$LOG" >&2 || true
  log "(state left in $KAFKA_STATE_DIR for inspection; down.sh removes it)"
  exit 1
}
deadline=$((SECONDS + START_TIMEOUT))
while :; do
  if ! kill -0 "$PID" 2>/dev/null; then
    fail_start "broker (pid $PID) exited during startup"
  fi
  if grep -q 'Kafka Server started' "$LOG" 2>/dev/null &&
    port_in_use "$PLAINTEXT_PORT" && port_in_use "$SSL_PORT"; then
    break
  fi
  if ((SECONDS >= deadline)); then
    fail_start "broker did not come up within ${START_TIMEOUT}s"
  fi
  sleep 0.2
done
END_NS="$(date +%s%N)"
STARTED_OK=1

# --- report -------------------------------------------------------------------------
# Values are written bare when they are plain (sourceable by sh, make and
# docker-style env files alike), single-quoted otherwise.
envline() {
  if [[ "$2" =~ ^[A-Za-z0-9_./:@,+=-]*$ ]]; then
    printf '%s=%s\n' "$1" "$2"
  else
    printf "%s='%s'\n" "$1" "${2//\'/\'\\\'\'}"
  fi
}
{
  envline KSTRANDED_TEST_BROKERS "$HOST:$PLAINTEXT_PORT"
  envline KSTRANDED_TEST_SSL_BROKERS "$HOST:$SSL_PORT"
  envline KSTRANDED_TEST_SSL_CONFIG "$KAFKA_STATE_DIR/client.properties"
} >"$KAFKA_STATE_DIR/env"
log "broker up (pid $PID) in $(((END_NS - START_NS) / 1000000)) ms; log: $LOG"
cat "$KAFKA_STATE_DIR/env"
