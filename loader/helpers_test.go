package loader_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// Config is the test plugins' config.
type Config struct {
	Greeting string `json:"greeting,omitempty" jsonschema:"default=hi"`
	Limit    int    `json:"limit,omitempty" jsonschema:"minimum=1"`
	Roots    []Root `json:"roots,omitempty"`
}

type Root struct {
	Path     string `json:"path"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// recorder logs what the test plugins do, in order.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

// take returns the lines so far and forgets them.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.lines
	r.lines = nil
	return out
}

// Store is the service the "store" plugin provides.
type Store struct{ Name string }

var storeService = runtime.NewService[*Store]("store")

// plugins returns the test catalogue: "counter" restarts on a new config,
// "live" takes it in place (OnUpdate), "store" provides the store service
// named by its greeting, and "reader" injects it and says which it sees
// and what the intercept layers make of its config.
func plugins(t testing.TB, rec *recorder) *loader.Catalog {
	t.Helper()
	counter := runtime.Configured("counter", func(ctx *runtime.Context, c Config) error {
		rec.add("apply counter %s %d", c.Greeting, c.Limit)
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error { rec.add("dispose counter %s", c.Greeting); return nil }, nil
		})
		return err
	})
	live := runtime.Configured("live", func(ctx *runtime.Context, c Config) error {
		rec.add("apply live %s %d", c.Greeting, c.Limit)
		if err := ctx.OnUpdate(func(config any) error {
			c := config.(Config)
			rec.add("update live %s %d", c.Greeting, c.Limit)
			return nil
		}); err != nil {
			return err
		}
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error { rec.add("dispose live %s", c.Greeting); return nil }, nil
		})
		return err
	})
	store := runtime.Configured("store", func(ctx *runtime.Context, c Config) error {
		rec.add("apply store %s", c.Greeting)
		return storeService.Provide(ctx, &Store{Name: c.Greeting})
	})
	reader := runtime.Configured("reader", func(ctx *runtime.Context, c Config) error {
		s, err := storeService.Get(ctx)
		if err != nil {
			return err
		}
		layered, err := runtime.ResolveConfig(ctx, "store", c)
		if err != nil {
			return err
		}
		rec.add("reader %s sees %s (greeting %s)", c.Greeting, s.Name, layered.Greeting)
		return nil
	}, runtime.Inject(storeService))
	plain := runtime.Func("plain", func(ctx *runtime.Context) error {
		rec.add("apply plain")
		return nil
	})
	cat, err := loader.NewCatalog(counter, live, store, reader, plain)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// setup writes text to a file and opens it under a fresh root.
func setup(t *testing.T, text string) (*loader.Loader, *recorder, string) {
	t.Helper()
	rec := &recorder{}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), text)
	root := runtimetest.New(t)
	l, err := loader.Open(root, file, plugins(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, rec, file
}

func write(t testing.TB, file, text string) string {
	t.Helper()
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// rewrite writes text to file and reloads l, which must apply it without
// an error.
func rewrite(t testing.TB, l *loader.Loader, file, text string) {
	t.Helper()
	write(t, file, text)
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func expect(t *testing.T, rec *recorder, want ...string) {
	t.Helper()
	got := rec.take()
	if !slices.Equal(got, want) {
		t.Fatalf("got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}
