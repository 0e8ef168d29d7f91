// Package integration holds kstranded's black-box integration tests. TestMain builds
// the kstranded binary once; the tests run it as a user would (flags, exit codes,
// stdout, stderr) and check what it prints against what the broker holds.
//
// The brokers come from the environment that testenv/kafka writes
// (KSTRANDED_TEST_BROKERS, KSTRANDED_TEST_SSL_BROKERS, KSTRANDED_TEST_SSL_CONFIG): with
// it the suite runs against a real Apache Kafka broker, over plaintext and mutual TLS;
// without it, against kfake started in process, where the mTLS cases are skipped. The
// assertions are the same in both modes; where kfake and Kafka differ, testenv/kafka's
// README says so and the tests assert Kafka's behaviour.
//
// The package has no non-test code.
package integration
