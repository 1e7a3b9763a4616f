package universe

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// marginalBlock is the number of distinct cells Marginals tallies at a
// time: the block's codes, column by column (at most width × 16,384 int32s),
// are read by every set while they are in cache, and each set's table is
// touched once per block rather than once per cell.
var marginalBlock = 1 << 14

// Marginals returns the count table of each set of attribute positions
// (each strictly increasing), in the set's mixed radix (the set's last
// attribute fastest); the empty set gives [n]. It is the file sources' side
// of the seam through which the measurement-based solvers read data (a SQL
// engine serves the same tables with GROUP BY).
//
// The distinct cells are read in blocks; each block's codes are laid out
// column by column, and the sets are shared between GOMAXPROCS workers, each
// tallying its sets over the block one set at a time (so that a set's table
// stays in its core's cache while the block's cells pass). The counts are
// integers, so the tables do not depend on the order of the additions.
func (c *Counts) Marginals(ctx context.Context, sets [][]int) ([][]int64, error) {
	plans := make([]marginalPlan, len(sets))
	out := make([][]int64, len(sets))
	used := make([]bool, c.width)
	for si, s := range sets {
		p, cells, err := c.planMarginal(s)
		if err != nil {
			return nil, err
		}
		plans[si] = p
		out[si] = make([]int64, cells)
		for _, a := range s {
			used[a] = true
		}
	}
	var attrs []int
	for a, ok := range used {
		if ok {
			attrs = append(attrs, a)
		}
	}
	n := len(c.cnt)
	block := min(marginalBlock, max(n, 1))
	cols := make([][]int32, c.width)
	for _, a := range attrs {
		cols[a] = make([]int32, block)
	}
	parts := splitSets(plans, min(runtime.GOMAXPROCS(0), len(sets)))
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += block {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+block, n)
		c.transpose(cols, attrs, lo, hi)
		cnt := c.cnt[lo:hi]
		for w := 1; w < len(parts)-1; w++ {
			wg.Add(1)
			go func(from, to int) {
				defer wg.Done()
				tallySets(plans[from:to], out[from:to], cols, cnt)
			}(parts[w], parts[w+1])
		}
		if len(parts) > 1 {
			tallySets(plans[parts[0]:parts[1]], out[parts[0]:parts[1]], cols, cnt)
		}
		wg.Wait()
	}
	return out, nil
}

// marginalPlan is one set of Marginals: its attributes and their strides
// in the table (the last attribute's is 1).
type marginalPlan struct {
	attrs, strides []int
}

// planMarginal checks set and returns its plan and number of cells.
func (c *Counts) planMarginal(s []int) (marginalPlan, int, error) {
	cells := 1
	st := make([]int, len(s))
	for p := len(s) - 1; p >= 0; p-- {
		a := s[p]
		if a < 0 || a >= c.width || (p > 0 && s[p-1] >= a) {
			return marginalPlan{}, 0, fmt.Errorf("universe: marginal set %v is not increasing attribute positions below %d", s, c.width)
		}
		st[p] = cells
		if cells > math.MaxInt32/c.dom.Attr(a).Size() {
			return marginalPlan{}, 0, fmt.Errorf("universe: the marginal over %v has more than 2^31 cells", s)
		}
		cells *= c.dom.Attr(a).Size()
	}
	return marginalPlan{attrs: s, strides: st}, cells, nil
}

// transpose writes the codes of the distinct cells [lo, hi) of every
// attribute in attrs into cols[a][:hi-lo].
func (c *Counts) transpose(cols [][]int32, attrs []int, lo, hi int) {
	w := c.width
	for i := lo; i < hi; i++ {
		row := c.codes[i*w : (i+1)*w : (i+1)*w]
		for _, a := range attrs {
			cols[a][i-lo] = row[a]
		}
	}
}

// splitSets returns the bounds of workers' contiguous shares of the sets,
// balanced by the sets' work (the cells read times the set's size, plus
// its table): parts[w] to parts[w+1] for worker w.
func splitSets(plans []marginalPlan, workers int) []int {
	workers = max(workers, 1)
	cost := make([]float64, len(plans)+1)
	for i, p := range plans {
		cost[i+1] = cost[i] + float64(len(p.attrs)+1)
	}
	parts := []int{0}
	for w := 1; w < workers; w++ {
		target := cost[len(plans)] * float64(w) / float64(workers)
		i := parts[len(parts)-1]
		for i < len(plans) && cost[i] < target {
			i++
		}
		parts = append(parts, i)
	}
	return append(parts, len(plans))
}

// tallySets adds the block's counts cnt, whose codes are in cols, to the
// tables of plans, one set at a time.
func tallySets(plans []marginalPlan, out [][]int64, cols [][]int32, cnt []int64) {
	m := len(cnt)
	for si := range plans {
		p, o := &plans[si], out[si]
		switch len(p.attrs) {
		case 0:
			for _, v := range cnt {
				o[0] += v
			}
		case 1:
			ca := cols[p.attrs[0]][:m]
			for i, v := range cnt {
				o[ca[i]] += v
			}
		case 2:
			ca, cb := cols[p.attrs[0]][:m], cols[p.attrs[1]][:m]
			sa := p.strides[0]
			for i, v := range cnt {
				o[int(ca[i])*sa+int(cb[i])] += v
			}
		case 3:
			ca, cb, cc := cols[p.attrs[0]][:m], cols[p.attrs[1]][:m], cols[p.attrs[2]][:m]
			sa, sb := p.strides[0], p.strides[1]
			for i, v := range cnt {
				o[int(ca[i])*sa+int(cb[i])*sb+int(cc[i])] += v
			}
		default:
			for i, v := range cnt {
				idx := 0
				for q, a := range p.attrs {
					idx += int(cols[a][i]) * p.strides[q]
				}
				o[idx] += v
			}
		}
	}
}
