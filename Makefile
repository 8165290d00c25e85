# The one entry point for checks. `make test` is what CI runs.

.PHONY: test fmt-check vet wire-check race cross bench bench-smoke

test: fmt-check vet wire-check race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	go vet ./...

# wire_gen.go must match wire.go: check fails on a broken graph, diff on a stale file.
wire-check:
	go tool wire check ./...
	go tool wire diff ./...

race:
	go test -race -timeout 10m ./...

# Every package (tests included) must build and vet on the other platforms
# the project supports; `go vet` type-checks the tests too.
CROSS_PLATFORMS := darwin/amd64 darwin/arm64 windows/amd64

cross:
	@set -e; for p in $(CROSS_PLATFORMS); do \
		echo "cross: $$p"; \
		GOOS=$${p%/*} GOARCH=$${p#*/} go build ./...; \
		GOOS=$${p%/*} GOARCH=$${p#*/} go vet ./...; \
	done

# Full benchmarks (see docs/benchmarks.md for what each measures).
bench:
	go test -run '^$$' -bench . -benchmem ./...

# One iteration of every benchmark: proves they still run.
bench-smoke:
	go test -run '^$$' -bench . -benchtime 1x ./...
