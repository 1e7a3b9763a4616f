package continual

import "math/bits"

// The binary tree over the horizon's periods 0..T−1. Node (l, j) covers the
// periods [j·2^l, (j+1)·2^l) (cut at T); level l has ⌈T/2^l⌉ nodes and
// there are Levels(T) = ⌈log₂T⌉ + 1 levels, so that a record of any period
// enters exactly one node per level. A node is released when its last
// period is added, and the prefix [0, t) is the sum of the nodes of t's
// binary digits: at most one per level.

// Levels is the number of levels of the tree over T periods.
func Levels(T int) int {
	if T <= 1 {
		return 1
	}
	return bits.Len(uint(T-1)) + 1
}

// Node identifies a node of the tree.
type Node struct{ Level, Index int }

// Span returns the periods [lo, hi) the node covers in a horizon of T.
func (n Node) Span(T int) (lo, hi int) {
	lo = n.Index << n.Level
	return lo, min(lo+1<<n.Level, T)
}

// Completes returns the nodes whose last period is t (0-based), in level
// order: the level-0 node of t, and each higher node that ends at t (or
// at the horizon's last period).
func Completes(t, T int) []Node {
	var out []Node
	for l := range Levels(T) {
		if (t+1)%(1<<l) == 0 || t == T-1 {
			out = append(out, Node{l, t >> l})
		}
	}
	return out
}

// Prefix returns the nodes whose sum is the prefix of the first t periods
// (t >= 1): one node per binary digit of t, largest first.
func Prefix(t int) []Node {
	var out []Node
	start := 0
	for l := bits.Len(uint(t)) - 1; l >= 0; l-- {
		if t&(1<<l) != 0 {
			out = append(out, Node{l, start >> l})
			start += 1 << l
		}
	}
	return out
}

// Variances returns, per level, the variance of a node's estimate (in
// units of the node noise's variance σ²) with or without the bottom-up
// re-weighting (Honaker 2015): a node of level l ≥ 1 whose two children
// are both complete is estimated by the inverse-variance weighted mean of
// its own noisy value and the sum of its children's estimates, so that
// v₀ = 1 and v_l = 1 / (1 + 1/(2·v_{l−1})). A node with one child (the
// last of a level when T is not a power of two) combines with that child
// alone. Returned for full nodes; see Estimator for the exact ones.
func Variances(levels int, reweight bool) []float64 {
	v := make([]float64, levels)
	v[0] = 1
	for l := 1; l < levels; l++ {
		if reweight {
			v[l] = 1 / (1 + 1/(2*v[l-1]))
		} else {
			v[l] = 1
		}
	}
	return v
}

// Estimator turns released noisy nodes into estimates of node sums and
// prefixes. Without re-weighting a node's estimate is its noisy value
// (variance σ²); with it, a node of level l ≥ 1 is the inverse-variance
// weighted mean of its noisy value and the sum of its children's
// estimates (Honaker 2015, the bottom-up pass), computed once per node.
// Every estimate is a linear function of released nodes: post-processing.
type Estimator struct {
	T        int
	Reweight bool
	// Noisy returns a released node's noisy values.
	Noisy func(Node) ([]int64, error)
	cache map[Node]estimate
}

type estimate struct {
	v    []float64
	var_ float64 // in units of σ²
}

// Node returns the estimate of a node's sum and its variance in units of
// the node noise's σ².
func (e *Estimator) Node(n Node) ([]float64, float64, error) {
	if c, ok := e.cache[n]; ok {
		return c.v, c.var_, nil
	}
	y, err := e.Noisy(n)
	if err != nil {
		return nil, 0, err
	}
	est := estimate{v: make([]float64, len(y)), var_: 1}
	for i, x := range y {
		est.v[i] = float64(x)
	}
	if e.Reweight && n.Level > 0 {
		sum := make([]float64, len(y))
		vs := 0.0
		for _, c := range []Node{{n.Level - 1, 2 * n.Index}, {n.Level - 1, 2*n.Index + 1}} {
			if lo, _ := c.Span(e.T); lo >= e.T {
				continue
			}
			cv, cvar, err := e.Node(c)
			if err != nil {
				return nil, 0, err
			}
			for i, x := range cv {
				sum[i] += x
			}
			vs += cvar
		}
		// Weights 1/1 (the node) and 1/vs (its children's sum).
		w := (1 / vs) / (1 + 1/vs)
		for i := range est.v {
			est.v[i] = (1-w)*est.v[i] + w*sum[i]
		}
		est.var_ = 1 / (1 + 1/vs)
	}
	if e.cache == nil {
		e.cache = map[Node]estimate{}
	}
	e.cache[n] = est
	return est.v, est.var_, nil
}

// Prefix returns the estimate of the sum of the first t periods and its
// variance in units of σ².
func (e *Estimator) Prefix(t int) ([]float64, float64, error) {
	var out []float64
	total := 0.0
	for _, n := range Prefix(t) {
		v, nv, err := e.Node(n)
		if err != nil {
			return nil, 0, err
		}
		if out == nil {
			out = make([]float64, len(v))
		}
		for i, x := range v {
			out[i] += x
		}
		total += nv
	}
	return out, total, nil
}
