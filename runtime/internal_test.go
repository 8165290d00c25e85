package runtime

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestSlowTransitionWarns(t *testing.T) {
	old := slowTransition
	slowTransition = 20 * time.Millisecond
	t.Cleanup(func() { slowTransition = old })
	var buf syncBuffer
	root := New(WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	defer root.Close()
	started, release := make(chan *Fiber), make(chan struct{})
	go func() {
		_, _ = root.Plugin(Func("slow", func(ctx *Context) error {
			started <- ctx.Fiber()
			<-release
			return nil
		}), nil)
	}()
	f := <-started
	// Release the apply only once the warning is out, whatever the load.
	go func() {
		defer close(release)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if strings.Contains(buf.String(), "level=WARN") {
				return
			}
		}
	}()
	if err := f.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "plugin=slow") ||
		!strings.Contains(got, "if this call comes from the apply itself, it never returns") {
		t.Fatalf("log: %s", got)
	}
}
