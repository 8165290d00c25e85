package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play the child, as the harness starts
// its own executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		main()
		return
	}
	os.Exit(m.Run())
}

// A tiny run of every workload: each call succeeds in its child, each
// floor runs, the table has a row for each with its ratios, and the files
// are gone at the end.
func TestRunSmall(t *testing.T) {
	var out bytes.Buffer
	dir := t.TempDir()
	args := []string{"-runs", "1", "-dir", dir, "-read-mib", "1", "-list-entries", "101", "-edit-mib", "1", "-write-mib", "1,2"}
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"read head 1 MiB", "read tail 1 MiB", "list 101 entries", "edit 1 line of 1 MiB", "write 1 MiB new file", "write 2 MiB new file"} {
		i := strings.Index(out.String(), row)
		if i < 0 {
			t.Fatalf("no row %q:\n%s", row, out.String())
		}
		if line, _, _ := strings.Cut(out.String()[i:], "\n"); strings.Count(line, "x") < 2 {
			t.Errorf("row without its ratios: %q", line)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// A bad command line is one error, exit status 2, and nothing printed:
// main prints the error once.
func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-write-mib", "8,x"}, `-write-mib: "x" is not a positive number of MiB (see benchtools -help)`},
		{[]string{"-runs", "0"}, "-runs and every size must be at least 1 (see benchtools -help)"},
		{[]string{"extra"}, `unexpected argument "extra" (see benchtools -help)`},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus (see benchtools -help)"},
		{[]string{"-runs", "x"}, `invalid value "x" for flag -runs: parse error (see benchtools -help)`},
	} {
		var out bytes.Buffer
		err := run(context.Background(), tc.args, &out)
		if err == nil || err.Error() != tc.want || exitCode(err) != 2 || out.Len() != 0 {
			t.Errorf("%v: %v (exit %d, printed %q), want %q (exit 2)", tc.args, err, exitCode(err), out.String(), tc.want)
		}
	}
}

// -help prints the usage and every flag on stdout, and exits 0.
func TestHelp(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-help"}, &out)
	if exitCode(err) != 0 || !strings.HasPrefix(out.String(), usage) || !strings.Contains(out.String(), "-write-mib MiB") {
		t.Fatalf("exit %d (%v), printed %q", exitCode(err), err, out.String())
	}
}

func TestAppendLine(t *testing.T) {
	for _, i := range []int64{0, 7, 123456789012} {
		line := string(appendLine(nil, i))
		if len(line) != lineLen || !strings.HasSuffix(line, "\n") {
			t.Errorf("line %d is %q (%d bytes)", i, line, len(line))
		}
	}
	if got, want := string(appendLine(nil, 42)), "line 000000000042 "+padding+"\n"; got != want {
		t.Errorf("line 42 = %q, want %q", got, want)
	}
}

func TestStats(t *testing.T) {
	samples := func(ms ...int) []sample {
		var s []sample
		for _, m := range ms {
			s = append(s, sample{process: time.Duration(m) * time.Millisecond})
		}
		return s
	}
	process := func(s sample) time.Duration { return s.process }
	if got := statsOf(samples(5, 1, 3), process).String(); got != "3.0 (1.0–5.0)" {
		t.Errorf("odd: %s", got)
	}
	if got := statsOf(samples(4, 1, 2, 9), process).String(); got != "3.0 (1.0–9.0)" {
		t.Errorf("even: %s", got)
	}
}
