package fslocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// A chooser measures on a large scan when it has no current choice (none
// yet, an old one, one that ran slow, or one for another GOMAXPROCS), and
// one scan at a time; every other scan takes the choice, or, without one,
// the reading method with the most workers.
func TestScanChooserPick(t *testing.T) {
	methods := scanCandidates()
	fallback := methods[min(1, len(methods)-1)]
	one := methods[0]
	otherProcs := scanConfig{chunk: scanReadChunk, workers: scanWorkers + 1, read: true}
	const old = scanRechoose + time.Second
	tests := []struct {
		name        string
		best        scanConfig // zero: none yet
		age         time.Duration
		slowed      bool
		measuring   bool
		size        int64
		want        scanConfig
		wantMeasure bool
	}{
		{"none yet, small text", scanConfig{}, 0, false, false, scanTrialMin - 1, fallback, false},
		{"none yet, large text", scanConfig{}, 0, false, false, scanTrialMin, scanConfig{}, true},
		{"none yet, another scan measuring", scanConfig{}, 0, false, true, scanTrialMin, fallback, false},
		{"current, small text", one, 0, false, false, 1, one, false},
		{"current, large text", one, 0, false, false, scanTrialMin, one, false},
		{"old, large text", one, old, false, false, scanTrialMin, scanConfig{}, true},
		{"old, small text", one, old, false, false, scanTrialMin - 1, one, false},
		{"old, another scan measuring", one, old, false, true, scanTrialMin, one, false},
		{"ran slow, large text", one, 0, true, false, scanTrialMin, scanConfig{}, true},
		{"ran slow, small text", one, 0, true, false, 1, one, false},
		{"other GOMAXPROCS, large text", otherProcs, 0, false, false, scanTrialMin, scanConfig{}, true},
		{"other GOMAXPROCS, small text", otherProcs, 0, false, false, 1, fallback, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &scanChooser{best: tt.best, slowed: tt.slowed, measuring: tt.measuring}
			if tt.best.workers > 0 {
				c.at = time.Now().Add(-tt.age)
			}
			got, measure := c.pick(tt.size)
			if got != tt.want || measure != tt.wantMeasure {
				t.Fatalf("pick = %+v, %v; want %+v, %v", got, measure, tt.want, tt.wantMeasure)
			}
			if measure && !c.measuring {
				t.Fatal("measuring, not marked")
			}
		})
	}
}

// A large scan half as slow again as its method measured marks the choice
// slow; a slower scan of another method, or a faster one, does not; a new
// measurement clears it.
func TestScanChooserObserve(t *testing.T) {
	methods := scanCandidates()
	best, other := methods[0], methods[len(methods)-1]
	if best == other {
		other.workers++
	}
	tests := []struct {
		name string
		cfg  scanConfig
		per  time.Duration
		want bool
	}{
		{"faster", best, 50 * time.Microsecond, false},
		{"a little slower", best, 149 * time.Microsecond, false},
		{"much slower", best, 151 * time.Microsecond, true},
		{"another method, much slower", other, time.Millisecond, false},
	}
	for _, tt := range tests {
		var c scanChooser
		c.settle(best, 100*time.Microsecond)
		c.observe(tt.cfg, tt.per)
		if c.slowed != tt.want {
			t.Fatalf("%s: slowed = %v", tt.name, c.slowed)
		}
		c.settle(best, 100*time.Microsecond)
		if c.slowed {
			t.Fatalf("%s: still slowed after measuring", tt.name)
		}
	}
}

