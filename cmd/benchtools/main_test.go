package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// A tiny run of every workload: each call succeeds in its child and in
// its demo replay, each floor runs, the table has a row for each with its
// ratios (the search rows' only where rg is installed), and the files are
// gone at the end.
func TestRunSmall(t *testing.T) {
	src := t.TempDir()
	for name, text := range map[string]string{
		"a/main.go":      "package main\n\nfunc main() {}\n\nfunc (f *File) Close() error { return nil }\n",
		"a/main_test.go": "package main\n",
	} {
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	dir := t.TempDir()
	args := []string{"-runs", "1", "-dir", dir, "-read-mib", "1", "-list-entries", "101", "-edit-mib", "1", "-write-mib", "1,2",
		"-src", src, "-tree-files", "200", "-grep-mib", "1"}
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatal(err)
	}
	_, rgErr := exec.LookPath("rg")
	tree := filepath.Base(src) + " (2 files)"
	for _, row := range []struct {
		name   string
		search bool
	}{
		{"read head 1 MiB", false},
		{"read tail 1 MiB", false},
		{"list 101 entries", false},
		{"edit 1 line of 1 MiB", false},
		{"write 1 MiB new file", false},
		{"write 2 MiB new file", false},
		{"glob **/*_test.go in " + tree, true},
		{"grep func main in " + tree, true},
		{`grep func \(\w+ \*\w+\) Close\( in ` + tree, true},
		{"grep func main, include *.go in " + tree, true},
		{"glob **/*_test.go in synthetic (200 files)", true},
		{"grep func main in synthetic (200 files)", true},
		{"grep func main in one 1 MiB file", true},
	} {
		for _, name := range []string{row.name, row.name + " (demo replay)"} {
			i := strings.Index(out.String(), name+"  ")
			if i < 0 {
				t.Fatalf("no row %q:\n%s", name, out.String())
			}
			line, _, _ := strings.Cut(out.String()[i:], "\n")
			if want := "x"; row.search && rgErr != nil {
				if !strings.HasSuffix(line, "-") {
					t.Errorf("row with a ratio though rg is missing: %q", line)
				}
			} else if !strings.HasSuffix(line, want) {
				t.Errorf("row without its ratios: %q", line)
			}
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
		{[]string{"-tree-files", "0"}, "-runs and every size must be at least 1 (see benchtools -help)"},
		{[]string{"-only", "read,find"}, `-only: "find" is not one of read,list,edit,write,glob,grep (see benchtools -help)`},
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

// The table: a workload's first floor on its row, further floors below
// with the call's cells empty, no call time or call ratio for a replay,
// dashes where a workload has no floor, and a peak above the workload's
// bound marked.
func TestPrintTable(t *testing.T) {
	ms := func(d ...int) []sample {
		var s []sample
		for _, m := range d {
			s = append(s, sample{call: time.Duration(m) * time.Millisecond / 2, process: time.Duration(m) * time.Millisecond, peakRSS: int64(m) << 20})
		}
		return s
	}
	two := []floor{{name: "rg --json"}, {name: "rg -n"}}
	var out bytes.Buffer
	err := printTable(&out, []result{
		{w: workload{name: "grep a", floors: two, maxRSS: 64 << 20}, calls: ms(80, 60), floors: [][]sample{ms(20), ms(10)}},
		{w: workload{name: "grep a (demo replay)", replay: "demo", floors: two[:1]}, calls: ms(30), floors: [][]sample{ms(20)}},
		{w: workload{name: "grep b"}, calls: ms(4)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(out.String(), "\n")[1:5] {
		got = append(got, strings.Join(strings.Fields(line), " "))
	}
	want := []string{
		"grep a 35.0 (30.0–40.0) 70.0 (60.0–80.0) 80.0 OVER 64 rg --json 20.0 (20.0–20.0) 20.0 1.75x 3.50x",
		"rg -n 10.0 (10.0–10.0) 10.0 3.50x 7.00x",
		"grep a (demo replay) - 30.0 (30.0–30.0) 30.0 rg --json 20.0 (20.0–20.0) 20.0 - 1.50x",
		"grep b 2.0 (2.0–2.0) 4.0 (4.0–4.0) 4.0 - - - - -",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
