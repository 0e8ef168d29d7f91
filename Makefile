GO ?= go
BIN := bin/kstranded

.PHONY: build run test test-short lint bench clean

build:
	$(GO) build -o $(BIN) .

## run: the flagship reproduction on the embedded broker (no cluster needed)
run: build
	./$(BIN) repro; status=$$?; [ $$status -eq 0 ] || [ $$status -eq 3 ] || exit $$status

## test: vet, unit tests, and integration tests against the in-process broker
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

## test-short: unit tests only (skips live consumer runs)
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
