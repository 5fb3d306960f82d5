# Targets a newcomer guesses. `make test` is the same command CI runs.
SHELL := /bin/bash
.DEFAULT_GOAL := build

SDK := plugins/sdk
PROTO_DIR := $(SDK)/internal/pb
TOOLS := $(CURDIR)/.cache/bin
PROTOC_GEN_GO := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2

# Where scripts/test-deps.sh puts the real components (read by internal/testenv).
export SKILLGATE_NPM_DIR := $(CURDIR)/test/npm/node_modules
export SKILLGATE_CONFORMANCE_SERVER := $(TOOLS)/conformance-server
export SKILLGATE_NODE22 := $(SKILLGATE_NPM_DIR)/node/bin/node

.PHONY: build test deps bench lint crossbuild proto clean

# What `skillgate version` and the start record show: the tag (dev without
# one) and the commit, also where the go command stamps no VCS information.
VERSION ?= $(shell git describe --tags --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

## build: the skillgate binary, into bin/skillgate
build:
	go build -ldflags "$(LDFLAGS)" -o bin/skillgate ./cmd/skillgate

## test: install test dependencies, vet, and run every test with -race (what CI runs)
test:
	./scripts/test.sh

## deps: install what the tests and benchmarks need (idempotent)
deps:
	bash scripts/test-deps.sh

## bench: the SDK's Go benchmarks, the components' (bench/cmd/components), then the
##   harness behind docs/PERFORMANCE.md (bench/run.sh); BENCH_FLAGS="-write
##   docs/PERFORMANCE.md" stores both tables. No test asserts speed, benchmarks do.
BENCH_FLAGS ?=
bench:
	bash scripts/test-deps.sh --bench
	if [ -f $(SDK)/go.mod ]; then cd $(SDK) && go test -run '^$$' -bench . -benchmem ./...; fi
	go run ./bench/cmd/components $(BENCH_FLAGS)
	bash bench/run.sh $(BENCH_FLAGS)

## lint: gofmt, go vet and (when installed) staticcheck, on both modules
lint:
	@unformatted=$$(find . -name '*.go' -not -path './.git/*' -not -path './.cache/*' \
		-not -path './test/npm/node_modules/*' -not -path '*/testdata/*' -print0 | xargs -0 gofmt -l); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	if [ -f $(SDK)/go.mod ]; then cd $(SDK) && go vet ./...; fi
	@if command -v staticcheck >/dev/null; then \
		echo staticcheck ./... && staticcheck ./... && \
		if [ -f $(SDK)/go.mod ]; then cd $(SDK) && echo "staticcheck ./... ($(SDK))" && staticcheck ./...; fi; \
	else echo "staticcheck not on PATH: skipped"; fi

## crossbuild: go vet for macOS and Windows, go build for linux/arm64, on all
##   three modules (scripts/crossbuild.sh; make test runs it too)
crossbuild:
	./scripts/crossbuild.sh

## proto: regenerate the plugin protocol code from $(PROTO_DIR)/executor.proto (commit the result)
proto:
	@command -v protoc >/dev/null || { echo "protoc not found: apt-get install -y protobuf-compiler" >&2; exit 1; }
	GOBIN=$(TOOLS) go install $(PROTOC_GEN_GO)
	GOBIN=$(TOOLS) go install $(PROTOC_GEN_GO_GRPC)
	cd $(PROTO_DIR) && PATH="$(TOOLS):$$PATH" protoc -I . \
		--go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative \
		executor.proto

## clean: remove build output and cached tools (test/npm/node_modules stays; delete it by hand)
clean:
	rm -rf bin .cache
