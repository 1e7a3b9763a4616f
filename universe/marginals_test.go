package universe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMarginals checks Counts.Marginals against a per-cell tally, over
// blocks of several sizes (one block, a partial last block, blocks of
// one cell), sets of every length from 0 to 5 and repeated sets.
func TestMarginals(t *testing.T) {
	sizes := []int{3, 1, 7, 2, 5, 4, 300}
	r := rand.New(rand.NewPCG(1, 2))
	c := randomCounts(t, r, sizes, 3000, 5)
	sets := [][]int{{}, {0}, {6}, {0, 1}, {2, 6}, {0, 2, 4}, {1, 5, 6}, {0, 2, 3, 5}, {0, 1, 2, 3, 6}, {2, 6}}
	for range 40 {
		var s []int
		for a := range sizes {
			if r.IntN(3) == 0 {
				s = append(s, a)
			}
		}
		sets = append(sets, s)
	}
	want := make([][]int64, len(sets))
	for si, s := range sets {
		cells := 1
		for _, a := range s {
			cells *= sizes[a]
		}
		want[si] = make([]int64, cells)
		for i := range c.Distinct() {
			idx := 0
			for _, a := range s {
				idx = idx*sizes[a] + int(c.Codes(i)[a])
			}
			want[si][idx] += c.Count(i)
		}
	}
	defer func(b int) { marginalBlock = b }(marginalBlock)
	for _, block := range []int{1 << 14, 1000, 1} {
		marginalBlock = block
		got, err := c.Marginals(context.Background(), sets)
		if err != nil {
			t.Fatal(err)
		}
		for si := range sets {
			if !slices.Equal(got[si], want[si]) {
				t.Errorf("block %d: Marginals(%v) = %v…, want %v…", block, sets[si], head(got[si]), head(want[si]))
			}
		}
	}
	if _, err := c.Marginals(context.Background(), [][]int{{2, 1}}); err == nil {
		t.Error("Marginals({2, 1}) gave no error for a set that is not increasing")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Marginals(ctx, sets); err == nil {
		t.Error("Marginals with a cancelled context gave no error")
	}
}

func head(v []int64) []int64 { return v[:min(len(v), 6)] }

// BenchmarkMarginals tallies every 3-way marginal of 24 attributes of 4–24
// values over 100,000 distinct cells.
func BenchmarkMarginals(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	sizes := make([]int, 24)
	for a := range sizes {
		sizes[a] = 4 + r.IntN(21)
	}
	c := randomCounts(b, r, sizes, 100000, 1)
	var sets [][]int
	for x := range sizes {
		for y := x + 1; y < len(sizes); y++ {
			for z := y + 1; z < len(sizes); z++ {
				sets = append(sets, []int{x, y, z})
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Marginals(context.Background(), sets); err != nil {
			b.Fatal(err)
		}
	}
}

// randomCounts returns counts of n records drawn from r over a domain of
// encoded attributes of the given sizes, each record counted 1 to
// maxCount times.
func randomCounts(tb testing.TB, r *rand.Rand, sizes []int, n, maxCount int) *Counts {
	tb.Helper()
	attrs := make([]*Attribute, len(sizes))
	for i, s := range sizes {
		a, err := NewEncoded(fmt.Sprintf("c%02d", i), s)
		if err != nil {
			tb.Fatal(err)
		}
		attrs[i] = a
	}
	d, err := NewDomain(attrs...)
	if err != nil {
		tb.Fatal(err)
	}
	c := NewCounts(d)
	codes := make([]int, len(sizes))
	for range n {
		for a, s := range sizes {
			codes[a] = r.IntN(s)
		}
		if err := c.Add(codes, int64(1+r.IntN(maxCount))); err != nil {
			tb.Fatal(err)
		}
	}
	return c
}
