package main

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/registry"
)

// A trace that cannot be written says so when it is closed, instead of
// ending as if every line had been kept.
func TestTraceWriteError(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /dev/full")
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	closeTrace, err := startTrace(d, "/dev/full")
	if err != nil {
		cleanup()
		t.Fatal(err)
	}
	d.Tools.Execute(context.Background(), &registry.Call{ID: "1", Tool: "list", Args: []byte(`{}`)})
	cleanup() // drains the observers
	if err := closeTrace(); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("close of a trace on /dev/full: %v, want the write error", err)
	}
}
