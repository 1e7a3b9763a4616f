package solvers

import (
	"iter"
	"math"
	"slices"
)

// supportGroups is a grouping of a candidate's table, attribute by
// attribute (a coarse pair's groups are one, coarsePair). On the effective
// supports (candidateGroups): each attribute's supported values keep
// their own digit, and its unsupported values share one more (its rare
// values, merged) — except, on an attribute whose domain orders its
// values (valueOrder), a run of consecutive unsupported values whose total
// the budget resolves (supportRuns), which keeps a digit of its own. A
// group is a cell of that coarser table. The rounds score, measure and fit
// such a candidate on its groups: the rare values' records stay in the
// measurement instead of leaving it (on a 1,304-row table most records lie
// in values below the supports' threshold), while no group is a near-empty
// cell whose noise the fit would learn.
//
// Within a group the fit splits the mass by the model's other factors, as
// if the group's values were alike; neighbours on an ordered attribute
// are, values from both ends of it are not. With every rare value in one
// group, gssvocab's 19 years of education (1.5% of the records, all in the
// top education group) shared a group with 0–7 years (4.1%, all in the
// bottom one) and was released mostly under "<12 yrs", a max error of
// 0.0115 on that pair at ε = 0.5. By runs, 0–7 years, a run the budget
// resolves, is a group of its own, and 19 years stays with the null code
// (docs/BENCHMARKS.md, "Rare values merged by runs of neighbours").
//
// A table's cells are in mixed-radix order, the set's last attribute
// fastest; a group's index is the same order over the digits.
type supportGroups struct {
	digits [][]int32 // per attribute of the set, its values' digits
	radix  []int     // per attribute, its number of digits
	mul    []int     // per attribute, the weight of its digit in a group's index
	n      int       // groups
}

// attrDigits is every attribute's value digits on the supports (its
// supported values 0, 1, … in order, then a digit for each of its resolved
// runs and one for its other rare values, in the order of their first
// values) and its number of digits, shared by every candidate's groups.
type attrDigits struct {
	digits [][]int32
	radix  []int
	full   []bool // every value supported
}

// newAttrDigits returns the digits of attributes of these sizes on the
// supports; runs[a], when not nil, is attribute a's resolved runs
// (resolvedRuns), nil none.
func newAttrDigits(sizes []int, support [][]bool, runs [][]int) *attrDigits {
	ad := &attrDigits{digits: make([][]int32, len(sizes)), radix: make([]int, len(sizes)), full: make([]bool, len(sizes))}
	for a, size := range sizes {
		d := make([]int32, size)
		n := int32(0)
		for v := range size {
			if support[a][v] {
				d[v] = n
				n++
			}
		}
		ad.full[a] = int(n) == size
		if !ad.full[a] {
			var run []int
			if runs != nil {
				run = runs[a]
			}
			n = rareDigits(d, func(v int) bool { return !support[a][v] }, run, n)
		}
		ad.digits[a], ad.radix[a] = d, int(n)
	}
	return ad
}

// rareDigits gives the rare values of one attribute their digits from
// next on: each run of run (run[v] >= 0, a run's index, as resolvedRuns
// numbers them: rising with the codes) a digit of its own, the other rare
// values one digit together. It returns the next digit.
func rareDigits(d []int32, rare func(v int) bool, run []int, next int32) int32 {
	pool, last, lastDigit := int32(-1), -1, int32(0)
	for v := range d {
		if !rare(v) {
			continue
		}
		if run != nil && run[v] >= 0 {
			if run[v] != last {
				last, lastDigit = run[v], next
				next++
			}
			d[v] = lastDigit
			continue
		}
		if pool < 0 {
			pool = next
			next++
		}
		d[v] = pool
	}
	return next
}

// codeRuns yields each maximal run [from, to) of consecutive codes below
// ordered for which low holds (the ordered codes of an attribute,
// smoothCodes or valueOrder).
func codeRuns(ordered int, low func(v int) bool) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for v := 0; v < ordered; {
			if !low(v) {
				v++
				continue
			}
			end := v
			for end < ordered && low(end) {
				end++
			}
			if !yield(v, end) {
				return
			}
			v = end
		}
	}
}