// measuredFile writes size bytes of 100-byte lines with a 4-byte character
// across every cut, and a bad byte at offset at when at >= 0.
func measuredFile(t *testing.T, path string, size int, cuts []int, at int) {
	t.Helper()
	data := bytes.Repeat([]byte(fmt.Sprintf("%099d\n", 0)), size/100+1)[:size]
	for _, k := range cuts {
		copy(data[k-2:], "😀")
	}
	if at >= 0 {
		data[at] = 0xFF
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// chunkCuts are where the chunks of any method are cut in [from, to):
// every MiB from from.
func chunkCuts(from, to int) []int {
	var cuts []int
	for k := from + 1<<20; k < to; k += 1 << 20 {
		cuts = append(cuts, k)
	}
	return cuts
}

// measuring makes every scan measure, whatever the text's size.
type measuring struct{ c *scanChooser }

func (m measuring) scan(s *scan, visit func([]byte, int) error) error { return m.c.measure(s, visit) }

// A measuring scan, its trial ranges scanned by each method in turn, gives
// what ReadText gives, valid or not (a bad byte in a trial range or in the
// rest), and leaves a choice among the candidates.
func TestScanMeasuring(t *testing.T) {
	dir := t.TempDir()
	f := New(dir)
	path := filepath.Join(dir, "big.txt")
	methods := scanCandidates()
	const size = 25<<20 + 5
	trial := min(methods[len(methods)-1].workers*scanMapChunk, size/(2*scanTrialRounds*len(methods)))
	trials := scanTrialRounds * len(methods) * trial
	var cuts []int
	for r := 0; r < trials; r += trial {
		cuts = append(append(cuts, chunkCuts(r, r+trial)...), r+trial)
	}
	cuts = append(cuts, chunkCuts(trials, size)...)
	for _, at := range []int{-1, trial + 12345, trials - 1, trials + 777} {
		measuredFile(t, path, size, cuts, at)
		var c scanChooser
		wantLikeReadText(t, f, path, measuring{&c})
		if at < 0 && (c.at.IsZero() || c.measuring || !isCandidate(c.best)) {
			t.Fatalf("after measuring: %+v", &c)
		}
	}
}

// Concurrent large scans sharing one chooser give what ReadText gives and
// leave one choice.
func TestScanChooserConcurrent(t *testing.T) {
	dir := t.TempDir()
	f := New(dir)
	path := filepath.Join(dir, "big.txt")
	measuredFile(t, path, scanTrialMin, chunkCuts(0, scanTrialMin), -1)
	tg := fs.Target{Key: path, Path: path}
	want, err := f.ReadText(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	var c scanChooser
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			var got bytes.Buffer
			err := scanLines(context.Background(), tg, info.Version, &c, func(b []byte, _ int) error {
				got.Write(b)
				return nil
			})
			if err != nil || got.String() != want {
				t.Errorf("scanned %d bytes, %v; want %d bytes", got.Len(), err, len(want))
			}
		})
	}
	wg.Wait()
	if c.at.IsZero() || c.measuring || !isCandidate(c.best) {
		t.Fatalf("after concurrent scans: %+v", &c)
	}
}

func isCandidate(cfg scanConfig) bool {
	for _, m := range scanCandidates() {
		if m == cfg {
			return true
		}
	}
	return false
}

// A measuring scan stopped during its trials (cancelled, or by the
// visitor) ends the measurement without a choice, so a later scan
// measures.
func TestScanMeasuringStopped(t *testing.T) {
	dir := t.TempDir()
	f := New(dir)
	path := filepath.Join(dir, "big.txt")
	measuredFile(t, path, scanTrialMin, chunkCuts(0, scanTrialMin), -1)
	tg := fs.Target{Key: path, Path: path}
	info, err := f.Stat(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tt := range []struct {
		name    string
		ctx     context.Context
		visit   func() error
		wantErr string
	}{
		{"cancelled", ctx, func() error { cancel(); return nil }, "read aborted"},
		{"visitor error", context.Background(), func() error { return stop }, "stop"},
	} {
		var c scanChooser
		err := scanLines(tt.ctx, tg, info.Version, &c, func([]byte, int) error { return tt.visit() })
		if fmt.Sprint(err) != tt.wantErr {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if c.measuring || !c.at.IsZero() {
			t.Fatalf("%s: after the stopped scan: %+v", tt.name, &c)
		}
		if _, measure := c.pick(scanTrialMin); !measure {
			t.Fatalf("%s: the next large scan does not measure", tt.name)
		}
	}
}
