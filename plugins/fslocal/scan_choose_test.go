package fslocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// A chooser measures on a large scan when it has no current measurement
// (none yet, an old one, or one for another GOMAXPROCS), and one scan at a
// time; every other scan takes the fastest method, or, without a
// measurement, the reading method with the most workers.
func TestScanChooserPick(t *testing.T) {
	methods := scanCandidates()
	fallback := methods[min(1, len(methods)-1)]
	last := len(methods) - 1
	otherProcs := append(slices.Clone(methods), scanConfig{chunk: scanReadChunk, workers: scanWorkers + 1, read: true})
	const old = scanRechoose + time.Second
	tests := []struct {
		name        string
		methods     []scanConfig // nil: none yet
		age         time.Duration
		measuring   bool
		size        int64
		want        scanConfig
		wantMeasure bool
	}{
		{"none yet, small text", nil, 0, false, scanTrialMin - 1, fallback, false},
		{"none yet, large text", nil, 0, false, scanTrialMin, scanConfig{}, true},
		{"none yet, another scan measuring", nil, 0, true, scanTrialMin, fallback, false},
		{"current, small text", methods, 0, false, 1, methods[last], false},
		{"current, large text", methods, 0, false, scanTrialMin, methods[last], false},
		{"old, large text", methods, old, false, scanTrialMin, scanConfig{}, true},
		{"old, small text", methods, old, false, scanTrialMin - 1, methods[last], false},
		{"old, another scan measuring", methods, old, true, scanTrialMin, methods[last], false},
		{"other GOMAXPROCS, large text", otherProcs, 0, false, scanTrialMin, scanConfig{}, true},
		{"other GOMAXPROCS, small text", otherProcs, 0, false, 1, fallback, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &scanChooser{methods: tt.methods, best: last, measuring: tt.measuring}
			if tt.methods != nil {
				c.at = time.Now().Add(-tt.age)
				c.perMiB = make([]time.Duration, len(tt.methods))
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

// A whole scan half as slow again as the chosen method's time replaces
// that time, and the fastest then is chosen; a faster or a little slower
// scan, or one by another method, changes nothing.
func TestScanChooserObserve(t *testing.T) {
	a, b, c := scanConfig{chunk: 1, workers: 1}, scanConfig{chunk: 2, workers: 1}, scanConfig{chunk: 3, workers: 1}
	const us = time.Microsecond
	tests := []struct {
		name       string
		observed   []scanConfig
		per        []time.Duration
		wantBest   scanConfig
		wantPerMiB []time.Duration
	}{
		{"faster", []scanConfig{a}, []time.Duration{50 * us}, a, []time.Duration{100 * us, 140 * us, 200 * us}},
		{"a little slower", []scanConfig{a}, []time.Duration{150 * us}, a, []time.Duration{100 * us, 140 * us, 200 * us}},
		{"much slower", []scanConfig{a}, []time.Duration{151 * us}, b, []time.Duration{151 * us, 140 * us, 200 * us}},
		{"another method, much slower", []scanConfig{b}, []time.Duration{time.Millisecond}, a, []time.Duration{100 * us, 140 * us, 200 * us}},
		{"both read ones much slower", []scanConfig{a, b}, []time.Duration{300 * us, 400 * us}, c, []time.Duration{300 * us, 400 * us, 200 * us}},
		{"back to the first", []scanConfig{a, b}, []time.Duration{160 * us, 400 * us}, a, []time.Duration{160 * us, 400 * us, 200 * us}},
	}
	for _, tt := range tests {
		var ch scanChooser
		ch.settle([]scanConfig{a, b, c}, []time.Duration{100 * us, 140 * us, 200 * us})
		for i, cfg := range tt.observed {
			ch.observe(cfg, tt.per[i])
		}
		if got := ch.methods[ch.best]; got != tt.wantBest || !slices.Equal(ch.perMiB, tt.wantPerMiB) {
			t.Fatalf("%s: best %+v, times %v; want %+v, %v", tt.name, got, ch.perMiB, tt.wantBest, tt.wantPerMiB)
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

// largeText writes a valid text just large enough that its scans measure,
// and returns it with its version.
func largeText(t *testing.T) (*FS, fs.Target, fs.Version) {
	t.Helper()
	dir := t.TempDir()
	f := NewUnconfined(dir)
	path := filepath.Join(dir, "big.txt")
	measuredFile(t, path, scanTrialMin, chunkCuts(0, scanTrialMin), -1)
	tg := fs.Target{Key: path, Path: path}
	info, err := f.Stat(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	return f, tg, info.Version
}

// measuring makes every scan measure, whatever the text's size.
type measuring struct{ c *scanChooser }

func (m measuring) scan(s *scan, visit func([]byte, int) error) error { return m.c.measure(s, visit) }

// A measuring scan, its trial ranges scanned by each method in turn, gives
// what ReadText gives, valid or not (a bad byte in a trial range or in the
// rest), and leaves a choice among the candidates.
func TestScanMeasuring(t *testing.T) {
	dir := t.TempDir()
	f := NewUnconfined(dir)
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
		if at < 0 && (c.at.IsZero() || c.measuring || !slices.Equal(c.methods, scanCandidates())) {
			t.Fatalf("after measuring: %+v", &c)
		}
	}
}

// Concurrent large scans sharing one chooser give what ReadText gives and
// leave one choice.
func TestScanChooserConcurrent(t *testing.T) {
	f, tg, v := largeText(t)
	want, err := f.ReadText(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	var c scanChooser
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			var got bytes.Buffer
			err := f.scanLines(context.Background(), tg, v, &c, func(b []byte, _ int) error {
				got.Write(b)
				return nil
			})
			if err != nil || got.String() != want {
				t.Errorf("scanned %d bytes, %v; want %d bytes", got.Len(), err, len(want))
			}
		})
	}
	wg.Wait()
	if c.at.IsZero() || c.measuring || !slices.Equal(c.methods, scanCandidates()) {
		t.Fatalf("after concurrent scans: %+v", &c)
	}
}

// A measuring scan stopped during its trials (cancelled, by the visitor's
// error, or by its panic) ends the measurement without a choice, so a
// later scan measures.
func TestScanMeasuringStopped(t *testing.T) {
	f, tg, v := largeText(t)
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
		{"visitor panic", context.Background(), func() error { panic(stop) }, "panic: stop"},
	} {
		var c scanChooser
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return f.scanLines(tt.ctx, tg, v, &c, func([]byte, int) error { return tt.visit() })
		}()
		if fmt.Sprint(err) != tt.wantErr {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if c.measuring || c.methods != nil {
			t.Fatalf("%s: after the stopped scan: %+v", tt.name, &c)
		}
		if _, measure := c.pick(scanTrialMin); !measure {
			t.Fatalf("%s: the next large scan does not measure", tt.name)
		}
	}
}
