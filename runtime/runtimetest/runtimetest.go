// Package runtimetest helps test plugins and hosts built on the runtime: a
// root closed with the test, a plug that requires the plugin to become
// ACTIVE, and a slog handler that records what the runtime and the plugins
// log.
//
//	func TestMyPlugin(t *testing.T) {
//		root := runtimetest.New(t)
//		runtimetest.Plug(t, root, fslocal.Plugin, fslocal.Config{Cwd: t.TempDir()})
//		fiber := runtimetest.Plug(t, root, myplugin.Plugin, nil)
//		...
//	}
package runtimetest

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/gordis-run/gordis/runtime"
)

// New returns a root context that is closed when the test ends; an error
// from Close fails the test. Its logs are discarded unless opts set a
// logger (for instance one on a [Logs]).
func New(t testing.TB, opts ...runtime.Option) *runtime.Context {
	t.Helper()
	opts = append([]runtime.Option{runtime.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	root := runtime.New(opts...)
	t.Cleanup(func() {
		if err := root.Close(); err != nil {
			t.Errorf("closing the root: %v", err)
		}
	})
	return root
}

// errNotActive ends the wait in Plug: a plugin whose services are all
// provided is ACTIVE by the time Plugin returns.
var errNotActive = errors.New("not active when Plugin returned")

// Plug applies p under ctx with config and fails the test unless the fiber
// is ACTIVE once Plugin returns: the message carries the plugin's config or
// apply error, or the services it still waits for.
func Plug(t testing.TB, ctx *runtime.Context, p runtime.Plugin, config any) *runtime.Fiber {
	t.Helper()
	f, err := ctx.Plugin(p, config)
	if err != nil {
		t.Fatalf("plugging: %v", err) // the error names the plugin
	}
	// Wait lets a transition running on another goroutine finish; the
	// expired context then makes WaitActive report instead of waiting for a
	// provider that nobody is going to plug.
	if err := f.Wait(); err != nil {
		t.Fatalf("plugging %s: %v", f.Name(), err)
	}
	expired, cancel := context.WithCancelCause(context.Background())
	cancel(errNotActive)
	if err := f.WaitActive(expired); err != nil {
		t.Fatalf("plugging %s: %v", f.Name(), err)
	}
	return f
}
