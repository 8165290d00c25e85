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
	w            workload
	calls, floor []sample
}

// measure runs the workload's call and its floor runs times each,
// alternately, so that both see the same machine. The floor runs once
// first, unmeasured: it brings the files into the page cache for both.
func measure(ctx context.Context, self, workspace string, w workload, runs int) (result, error) {
	r := result{w: w}
	if _, err := runFloor(ctx, w); err != nil {
		return r, err
	}
	args := []string{childFlag, workspace, w.tool, w.argsFile}
	if w.readFirst != "" {
		args = append(args, w.readFirst)
	}
	for range runs {
		s, err := runChild(ctx, self, args, w.reset)
		if err != nil {
			return r, err
		}
		f, err := runFloor(ctx, w)
		if err != nil {
			return r, err
		}
		r.calls, r.floor = append(r.calls, s), append(r.floor, f)
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

// runFloor runs the floor command, through GNU time when there is one.
func runFloor(ctx context.Context, w workload) (sample, error) {
	argv := w.floor
	_, err := os.Stat(timeCommand)
	viaTime := err == nil
	if viaTime {
		argv = append([]string{timeCommand, "-f", "peakRSS=%M"}, argv...)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = &stderr
	s, err := timed(cmd, w.reset)
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

func maxRSS(samples []sample) string {
	var peak int64
	for _, s := range samples {
		peak = max(peak, s.peakRSS)
	}
	if peak == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(peak)/(1<<20), 'f', 1, 64)
}

func printTable(w io.Writer, results []result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tcall ms\tprocess ms\tpeak RSS MiB\tfloor\tfloor ms\tfloor RSS MiB\tcall/floor\tprocess/floor\t")
	for _, r := range results {
		call := statsOf(r.calls, func(s sample) time.Duration { return s.call })
		proc := statsOf(r.calls, func(s sample) time.Duration { return s.process })
		floor := statsOf(r.floor, func(s sample) time.Duration { return s.process })
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2fx\t%.2fx\t\n", r.w.name, call, proc, maxRSS(r.calls),
			r.w.floorName, floor, maxRSS(r.floor), float64(call.median)/float64(floor.median), float64(proc.median)/float64(floor.median))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\ncall: the registry.Execute of the tool, as the child times it; process: the child's\nwhole life (start, gordis.Build, reading the arguments, the call, teardown); ms are\nmedian (min–max); ratios are of medians. Peak RSS is the largest over the runs: the\nchild's own VmHWM, a floor's from GNU time (else from wait4, which on Linux counts the\nharness's own memory too).")
	return err
}

// machine describes where the run happens, with the load when known.
func machine() string {
	s := fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		s += ", load " + strings.Join(strings.Fields(string(load))[:3], " ")
	}
	return s
}
