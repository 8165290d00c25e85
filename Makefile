# The one entry point for checks. `make test` is what CI runs.

.PHONY: test fmt-check vet wire-check race bench bench-smoke

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

# Full benchmarks (see docs/benchmarks.md for what each measures).
bench:
	go test -run '^$$' -bench . -benchmem ./...

# One iteration of every benchmark: proves they still run.
bench-smoke:
	go test -run '^$$' -bench . -benchtime 1x ./...
