package diffcard

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	long := strings.Repeat("é", MaxLineBytes) // 2 bytes a rune: cut at MaxLineBytes exactly
	tests := []struct {
		name   string
		change Change
		want   string
	}{
		{"equal", Change{Name: "n", Before: "a\nb\n", After: "a\nb\n"}, ""},
		{"a missing final newline is not a change", Change{Name: "n", Before: "a\nb", After: "a\nb\n"}, ""},
		{"the demo edit", Change{Name: "notes.md", Before: "# Notes\nstatus: draft\n", After: "# Notes\nstatus: reviewed\n"},
			"--- notes.md\n+++ notes.md\n@@ -1,2 +1,2 @@\n # Notes\n-status: draft\n+status: reviewed\n"},
		{"create", Change{Name: "n", After: "x\ny\n"}, "--- n\n+++ n\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"delete all", Change{Name: "n", Before: "x\n"}, "--- n\n+++ n\n@@ -1 +0,0 @@\n-x\n"},
		{"no final newline on either side", Change{Name: "n", Before: "a\nb", After: "a\nc"},
			"--- n\n+++ n\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"},
		{"a changed line ending in the common bytes", Change{Name: "n", Before: "x\nab\n", After: "x\nb\n"},
			"--- n\n+++ n\n@@ -1,2 +1,2 @@\n x\n-ab\n+b\n"},
		{"context is cut to three lines", Change{Name: "n", Before: "1\n2\n3\n4\n5\n6\n7\n8\n9\n", After: "1\n2\n3\n4\nfive\n6\n7\n8\n9\n"},
			"--- n\n+++ n\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"distant changes make two hunks", Change{Name: "n", Before: "a\n1\n2\n3\n4\n5\n6\n7\nb\n", After: "A\n1\n2\n3\n4\n5\n6\n7\nB\n"},
			"--- n\n+++ n\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -6,4 +6,4 @@\n 5\n 6\n 7\n-b\n+B\n"},
		{"close changes share a hunk", Change{Name: "n", Before: "a\n1\n2\n3\n4\n5\n6\nb\n", After: "A\n1\n2\n3\n4\n5\n6\nB\n"},
			"--- n\n+++ n\n@@ -1,8 +1,8 @@\n-a\n+A\n 1\n 2\n 3\n 4\n 5\n 6\n-b\n+B\n"},
		{"insertion in the middle", Change{Name: "n", Before: "a\nc\n", After: "a\nb\nc\n"}, "--- n\n+++ n\n@@ -1,2 +1,3 @@\n a\n+b\n c\n"},
		{"deletions come before insertions", Change{Name: "n", Before: "a\nb\nc\n", After: "x\nb\ny\n"},
			"--- n\n+++ n\n@@ -1,3 +1,3 @@\n-a\n+x\n b\n-c\n+y\n"},
		{"too large to diff", Change{Name: "big.log", Omitted: true}, "--- big.log\n+++ big.log\n(too large to show a diff)\n"},
		{"a long line is cut at a rune boundary", Change{Name: "n", After: "é" + long + "\n"},
			"--- n\n+++ n\n@@ -0,0 +1 @@\n+" + strings.Repeat("é", MaxLineBytes/2) + "… (1002 more bytes)\n"},
		{"a long line that is not UTF-8 is cut at MaxLineBytes", Change{Name: "n", After: strings.Repeat("\x80", MaxLineBytes+5) + "\n"},
			"--- n\n+++ n\n@@ -0,0 +1 @@\n+" + strings.Repeat("\x80", MaxLineBytes) + "… (5 more bytes)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.change); got != tt.want {
				t.Fatalf("card\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// numbered returns lines first..last (inclusive) as "prefix<i>\n".
func numbered(prefix string, first, last int) string {
	var b strings.Builder
	for i := first; i <= last; i++ {
		b.WriteString(prefix + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

func TestRenderShowsAtMostMaxLines(t *testing.T) {
	got := Render(Change{Name: "n", After: numbered("l", 1, MaxLines+7)})
	want := "--- n\n+++ n\n@@ -0,0 +1," + strconv.Itoa(MaxLines+7) + " @@\n" +
		strings.ReplaceAll(numbered("l", 1, MaxLines), "l", "+l") + "(7 more lines not shown)\n"
	if got != want {
		t.Fatalf("card\n got %q\nwant %q", got[len(got)-200:], want[len(want)-200:])
	}
}

// Past the alignment bounds the middle is one replacement, and the card
// says so; the counts in the header stay exact.
func TestRenderBoundsTheAlignment(t *testing.T) {
	// Every other line changes: 2×(maxEdits/2+1) edits, one more than allowed.
	var before, after strings.Builder
	for i := range maxEdits/2 + 1 {
		fmt.Fprintf(&before, "same %d\nold %d\n", i, i)
		fmt.Fprintf(&after, "same %d\nnew %d\n", i, i)
	}
	n := 2 * (maxEdits/2 + 1)
	got := Render(Change{Name: "n", Before: before.String(), After: after.String()})
	head := fmt.Sprintf("--- n\n+++ n\n@@ -1,%d +1,%d @@\n same 0\n-old 0\n-same 1\n", n, n)
	tail := fmt.Sprintf("(%d more lines not shown)\n(the changed lines are shown as one replacement: aligning them line by line would cost too much)\n", 1+2*(n-1)-MaxLines)
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) {
		t.Fatalf("card starts %q, ends %q", got[:min(len(got), 80)], got[max(0, len(got)-200):])
	}
	// One edit fewer aligns.
	var b2, a2 strings.Builder
	for i := range maxEdits / 2 {
		fmt.Fprintf(&b2, "same %d\nold %d\n", i, i)
		fmt.Fprintf(&a2, "same %d\nnew %d\n", i, i)
	}
	if got := Render(Change{Name: "n", Before: b2.String(), After: a2.String()}); strings.Contains(got, "one replacement") {
		t.Fatalf("%d edits were not aligned", maxEdits)
	}
}

// Two large texts that differ everywhere: the card is bounded in size and
// says the lines were replaced, not aligned.
func TestRenderHugeTexts(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n"
	before := strings.Repeat(line, 160_000) // 16 MB
	after := strings.Repeat("y"+line[1:], 160_000)
	got := Render(Change{Name: "n", Before: before, After: after})
	if len(got) > MaxLines*(MaxLineBytes+2)+500 {
		t.Fatalf("card of %d bytes", len(got))
	}
	want := "(319500 more lines not shown)\n(the changed lines are shown as one replacement: aligning them line by line would cost too much)\n"
	if !strings.HasPrefix(got, "--- n\n+++ n\n@@ -1,160000 +1,160000 @@\n-xxx") || !strings.HasSuffix(got, want) {
		t.Fatalf("card starts %q, ends %q", got[:80], got[len(got)-200:])
	}
}

// FuzzRender: applying the card to Before gives After, and the lines it
// removes are as few as a longest common subsequence allows.
func FuzzRender(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x\n")
	f.Add("x\nx\nx\n", "x\ny\nx\n")
	f.Add("a\nb", "a\nb\nc")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "0\n2\n3\n4\n5\n6\n7\n8\n9\nA\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		a, b := lines(before), lines(after)
		if len(a)+len(b) > MaxLines || slices.ContainsFunc(append(a, b...), func(l string) bool { return len(l) > MaxLineBytes }) {
			t.Skip("the card would not show every line in full")
		}
		card := Render(Change{Name: "f", Before: before, After: after})
		if card == "" {
			if strings.Join(a, "\n") != strings.Join(b, "\n") || len(a) != len(b) {
				t.Fatalf("no card for %q -> %q", before, after)
			}
			return
		}
		got, removed := apply(t, card, a)
		if strings.Join(got, "\n") != strings.Join(b, "\n") || len(got) != len(b) {
			t.Fatalf("card %q applied to %q gives %q, want %q", card, a, got, b)
		}
		if want := len(a) - lcsLen(a, b); removed != want {
			t.Fatalf("card %q removes %d lines, a shortest diff %d", card, removed, want)
		}
	})
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// apply patches a with a unified diff, checking every context and removed
// line, and returns the result and how many lines were removed.
func apply(t *testing.T, card string, a []string) (out []string, removed int) {
	t.Helper()
	body := strings.Split(strings.TrimSuffix(card, "\n"), "\n")[2:]
	at := 0 // lines of a consumed
	for _, l := range body {
		switch l[0] {
		case '@':
			old := strings.Fields(l)[1][1:] // "-start,count" without its sign
			oldStart, _ := strconv.Atoi(strings.Split(old, ",")[0])
			if !strings.HasSuffix(old, ",0") {
				oldStart-- // a non-empty range names its first line
			}
			if oldStart < at {
				t.Fatalf("hunk %q goes back", l)
			}
			out, at = append(out, a[at:oldStart]...), oldStart
		case ' ', '-':
			if at >= len(a) || a[at] != l[1:] {
				t.Fatalf("line %q does not match line %d of %q", l, at+1, a)
			}
			if l[0] == ' ' {
				out = append(out, a[at])
			} else {
				removed++
			}
			at++
		case '+':
			out = append(out, l[1:])
		default:
			t.Fatalf("unexpected line %q in %q", l, card)
		}
	}
	return append(out, a[at:]...), removed
}

// lcsLen is the textbook dynamic programme, the reference for FuzzRender.
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

// tenMiB is a 10 MiB text of numbered lines and the same with one line
// changed in the middle: the edit tool's 10 MiB workload.
func tenMiB() (before, after string) {
	var b strings.Builder
	for i := 0; b.Len() < 10<<20; i++ {
		fmt.Fprintf(&b, "line %07d %s\n", i, strings.Repeat("-", 60))
	}
	before = b.String()
	mid := strings.Index(before[len(before)/2:], "\n") + len(before)/2 + 1
	end := mid + strings.Index(before[mid:], "\n")
	return before, before[:mid] + "changed" + before[end:]
}

func BenchmarkDiffCard10MiB(b *testing.B) {
	before, after := tenMiB()
	b.SetBytes(int64(len(before)))
	b.ReportAllocs()
	for b.Loop() {
		if Render(Change{Name: "big.txt", Before: before, After: after}) == "" {
			b.Fatal("no card")
		}
	}
}

// BenchmarkDiffCardReplaced100MiB: two 100 MiB texts that differ on every
// line, the worst case the bounds are for.
func BenchmarkDiffCardReplaced100MiB(b *testing.B) {
	line := strings.Repeat("x", 99) + "\n"
	before := strings.Repeat(line, 1<<20)
	after := strings.Repeat("y"+line[1:], 1<<20)
	b.SetBytes(int64(len(before)))
	b.ReportAllocs()
	for b.Loop() {
		Render(Change{Name: "big.txt", Before: before, After: after})
	}
}

// Scattered changes in a big text stay minimal.
func TestRenderScatteredChanges(t *testing.T) {
	var before, after strings.Builder
	for i := range 20000 {
		line := strings.Repeat("x", i%97) + "\n"
		before.WriteString(line)
		if i%1000 == 0 {
			line = "changed\n"
		}
		after.WriteString(line)
	}
	card := Render(Change{Name: "n", Before: before.String(), After: after.String()})
	if got := strings.Count(card, "\n-"); got != 20 {
		t.Fatalf("%d lines removed, want 20", got)
	}
	if got := strings.Count(card, "\n@@ "); got != 20 {
		t.Fatalf("%d hunks, want 20", got)
	}
}