// resolvedRuns returns, per value of an attribute, the index of its run
// among the runs of consecutive rare values below ordered (the attribute's
// ordered codes) whose total mass passes resolved, or −1 (a value not
// rare, or in a run that does not pass: it stays in the pool).
func resolvedRuns(mass []float64, rare func(v int) bool, ordered int, resolved func(total float64, m int) bool) []int {
	run := make([]int, len(mass))
	for v := range run {
		run[v] = -1
	}
	id := 0
	for from, to := range codeRuns(ordered, rare) {
		total := 0.0
		for _, m := range mass[from:to] {
			total += m
		}
		if !resolved(total, to-from) {
			continue
		}
		for v := from; v < to; v++ {
			run[v] = id
		}
		id++
	}
	return run
}

// groups returns the groups of the table on set, or nil when every value
// of every attribute of set is supported.
func (ad *attrDigits) groups(set []int) *supportGroups {
	all := true
	for _, a := range set {
		all = all && ad.full[a]
	}
	if all {
		return nil
	}
	digits, radix := make([][]int32, len(set)), make([]int, len(set))
	for j, a := range set {
		digits[j], radix[j] = ad.digits[a], ad.radix[a]
	}
	return newGroups(digits, radix)
}

// newGroups returns the grouping of a table whose j-th attribute's value v
// has digit digits[j][v] of radix[j] digits.
func newGroups(digits [][]int32, radix []int) *supportGroups {
	g := &supportGroups{digits: digits, radix: radix, mul: make([]int, len(digits)), n: 1}
	for j := len(digits) - 1; j >= 0; j-- {
		g.mul[j] = g.n
		g.n *= radix[j]
	}
	return g
}

// rows calls f once per run of cells that differ in the set's last
// attribute only: start is the run's first cell and base the group index
// of its digits but the last. The runs come in cell order.
func (g *supportGroups) rows(f func(start, base int)) {
	k := len(g.digits)
	last := len(g.digits[k-1])
	var idx [8]int
	odo := idx[:0]
	if k-1 > len(idx) {
		odo = make([]int, 0, k-1)
	}
	odo = odo[:k-1]
	cells := g.cells()
	base := 0
	for j := range k - 1 {
		base += int(g.digits[j][0]) * g.mul[j]
	}
	for start := 0; start < cells; start += last {
		f(start, base)
		// Advance the odometer over all attributes but the last.
		for j := k - 2; j >= 0; j-- {
			base -= int(g.digits[j][odo[j]]) * g.mul[j]
			odo[j]++
			if odo[j] < len(g.digits[j]) {
				base += int(g.digits[j][odo[j]]) * g.mul[j]
				break
			}
			odo[j] = 0
			base += int(g.digits[j][0]) * g.mul[j]
		}
	}
}

// cells returns the number of cells of the grouped table.
func (g *supportGroups) cells() int {
	c := 1
	for _, d := range g.digits {
		c *= len(d)
	}
	return c
}

// cellGroups returns each cell's group.
func (g *supportGroups) cellGroups() []int32 {
	last := g.digits[len(g.digits)-1]
	gm := make([]int32, g.cells())
	g.rows(func(start, base int) {
		for v, d := range last {
			gm[start+v] = int32(base) + d
		}
	})
	return gm
}

// l1 returns Σ_g |Σ_{cells in g} (tab − n̂·m)|, the grouped table's L1
// distance, using d as scratch (returned, grown as needed).
func (g *supportGroups) l1(tab []int64, m []float64, nHat float64, d []float64) (float64, []float64) {
	d = slices.Grow(d[:0], g.n)[:g.n]
	clear(d)
	last := g.digits[len(g.digits)-1]
	g.rows(func(start, base int) {
		t, p := tab[start:start+len(last)], m[start:start+len(last)]
		for v, dg := range last {
			d[base+int(dg)] += float64(t[v]) - nHat*p[v]
		}
	})
	l := 0.0
	for _, v := range d {
		l += math.Abs(v)
	}
	return l, d
}

// sums writes each group's sum of m into d (grown as needed) and returns it.
func (g *supportGroups) sums(m []float64, d []float64) []float64 {
	d = slices.Grow(d[:0], g.n)[:g.n]
	clear(d)
	last := g.digits[len(g.digits)-1]
	g.rows(func(start, base int) {
		p := m[start : start+len(last)]
		for v, dg := range last {
			d[base+int(dg)] += p[v]
		}
	})
	return d
}

// candidateGroups returns each candidate's grouping on the supports (nil
// for a candidate whose values are all supported); the candidates share
// their attributes' digits.
func candidateGroups(sizes []int, cands [][]int, support [][]bool, runs [][]int) []*supportGroups {
	ad := newAttrDigits(sizes, support, runs)
	out := make([]*supportGroups, len(cands))
	for i, c := range cands {
		out[i] = ad.groups(c)
	}
	return out
}
