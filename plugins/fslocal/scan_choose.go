package fslocal

import (
	"runtime"
	"slices"
	"sync"
	"time"
)

const (
	// scanTrialMin is the smallest text whose scan measures the methods:
	// below it, the methods differ by a few milliseconds at most.
	scanTrialMin = 64 << 20
	// scanTrialRounds is how many trials each method gets; its fastest
	// counts, so that one preemption on a busy machine does not decide.
	scanTrialRounds = 2
	// scanRechoose is how long a measurement stands before a large scan
	// measures again, so that the choice follows the load of a shared
	// machine.
	scanRechoose = 10 * time.Second
)

// scanMethods is the process's choice: the machine, not the file, decides
// which method is fast, so one measurement serves every scan.
var scanMethods scanChooser

var _ scanStrategy = (*scanChooser)(nil)

// scanChooser scans with the method that measured fastest on this machine.
// Which one that is differs from machine to machine by several times (page
// faults on a mapping cost from about what a copy out of the page cache
// costs to several times more) and with the load (a second worker helps
// only while a second core is free). So a large scan, the first one and
// then one every scanRechoose, scans its first ranges with each method in
// turn, twice over, timing each, and the rest with the method whose faster
// trial was the fastest. The trial ranges are part of the scan, so
// measuring costs only the time the slower methods lose on them.
//
// A trial is short, and on a loaded machine a parallel method can measure
// well and then run a whole scan much slower, its workers waiting for
// cores in turn. A whole scan half as slow again as its method's time
// therefore replaces that time, and the next scan takes the method that is
// then fastest.
type scanChooser struct {
	mu        sync.Mutex
	methods   []scanConfig    // the candidates measured; nil: none yet
	perMiB    []time.Duration // each one's time per MiB: its faster trial, or a slower whole scan
	best      int             // the index of the fastest
	at        time.Time       // when measured
	measuring bool            // a scan is measuring: the others take best
}

// scanCandidates are the methods for the current GOMAXPROCS: one reading
// worker, one reading worker per CPU (at most scanWorkers), and as many
// mapping workers where files can be mapped.
func scanCandidates() []scanConfig {
	workers := min(runtime.GOMAXPROCS(0), scanWorkers)
	methods := []scanConfig{{chunk: scanReadChunk, workers: 1, read: true}}
	if workers > 1 {
		methods = append(methods, scanConfig{chunk: scanReadChunk, workers: workers, read: true})
	}
	if canMap {
		methods = append(methods, scanConfig{chunk: scanMapChunk, workers: workers})
	}
	return methods
}

func (c *scanChooser) scan(s *scan, visit func([]byte, int) error) error {
	size := s.end - s.start
	cfg, measure := c.pick(size)
	if measure {
		return c.measure(s, visit)
	}
	began := time.Now()
	err := s.run(cfg, s.start, s.end, visit)
	if err == nil && size >= scanTrialMin {
		c.observe(cfg, perMiB(time.Since(began), size))
	}
	return err
}

// pick returns the method for a text of size bytes, or that this scan
// measures them. Without a measurement for the current GOMAXPROCS, it is
// the reading method with the most workers.
func (c *scanChooser) pick(size int64) (cfg scanConfig, measure bool) {
	candidates := scanCandidates()
	c.mu.Lock()
	defer c.mu.Unlock()
	current := slices.Equal(c.methods, candidates)
	if size >= scanTrialMin && !c.measuring && (!current || time.Since(c.at) > scanRechoose) {
		c.measuring = true
		return scanConfig{}, true
	}
	if !current {
		return candidates[min(1, len(candidates)-1)], false
	}
	return c.methods[c.best], false
}

// measure scans trial ranges with each method in turn, scanTrialRounds
// times over, then the rest of the text (at least half of it) with the
// fastest, observed like a whole scan. A trial gives
// every worker one mapped chunk, or less when the trials would take more
// than half the text.
func (c *scanChooser) measure(s *scan, visit func([]byte, int) error) error {
	methods := scanCandidates()
	workers := methods[len(methods)-1].workers
	trial := min(int64(workers)*scanMapChunk, (s.end-s.start)/int64(2*scanTrialRounds*len(methods)))
	warmScanBufs(workers + 1)
	fastest := make([]time.Duration, len(methods))
	settled := false
	defer func() {
		if !settled { // a trial failed, or the visitor panicked
			c.settle(nil, nil)
		}
	}()
	pos := s.start
	for round := range scanTrialRounds {
		for i, m := range methods {
			began := time.Now()
			if err := s.run(m, pos, pos+trial, visit); err != nil {
				return err
			}
			if per := perMiB(time.Since(began), trial); round == 0 || per < fastest[i] {
				fastest[i] = per
			}
			pos += trial
		}
	}
	best := c.settle(methods, fastest)
	settled = true
	began := time.Now()
	err := s.run(best, pos, s.end, visit)
	if err == nil {
		c.observe(best, perMiB(time.Since(began), s.end-pos))
	}
	return err
}

// settle ends a measurement and returns the fastest method, or, when the
// scan failed before it measured them all (nil methods), keeps the last.
func (c *scanChooser) settle(methods []scanConfig, times []time.Duration) scanConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.measuring = false
	if methods == nil {
		return scanConfig{}
	}
	c.methods, c.perMiB, c.at = methods, times, time.Now()
	c.best = fastestOf(times)
	return methods[c.best]
}

// observe notes a large scan's time per MiB with method cfg: half as slow
// again as the chosen method's time, it becomes that method's time, and
// the fastest then is chosen. (A trial includes the start and end of a
// run, so a whole scan is normally faster than its method's trial.)
func (c *scanChooser) observe(cfg scanConfig, per time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.methods != nil && cfg == c.methods[c.best] && per > c.perMiB[c.best]*3/2 {
		c.perMiB[c.best] = per
		c.best = fastestOf(c.perMiB)
	}
}

func fastestOf(times []time.Duration) int {
	return slices.Index(times, slices.Min(times))
}

func perMiB(d time.Duration, bytes int64) time.Duration {
	return time.Duration(int64(d) * (1 << 20) / max(bytes, 1))
}

// warmScanBufs faults in the pages of n read buffers, so that a reading
// method's trial is not charged with what only a process's first scan pays.
func warmScanBufs(n int) {
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = getScanBuf(scanBufSize)
		clear(bufs[i])
	}
	for _, b := range bufs {
		putScanBuf(b)
	}
}
