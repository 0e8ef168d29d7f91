#!/usr/bin/env bash
# Regenerates the Java key stores the kafkaconf tests read (test-only keys and passwords):
# a CA, a client certificate signed by it, and the same material as a JKS and a PKCS#12
# trust store and key store, as keytool and openssl write them.
#   cd internal/kafkaconf/testdata/java && ./make.sh
set -euo pipefail
rm -f ./*.pem ./*.key ./*.jks ./*.p12
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 36500 -subj "/CN=kstranded-test-ca" 2>/dev/null
openssl req -new -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=kstranded-test-client" 2>/dev/null
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -set_serial 2 -days 36500 -out client.pem 2>/dev/null
openssl pkcs12 -export -in client.pem -inkey client.key -certfile ca.pem -name client -out keystore.p12 -passout pass:storepass
keytool -importkeystore -noprompt -srckeystore keystore.p12 -srcstoretype PKCS12 -srcstorepass storepass \
  -destkeystore keystore.jks -deststoretype JKS -deststorepass storepass -destkeypass keypass 2>/dev/null
keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.jks -storetype JKS -storepass trustpass 2>/dev/null
keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.p12 -storetype PKCS12 -storepass trustpass 2>/dev/null
rm -f ca.key client.csr
