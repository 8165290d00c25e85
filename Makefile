# The one entry point for checks. `make test` is what CI runs.
GO ?= go

.PHONY: test fmt-check vet wire-check race bench bench-smoke

test: fmt-check vet wire-check race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# wire_gen.go must match wire.go (only once the injector exists).
wire-check:
	@if [ -f wire.go ]; then \
		$(GO) tool wire check ./... && $(GO) tool wire diff ./... ; \
	fi

race:
	$(GO) test -race -timeout 10m ./...

# Full benchmarks (see docs/benchmarks.md for what each measures).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# One iteration of every benchmark: proves they still run.
bench-smoke:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...
