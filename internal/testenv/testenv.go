// Package testenv holds the guards of kstranded's test tiers, in the style of the
// standard library's internal/testenv: a test calls one first and is skipped, with the
// reason and the command that runs it, where its tier is not selected.
//
// The tiers (Makefile):
//   - make test: vet, unit tests, simulated runs (virtual time) and the integration
//     tests that are not timing-sensitive, packages in parallel. Live consumer runs that
//     are quick and whose outcome does not depend on the machine's timing stay here.
//   - make test-live: KSTRANDED_LIVE=1, one package at a time. The live runs of the
//     consumer model over librdkafka at scaled time (repro's default 1/100) against the
//     embedded broker: their outcome depends on when librdkafka's fetches land, so they
//     need a machine that is not busy with other tests.
//   - make test-kafka: the same with a real Apache Kafka broker (testenv/kafka), also
//     with KSTRANDED_LIVE=1.
//   - make test-short (-short): no live consumer at all; SkipShort and MustLive both skip.
package testenv

import (
	"os"
	"testing"
)

// LiveVar is the environment variable that selects the live tier.
const LiveVar = "KSTRANDED_LIVE"

// Live reports whether the live tier is selected: KSTRANDED_LIVE=1 and not -short.
// For TestMain, which has no *testing.T (call flag.Parse first: testing.Short panics
// before it); tests call MustLive.
func Live() bool {
	return os.Getenv(LiveVar) == "1" && !testing.Short()
}

// MustLive skips t unless the live tier is selected (KSTRANDED_LIVE=1, as make
// test-live and make test-kafka set it). Call it first in a test that runs a live
// consumer at scaled time and whose outcome or duration depends on the machine's
// timing. The skip message names the tier.
func MustLive(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("live consumer run at scaled time: skipped in -short mode (make test-live runs it)")
	}
	if os.Getenv(LiveVar) != "1" {
		t.Skipf("live consumer run at scaled time, timing-sensitive: set %s=1 to run it (make test-live, make test-kafka)", LiveVar)
	}
}

// SkipShort skips t in -short mode (make test-short promises no live consumer): for the
// live runs that stay in make test because they are quick and not timing-sensitive.
// why says what the test runs.
func SkipShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: skipped in -short mode", why)
	}
}
