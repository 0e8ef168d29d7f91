GO ?= go
BIN := bin/kstranded
PKG := github.com/kstranded/kstranded
# kstranded links librdkafka through cgo: a C compiler (gcc) is required
export CGO_ENABLED := 1

# stamped into `kstranded version` and every JSON document's _version
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X $(PKG)/internal/buildinfo.version=$(VERSION) -X $(PKG)/internal/buildinfo.commit=$(COMMIT) -X $(PKG)/internal/buildinfo.date=$(DATE)

.PHONY: build install man run test test-live test-short test-otel test-jsclient lint bench clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) .

## install: kstranded into $(go env GOPATH)/bin (or $GOBIN), version stamped
install:
	$(GO) install -ldflags "$(LDFLAGS)" .

## man: man pages from the command tree into docs/man (man -l docs/man/kstranded.1)
man:
	$(GO) run ./internal/mangen docs/man

## run: the flagship reproduction on the embedded broker (no cluster needed)
run: build
	./$(BIN) repro; status=$$?; [ $$status -eq 0 ] || [ $$status -eq 3 ] || exit $$status

## test: vet, unit tests, simulated runs and the integration tests on the in-process
## broker, packages in parallel (the timing-sensitive live runs skip: make test-live)
test:
	$(GO) vet ./...
	KSTRANDED_LIVE= $(GO) test -count=1 ./...   # the live tier stays out, whatever the environment says

# The packages with live tests (internal/testenv.MustLive), found, not listed.
LIVE_PKGS = $(sort $(dir $(shell grep -rl --include='*_test.go' 'testenv\.MustLive' . | grep -v '^./internal/testenv/')))

## test-live: the live runs of the consumer model over librdkafka at scaled time on the
## embedded broker (KSTRANDED_LIVE=1), one package at a time: they are timing-sensitive
test-live:
	KSTRANDED_LIVE=1 $(GO) test -count=1 -p 1 $(LIVE_PKGS)

## test-otel: the OpenTelemetry pipeline: a kafkajs consumer with
## @opentelemetry/instrumentation-kafkajs (testenv/otel, npm ci into ~/.cache/kstranded,
## instant once installed) exports spans to `kstranded watch --otlp`. Needs Node.js >= 20 and npm.
test-otel:
	KSTRANDED_TEST_OTEL=1 $(GO) test -count=1 ./integration -run 'OpenTelemetry' -v

## test-jsclient: the agreement suite: the real @confluentinc/kafka-javascript 1.10.0 and
## 1.10.1 (compiled from npm into ~/.cache/kstranded by jsclient.Ensure, once)
## against the model on the shapes of integration/jsclient_test.go. Needs Node.js, npm, a C
## toolchain, libzstd-dev liblz4-dev libsasl2-dev libcurl4-openssl-dev. About 43 minutes
## (33 shapes on each release: 2,452 s for 31 in the CI run of 2026-12-07, 08:07;
## outside-pause-every-member and handler-pause-member-leaves, added that day, about 30 s
## each a release).
test-jsclient:
	KSTRANDED_TEST_JSCLIENT=1 $(GO) test -count=1 -timeout 60m ./integration -run 'JSClient' -v

## test-short: unit tests only, no live consumer (-short skips every run of one)
test-short:
	$(GO) test -count=1 -short ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## bench: Go benchmarks, then the scripts under bench/ (figures go to BENCHMARKS.md)
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	@for s in bench/*.sh; do [ -f "$$s" ] && echo "== $$s" && bash "$$s"; done; true

clean:
	rm -rf bin

include testenv/kafka/kafka.mk

# The real broker runs the live tier too.
test-kafka: export KSTRANDED_LIVE = 1
