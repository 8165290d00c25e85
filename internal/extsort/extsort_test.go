package extsort

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// TestSorted sorts shuffled names under budgets that hold all of them,
// some, and one at a time, and requires the order of slices.Sort and the
// tags that came with them.
func TestSorted(t *testing.T) {
	var names []string
	for i := range 5000 {
		names = append(names, fmt.Sprintf("f%06d.txt", (i*7919)%5000), fmt.Sprintf("é%d", i), fmt.Sprintf("%x", i*i))
	}
	names = append(names, "", "a", "a\x00b", "\xff")
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	for _, c := range []struct {
		budget int
		spill  bool
	}{{1 << 20, false}, {4 << 10, true}, {1, true}} {
		t.Run(fmt.Sprint(c.budget), func(t *testing.T) {
			s := New(c.budget)
			defer s.Close()
			shuffled := slices.Clone(names)
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			for _, n := range shuffled {
				if err := s.Add(n, tagOf(n)); err != nil {
					t.Fatal(err)
				}
			}
			if s.Spilled() != c.spill {
				t.Errorf("Spilled() = %v, want %v", s.Spilled(), c.spill)
			}
			it, err := s.Sorted()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				r, ok, err := it.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				if r.Tag != tagOf(r.Name) {
					t.Fatalf("%q came with tag %d, want %d", r.Name, r.Tag, tagOf(r.Name))
				}
				got = append(got, r.Name)
			}
			if !slices.Equal(got, names) {
				t.Fatalf("got %d names, want %d in order; first difference at %d", len(got), len(names), firstDiff(got, names))
			}
		})
	}
}

func tagOf(name string) byte { return byte(len(name)) }

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestCloseLeavesNothing: the temporary file is gone once Close returns
// (on Unix, as soon as it was made).
func TestCloseLeavesNothing(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s := New(1)
	for _, n := range []string{"b", "a", "c"} {
		if err := s.Add(n, 0); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Spilled() {
		t.Fatal("a one-byte budget did not spill")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}

// BenchmarkSort sorts 1,000,000 names of 12 bytes within 1 MiB.
func BenchmarkSort(b *testing.B) {
	const n = 1_000_000
	b.ReportAllocs()
	for b.Loop() {
		s := New(1 << 20)
		for i := range n {
			if err := s.Add(fmt.Sprintf("f%07d.txt", (i*7919)%n), 1); err != nil {
				b.Fatal(err)
			}
		}
		it, err := s.Sorted()
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, ok, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
		}
		s.Close()
	}
}
