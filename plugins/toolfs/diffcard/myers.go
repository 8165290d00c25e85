package diffcard

import "slices"

// myers finds a shortest edit script from a to b of at most limit edits
// (Myers 1986: the greedy forward search, with the frontier of every round
// kept for the backtrack); ok is false when there is none. Within a changed
// block, deletions come before insertions, as diff prints them.
func myers(a, b []string, limit int) (ops []op, ok bool) {
	n, m := len(a), len(b)
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
		trace = append(trace, slices.Clone(v[off-d:off+d+1]))
		if k := n - m; k >= -d && k <= d && (k+d)%2 == 0 && v[k+off] >= n {
			return backtrack(a, b, trace), true
		}
	}
	return nil, false
}

func backtrack(a, b []string, trace [][]int) []op {
	var rev []op
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
			rev = append(rev, op{' ', a[x]})
		}
		if pk == k+1 {
			y--
			rev = append(rev, op{'+', b[y]})
		} else {
			x--
			rev = append(rev, op{'-', a[x]})
		}
		x, y = px, py
	}
	for x > 0 {
		x--
		rev = append(rev, op{' ', a[x]})
	}
	slices.Reverse(rev)
	// Deletions before insertions inside each changed block.
	for i := 0; i < len(rev); {
		if rev[i].kind == ' ' {
			i++
			continue
		}
		j := i
		for j < len(rev) && rev[j].kind != ' ' {
			j++
		}
		slices.SortStableFunc(rev[i:j], func(p, q op) int { return int(q.kind) - int(p.kind) })
		i = j
	}
	return rev
}
