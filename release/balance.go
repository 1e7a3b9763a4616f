package release

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpsynth/synth/query"
)

// Answerer is the workload as Balance sees it: A (M × K) applied to dense
// vectors over the universe. *query.Operator implements it.
type Answerer interface {
	M() int
	K() int
	Answer(d, out []float64)
	Adjoint(y, out []float64)
}

// BalanceStats reports what Balance did.
type BalanceStats struct {
	Rounds, Moves int
	// Before and After are the workload's root-mean-square sampling error
	// (rows against D, as fractions of the rows) before and after.
	Before, After float64
}

// Toucher lists the queries whose support holds a universe cell, with
// their value there (MarginalTouch builds one for a workload's marginals).
type Toucher interface {
	Touch(z int, dst []Touch) []Touch
}

// Touch is query J's value W on a cell.
type Touch struct {
	J int
	W float64
}

// Balance improves a controlled rounding of N·D (the output of Sample with
// Systematic: every count ⌊N·D(z)⌋ or ⌈N·D(z)⌉) so that the workload's
// answers on the rows follow D's more closely. It moves single rows from a
// cell rounded up to a cell rounded down — so every count stays within one
// of N·D(z) and the total stays N — greedily, each move chosen among the
// cells with the largest gradient of Σ_j (answer_j(rows) − answer_j(D))²
// (one Answer and one Adjoint per round) and taken only if it lowers that
// sum, computed exactly on the queries the toucher lists.
//
// Systematic sampling keeps the marginals of the leading attributes (cells
// contiguous in the mixed-radix order) within one row, but spreads the
// rounding errors of every other marginal like independent coin flips;
// balancing evens them out across the whole workload. It is
// post-processing of D and the public workload: it costs no privacy. The
// rows are no longer an unbiased random rounding of N·D cell by cell; use
// Systematic or IID for that.
func Balance(cells []CellCount, d []float64, n int64, op Answerer, t Toucher, maxRounds int) ([]CellCount, BalanceStats, error) {
	k, m := op.K(), op.M()
	if len(d) != k {
		return cells, BalanceStats{}, fmt.Errorf("balance: D has %d cells, the workload %d", len(d), k)
	}
	var st BalanceStats
	if n <= 0 || len(cells) == 0 || t == nil {
		return cells, st, nil
	}
	sum := 0.0
	for _, v := range d {
		sum += v
	}
	scale := float64(n) / sum
	inv := 1 / float64(n)
	// diff = rows − N·D over the universe; the moves change it by ±1.
	diff := make([]float64, k)
	for z, v := range d {
		diff[z] = -v * scale
	}
	for _, c := range cells {
		diff[c.Cell] += float64(c.Count)
	}
	r := make([]float64, m) // A·diff/N: the answers' errors
	s := make([]float64, k) // Aᵀr
	residual := func() float64 {
		op.Answer(diff, r)
		o := 0.0
		for j := range r {
			r[j] *= inv
			o += r[j] * r[j]
		}
		return o
	}
	obj := residual()
	st.Before = math.Sqrt(obj / float64(m))
	var (
		up, down []int
		tu, td   []Touch
		mark     = make([]float64, m) // the up cell's values, to find overlaps
	)
	const cand = 4096
	for st.Rounds < maxRounds {
		st.Rounds++
		op.Adjoint(r, s)
		up, down = up[:0], down[:0]
		for z, v := range diff {
			switch {
			case v > 1e-9 && v < 1+1e-9:
				up = append(up, z)
			case v < -1e-9 && v > -1-1e-9:
				down = append(down, z)
			}
		}
		bu, bd := min(cand, len(up)), min(cand, len(down))
		if bu == 0 || bd == 0 {
			break
		}
		topK(up, bu, func(z int) float64 { return -s[z] })
		topK(down, bd, func(z int) float64 { return s[z] })
		slices.SortFunc(up[:bu], func(a, c int) int { return cmpf(s[c], s[a]) })
		slices.SortFunc(down[:bd], func(a, c int) int { return cmpf(s[a], s[c]) })
		moves := 0
		for i, j := 0, 0; i < bu && j < bd; {
			zu, zd := up[i], down[j]
			if diff[zu] <= 1e-9 {
				i++
				continue
			}
			if diff[zd] >= -1e-9 {
				j++
				continue
			}
			// The exact change of Σ r² for moving one row from zu to zd:
			// Σ over the touched queries of (r + δ)² − r², δ = ±W/N.
			tu, td = t.Touch(zu, tu[:0]), t.Touch(zd, td[:0])
			for _, q := range tu {
				mark[q.J] -= q.W * inv
			}
			for _, q := range td {
				mark[q.J] += q.W * inv
			}
			gain := 0.0
			for _, q := range tu {
				if dq := mark[q.J]; dq != 0 {
					gain += 2*r[q.J]*dq + dq*dq
					mark[q.J] = 0
				}
			}
			for _, q := range td {
				if dq := mark[q.J]; dq != 0 {
					gain += 2*r[q.J]*dq + dq*dq
					mark[q.J] = 0
				}
			}
			if gain >= 0 {
				// Neither cell helps the other: drop the weaker candidate.
				if s[zu]+s[zd] > 0 {
					j++
				} else {
					i++
				}
				if s[zu]-s[zd] <= 0 {
					break
				}
				continue
			}
			for _, q := range tu {
				r[q.J] -= q.W * inv
			}
			for _, q := range td {
				r[q.J] += q.W * inv
			}
			diff[zu]--
			diff[zd]++
			moves++
			i++
			j++
		}
		st.Moves += moves
		obj = residual() // exact again (other families, rounding)
		if moves == 0 {
			break
		}
	}
	st.After = math.Sqrt(obj / float64(m))
	out := cells[:0]
	for z, v := range diff {
		c := int64(math.Round(v + d[z]*scale))
		if c > 0 {
			out = append(out, CellCount{Cell: uint64(z), Count: c})
		}
	}
	return out, st, nil
}

func cmpf(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// topK reorders idx so that its first k elements have the k smallest keys
// (in no particular order): quickselect, O(len(idx)) on average.
func topK(idx []int, k int, key func(int) float64) {
	lo, hi := 0, len(idx)-1
	for lo < hi {
		p := key(idx[(lo+hi)/2])
		i, j := lo, hi
		for i <= j {
			for key(idx[i]) < p {
				i++
			}
			for key(idx[j]) > p {
				j--
			}
			if i <= j {
				idx[i], idx[j] = idx[j], idx[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// MarginalTouch returns a Toucher for the marginal sets of a workload over
// an indexable universe: for each set, the query of the set's cell that
// holds universe cell z, with the set's weight. Other families are not
// listed (Balance's exact objective still counts them).
func MarginalTouch(w *query.Workload) Toucher {
	dom := w.Domain()
	return &marginalTouch{sizes: dom.Sizes(), sets: w.Marginals(), codes: make([]int, dom.Len())}
}

type marginalTouch struct {
	sizes []int
	sets  []query.Marginal
	codes []int
}

func (mt *marginalTouch) Touch(z int, dst []Touch) []Touch {
	r := z
	for i := len(mt.sizes) - 1; i >= 0; i-- {
		mt.codes[i] = r % mt.sizes[i]
		r /= mt.sizes[i]
	}
	for _, s := range mt.sets {
		c := 0
		for _, a := range s.Attrs {
			c = c*mt.sizes[a] + mt.codes[a]
		}
		dst = append(dst, Touch{J: s.Offset + c, W: s.Weight})
	}
	return dst
}
