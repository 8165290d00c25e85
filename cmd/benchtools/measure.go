package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gordis-run/gordis/internal/peakrss"
)

// sample is one process's measure.
type sample struct {
	call, process time.Duration // call: as the child timed it; 0 for a floor
	peakRSS       int64         // bytes; 0 where the platform does not say
}

type result struct {
	w     workload
	calls []sample
	// floors holds the samples of each of w.floors.
	floors [][]sample
}

// measure runs the workload's call and its floors runs times each,
// alternately, so that all see the same machine. One floor (the call
// when there is none) runs once first, unmeasured: it brings the files
// into the page cache for all.
func measure(ctx context.Context, self string, w workload, runs int) (result, error) {
	r := result{w: w, floors: make([][]sample, len(w.floors))}
	call := func() (sample, error) { return runReplay(ctx, w) }
	if w.replay == "" {
		args := []string{childFlag, w.workspace, w.tool, w.argsFile}
		if w.readFirst != "" {
			args = append(args, w.readFirst)
		}
		call = func() (sample, error) { return runChild(ctx, self, args, w.reset) }
	}
	warm := call
	if len(w.floors) > 0 {
		warm = func() (sample, error) { return runFloor(ctx, w, w.floors[0]) }
	}
	if _, err := warm(); err != nil {
		return r, err
	}
	for range runs {
		s, err := call()
		if err != nil {
			return r, err
		}
		r.calls = append(r.calls, s)
		for i, f := range w.floors {
			s, err := runFloor(ctx, w, f)
			if err != nil {
				return r, err
			}
			r.floors[i] = append(r.floors[i], s)
		}
	}
	return r, nil
}

// runChild runs the tool call in a child. The child reports its own peak
// RSS: the one wait4 gives counts the memory of the process that started
// it, as Linux keeps the larger of the two across exec.
func runChild(ctx context.Context, self string, args []string, reset func() error) (sample, error) {
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	s, err := timed(cmd, reset)
	if err != nil {
		return s, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var ns, rss int64
	if _, err := fmt.Sscan(out.String(), &ns, &rss); err != nil {
		return s, fmt.Errorf("child printed %q", out.String())
	}
	s.call = time.Duration(ns)
	if rss > 0 {
		s.peakRSS = rss
	}
	return s, nil
}

// timeCommand is GNU time, which measures the floors' peak RSS from a
// process of its own size rather than the harness's (see runChild); its
// last line of stderr is "peakRSS=KiB".
const timeCommand = "/usr/bin/time"

// runFloor runs the floor f of w in w's workspace; what it prints is read
// and dropped, as a caller would read it.
func runFloor(ctx context.Context, w workload, f floor) (sample, error) {
	return runCommand(ctx, f.argv, w.workspace, w.reset, io.Discard)
}

// runCommand runs argv in dir, through GNU time when there is one,
// writing its output to stdout.
func runCommand(ctx context.Context, argv []string, dir string, reset func() error, stdout io.Writer) (sample, error) {
	_, err := os.Stat(timeCommand)
	viaTime := err == nil
	if viaTime {
		argv = append([]string{timeCommand, "-f", "peakRSS=%M"}, argv...)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stdout, &stderr
	s, err := timed(cmd, reset)
	if err != nil {
		return s, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if viaTime {
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		kib, err := strconv.ParseInt(strings.TrimPrefix(lines[len(lines)-1], "peakRSS="), 10, 64)
		if err != nil {
			return s, fmt.Errorf("%s printed %q", timeCommand, stderr.String())
		}
		s.peakRSS = kib << 10
	}
	return s, nil
}

// timed runs cmd after reset and measures its wall time, and its peak RSS
// as wait4 reports it.
func timed(cmd *exec.Cmd, reset func() error) (sample, error) {
	if reset != nil {
		if err := reset(); err != nil {
			return sample{}, err
		}
	}
	start := time.Now()
	err := cmd.Run()
	s := sample{process: time.Since(start)}
	if err != nil {
		return s, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	s.peakRSS, _ = peakrss.Of(cmd.ProcessState)
	return s, nil
}

// stats are the median, min and max of some durations.
type stats struct{ median, min, max time.Duration }

func statsOf(samples []sample, of func(sample) time.Duration) stats {
	d := make([]time.Duration, len(samples))
	for i, s := range samples {
		d[i] = of(s)
	}
	slices.Sort(d)
	median := d[len(d)/2]
	if len(d)%2 == 0 {
		median = (d[len(d)/2-1] + d[len(d)/2]) / 2
	}
	return stats{median, d[0], d[len(d)-1]}
}

func (s stats) String() string {
	return fmt.Sprintf("%s (%s–%s)", ms(s.median), ms(s.min), ms(s.max))
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

// peakOf is the largest peak RSS of samples, 0 where the platform does
// not say.
func peakOf(samples []sample) int64 {
	var peak int64
	for _, s := range samples {
		peak = max(peak, s.peakRSS)
	}
	return peak
}

func mib(bytes int64) string {
	if bytes == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(bytes)/(1<<20), 'f', 1, 64)
}

// ratio is a/b as the table shows it.
func ratio(a, b time.Duration) string {
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}

// printTable prints a row for each workload and its first floor, then a
// row for each further floor, with the call's cells left empty.
func printTable(w io.Writer, results []result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tcall ms\tprocess ms\tpeak RSS MiB\tfloor\tfloor ms\tfloor RSS MiB\tcall/floor\tprocess/floor\t")
	process := func(s sample) time.Duration { return s.process }
	for _, r := range results {
		call := statsOf(r.calls, func(s sample) time.Duration { return s.call })
		proc := statsOf(r.calls, process)
		callCell := call.String()
		if r.w.replay != "" {
			callCell = "-"
		}
		peak := peakOf(r.calls)
		rss := mib(peak)
		if r.w.maxRSS > 0 && peak > r.w.maxRSS {
			rss += fmt.Sprintf(" OVER %d", r.w.maxRSS>>20)
		}
		row := []string{r.w.name, callCell, proc.String(), rss}
		if len(r.w.floors) == 0 {
			row = append(row, "-", "-", "-", "-", "-")
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		for i, f := range r.w.floors {
			floor := statsOf(r.floors[i], process)
			callRatio := "-"
			if r.w.replay == "" {
				callRatio = ratio(call.median, floor.median)
			}
			row = append(row, f.name, floor.String(), mib(peakOf(r.floors[i])), callRatio, ratio(proc.median, floor.median))
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
			row = []string{"", "", "", ""}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, `
call: the registry.Execute of the tool, as the child times it; process: the child's
whole life (start, gordis.Build, reading the arguments, the call, teardown); a
"(demo replay)" row runs the same call as the one line of a built demo replay (with
--no-policy for a write or an edit), and process is that whole command. ms are median (min–max); ratios are of medians; a
workload's further floors are on the rows below it. Peak RSS is the largest over the
runs: the child's own VmHWM, a floor's and demo replay's from GNU time (else from
wait4, which on Linux counts the harness's own memory too). OVER N: above the N MiB
the workload must stay under.`)
	return err
}

// machine describes where the run happens, with the load when known.
func machine() string {
	s := fmt.Sprintf("%s/%s, %d CPUs, GOMAXPROCS %d, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	if load := loadAverage(); load != "" {
		s += ", load " + load
	}
	return s
}

// loadAverage is the 1, 5 and 15-minute load averages, "" where the
// platform does not say.
func loadAverage() string {
	load, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(load))[:3], " ")
}
