package main

import (
	"fmt"
	"slices"
	"strings"
)

// maxEdits bounds the edit distance the diff searches for (memory grows with
// its square); beyond it the changed middle is shown as a plain replacement,
// still a correct diff, just not a minimal one.
const maxEdits = 2048

type diffOp struct {
	kind byte // ' ', '-' or '+'
	text string
}

// splitLines splits text into lines without their newline; "" has none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// lineDiff returns the edit script from a to b: the common prefix and suffix
// are trimmed, then the middle is aligned on a longest common subsequence.
func lineDiff(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]diffOp, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		ops = append(ops, diffOp{' ', l})
	}
	ops = append(ops, middleDiff(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

func middleDiff(a, b []string) []diffOp {
	ops, ok := myers(a, b)
	if !ok {
		ops = ops[:0]
		for _, l := range a {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, diffOp{'+', l})
		}
	}
	return ops
}

// myers finds a shortest edit script (Myers 1986, greedy forward search with
// the frontier of every round kept for the backtrack). Within a changed
// block, deletions come before insertions, as diff prints them.
func myers(a, b []string) ([]diffOp, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdits)
	v := make([]int, 2*limit+3) // v[k+off]: furthest x on diagonal k
	off := limit + 1
	var trace [][]int // trace[d][k+d]: v after round d, k in [-d, d]
	for d := 0; d <= limit; d++ {
		for k := -d; k <= d; k += 2 {
			x := v[k+1+off]
			if k != -d && (k == d || v[k-1+off] >= v[k+1+off]) {
				x = v[k-1+off] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[k+off] = x
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		if k := n - m; k >= -d && k <= d && (k+d)%2 == 0 && v[k+off] >= n {
			return backtrack(a, b, trace), true
		}
	}
	return nil, false
}

func backtrack(a, b []string, trace [][]int) []diffOp {
	var rev []diffOp
	x, y := len(a), len(b)
	for d := len(trace) - 1; d > 0; d-- {
		prev, k := trace[d-1], x-y
		at := func(k int) int { return prev[k+d-1] }
		pk := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, diffOp{' ', a[x]})
		}
		if pk == k+1 {
			y--
			rev = append(rev, diffOp{'+', b[y]})
		} else {
			x--
			rev = append(rev, diffOp{'-', a[x]})
		}
		x, y = px, py
	}
	for x > 0 {
		x--
		rev = append(rev, diffOp{' ', a[x]})
	}
	ops := make([]diffOp, 0, len(rev))
	for i := len(rev) - 1; i >= 0; i-- {
		ops = append(ops, rev[i])
	}
	// Deletions before insertions inside each changed block.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		j := i
		for j < len(ops) && ops[j].kind != ' ' {
			j++
		}
		slices.SortStableFunc(ops[i:j], func(p, q diffOp) int { return int(q.kind) - int(p.kind) })
		i = j
	}
	return ops
}

// unifiedDiff renders before→after as a unified diff with n lines of
// context; "" when the texts have the same lines.
func unifiedDiff(name, before, after string, n int) string {
	ops := lineDiff(splitLines(before), splitLines(after))
	var b strings.Builder
	for start := 0; start < len(ops); {
		// Find the next change, then extend the hunk while the gap between
		// changes is at most 2n lines of context.
		first := start
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			break
		}
		last := first
		for k := first; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				last = k
			} else if k-last > 2*n {
				break
			}
		}
		lo, hi := max(first-n, start), min(last+n+1, len(ops))
		if b.Len() == 0 {
			fmt.Fprintf(&b, "--- %s\n+++ %s\n", name, name)
		}
		writeHunk(&b, ops, lo, hi)
		start = hi
	}
	return b.String()
}

func writeHunk(b *strings.Builder, ops []diffOp, lo, hi int) {
	// Line numbers before the hunk.
	oldLine, newLine := 0, 0
	for _, op := range ops[:lo] {
		if op.kind != '+' {
			oldLine++
		}
		if op.kind != '-' {
			newLine++
		}
	}
	oldCount, newCount := 0, 0
	for _, op := range ops[lo:hi] {
		if op.kind != '+' {
			oldCount++
		}
		if op.kind != '-' {
			newCount++
		}
	}
	fmt.Fprintf(b, "@@ -%s +%s @@\n", hunkRange(oldLine, oldCount), hunkRange(newLine, newCount))
	for _, op := range ops[lo:hi] {
		b.WriteByte(op.kind)
		b.WriteString(op.text)
		b.WriteByte('\n')
	}
}

// hunkRange is "start,count" as GNU diff writes it: a one-line range omits
// the count, and an empty range starts at the line before it.
func hunkRange(before, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, count)
}
