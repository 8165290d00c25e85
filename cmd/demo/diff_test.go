package main

import (
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name, before, after, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"the demo edit", "# Notes\nstatus: draft\n", "# Notes\nstatus: reviewed\n",
			"--- notes.md\n+++ notes.md\n@@ -1,2 +1,2 @@\n # Notes\n-status: draft\n+status: reviewed\n"},
		{"create", "", "x\ny\n", "--- notes.md\n+++ notes.md\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"delete all", "x\n", "", "--- notes.md\n+++ notes.md\n@@ -1 +0,0 @@\n-x\n"},
		{"context is cut to n lines", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nfive\n6\n7\n8\n",
			"--- notes.md\n+++ notes.md\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"distant changes make two hunks", "a\n1\n2\n3\n4\n5\n6\n7\nb\n", "A\n1\n2\n3\n4\n5\n6\n7\nB\n",
			"--- notes.md\n+++ notes.md\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -6,4 +6,4 @@\n 5\n 6\n 7\n-b\n+B\n"},
		{"insertion in the middle", "a\nc\n", "a\nb\nc\n", "--- notes.md\n+++ notes.md\n@@ -1,2 +1,3 @@\n a\n+b\n c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unifiedDiff("notes.md", tt.before, tt.after, 3); got != tt.want {
				t.Fatalf("diff\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// FuzzLineDiff: the edit script replays to both texts, and the common lines
// are as many as a longest common subsequence allows (small inputs).
func FuzzLineDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x\n")
	f.Add("x\nx\nx\n", "x\ny\nx\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		a, b := splitLines(before), splitLines(after)
		var gotA, gotB []string
		for _, op := range lineDiff(a, b) {
			if op.kind != '+' {
				gotA = append(gotA, op.text)
			}
			if op.kind != '-' {
				gotB = append(gotB, op.text)
			}
		}
		if strings.Join(gotA, "\n") != strings.Join(a, "\n") || len(gotA) != len(a) {
			t.Fatalf("before not replayed: %q vs %q", gotA, a)
		}
		if strings.Join(gotB, "\n") != strings.Join(b, "\n") || len(gotB) != len(b) {
			t.Fatalf("after not replayed: %q vs %q", gotB, b)
		}
		// Minimal: as many common lines as a longest common subsequence.
		if len(a)*len(b) <= 1<<16 {
			common := 0
			for _, op := range lineDiff(a, b) {
				if op.kind == ' ' {
					common++
				}
			}
			if want := lcsLen(a, b); common != want {
				t.Fatalf("%d common lines, LCS is %d", common, want)
			}
		}
		// The rendered diff never panics and is empty only for equal lines.
		if d := unifiedDiff("f", before, after, 3); (d == "") != (strings.Join(a, "\n") == strings.Join(b, "\n") && len(a) == len(b)) {
			t.Fatalf("diff %q for %q -> %q", d, before, after)
		}
	})
}

func BenchmarkUnifiedDiff(b *testing.B) {
	var before, after strings.Builder
	for i := range 5000 {
		line := strings.Repeat("x", i%80) + "\n"
		before.WriteString(line)
		if i%500 == 0 {
			line = "changed\n"
		}
		after.WriteString(line)
	}
	b.ReportAllocs()
	for b.Loop() {
		unifiedDiff("big", before.String(), after.String(), 3)
	}
}

// lcsLen is the textbook dynamic programme, the reference for FuzzLineDiff.
func lcsLen(a, b []string) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

// Scattered changes in a big file stay minimal (no fallback to a wholesale
// replacement), and an edit distance past maxEdits still yields a correct diff.
func TestLineDiffLargeInputs(t *testing.T) {
	var a, b []string
	for i := range 20000 {
		line := strings.Repeat("x", i%97)
		a = append(a, line)
		if i%1000 == 0 {
			line = "changed"
		}
		b = append(b, line)
	}
	removed := 0
	for _, op := range lineDiff(a, b) {
		if op.kind == '-' {
			removed++
		}
	}
	if removed != 20 {
		t.Fatalf("%d lines removed, want 20", removed)
	}
	var c []string
	for i := range 5000 {
		c = append(c, "y"+strings.Repeat("z", i%13))
	}
	ops := lineDiff(a[:5000], c)
	if len(ops) != 10000 {
		t.Fatalf("fallback: %d ops, want 10000", len(ops))
	}
}
