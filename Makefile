GO ?= go
BIN := bin/kstranded

.PHONY: build run test lint bench clean

build:
	$(GO) build -o $(BIN) .

run: build
	./$(BIN) repro

test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

clean:
	rm -rf bin
