# The one entry point for checks. `make test` is what CI runs; `make quick`
# is the same tests without the race detector, for the edit-test loop.

.PHONY: test quick fmt-check vet wire-check race cross bench bench-smoke bench-tools bench-mcp-load

# go test -race needs every package compiled for the race detector; vet and
# wire load packages with the same flag, so a cold run compiles the tree once
# rather than once per mode.
test: export GOFLAGS := $(strip $(shell go env GOFLAGS) -race)
test: fmt-check vet wire-check race
	@echo "== make test: all checks passed"

quick:
	@echo "== go test ./... (no race detector: quicker, but blind to data races; make test runs it)"
	go test -timeout 10m ./...

fmt-check:
	@echo "== gofmt: every Go file is formatted"
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	@echo "== go vet ./...: suspicious constructs"
	go vet ./...

# wire_gen.go must match wire.go: check fails on a broken graph, diff on a stale file.
wire-check:
	@echo "== wire check: the deployment graph in wire.go resolves (builds the wire tool on a cold cache)"
	go tool wire check ./...
	@echo "== wire diff: wire_gen.go is what go tool wire gen would write"
	go tool wire diff ./...

race:
	@echo "== go test -race ./...: every package's tests under the race detector"
	go test -race -timeout 10m ./...

# Every package (tests included) must build and vet on the other platforms
# the project supports; `go vet` type-checks the tests too.
CROSS_PLATFORMS := darwin/amd64 darwin/arm64 windows/amd64

cross:
	@set -e; for p in $(CROSS_PLATFORMS); do \
		echo "== go build and go vet for $$p"; \
		GOOS=$${p%/*} GOARCH=$${p#*/} go build ./...; \
		GOOS=$${p%/*} GOARCH=$${p#*/} go vet ./...; \
	done

# Full benchmarks (see docs/benchmarks.md for what each measures).
bench:
	go test -run '^$$' -bench . -benchmem ./...

# One iteration of every benchmark: proves they still run.
bench-smoke:
	go test -run '^$$' -bench . -benchtime 1x ./...

# The tool-level workloads, each call in a fresh process, next to its floor
# (wc -l, ls -f, cp + sync + mv, dd conv=fsync, rg). Pass flags with ARGS, e.g.
# make bench-tools ARGS=-quick, or ARGS="-runs 9 -read-mib 256".
bench-tools:
	go run ./cmd/benchtools $(ARGS)

# cmd/mcp under N concurrent sessions of small reads and edits, over HTTP (one
# server) and stdio (a server per session): latency, throughput, memory. Pass
# flags with ARGS, e.g. make bench-mcp-load ARGS="-sessions 1,10 -interval 1s",
# or ARGS="-sessions 500 -transport http -settle 130s" for the memory a server
# gives back after its next forced collection.
bench-mcp-load:
	go run ./cmd/mcp/load $(ARGS)
