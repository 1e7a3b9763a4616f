package vec

import "math"

// TiledStep is Step's pass cut into tiles that the caller runs, each once,
// in any order and concurrently: a step fused into an operator's pass over
// the universe (query.Operator.AdjointMapAnswer), where a tile's gradient
// exists only in the operator's scratch while its cells are in the cache.
//
//	ts.Begin(theta2, theta, s, shift, e, keep, tiles)
//	op.AdjointMapAnswer(u, ts.Tile, ans)   // ts.Tile(t, lo, g) for every tile t
//	logZ, z, redone := ts.End()
//
// As Step, each tile writes θ2 = θ − s·g and the exponentials e^(θ2 − c)
// for the shift c the caller guessed: into e, or, when the caller keeps
// only their answers (keep false), into the gradient's tile g. Tile returns
// them. End sums the tiles in their order (the sum does not depend on which
// worker ran which tile) and, where the guess was more than shiftRange from
// the largest θ2, takes the exponentials again at the maximum into e, on
// the Step's team, and reports redone: anything the caller computed from
// the tiles' exponentials is then stale. Tile allocates nothing; Begin
// allocates only for more tiles than any call before.
type TiledStep struct {
	st               *Step
	theta2, theta, e []float64
	keep             bool
	s, shift         float64
	mx, sum          []float64 // per tile
}

// NewTiledStep returns a tiled step whose redone exponentials run on st's
// team.
func NewTiledStep(st *Step) *TiledStep { return &TiledStep{st: st} }

// Begin sets up a step θ2 = θ − s·g over tiles tiles, with the shift guess
// shift, the exponentials kept in e or only redone there (keep false);
// theta2 may be theta, e must not share memory with either.
func (ts *TiledStep) Begin(theta2, theta []float64, s, shift float64, e []float64, keep bool, tiles int) {
	if len(theta2) != len(theta) || len(e) != len(theta) {
		panic("vec: TiledStep with different lengths")
	}
	if math.IsNaN(shift) || math.IsInf(shift, 0) {
		panic("vec: TiledStep with a shift that is not finite")
	}
	ts.theta2, ts.theta, ts.e, ts.keep, ts.s, ts.shift = theta2, theta, e, keep, s, shift
	if cap(ts.mx) < tiles {
		ts.mx, ts.sum = make([]float64, tiles), make([]float64, tiles)
	}
	ts.mx, ts.sum = ts.mx[:tiles], ts.sum[:tiles]
	for t := range ts.mx {
		ts.mx[t] = math.NaN() // a tile that never ran shows in End
	}
}

// Tile runs tile t: cells [lo, lo+len(g)) with gradient g, in chunks that
// stay in the L1 cache, and returns the tile's exponentials (in e, or in
// g).
func (ts *TiledStep) Tile(t, lo int, g []float64) []float64 {
	e := g // each chunk's gradient is read before its exponentials overwrite it
	if ts.keep {
		e = ts.e[lo : lo+len(g)]
	}
	mx, sum := math.Inf(-1), 0.0
	for c0 := 0; c0 < len(g); c0 += chunk {
		c1 := min(c0+chunk, len(g))
		th2 := ts.theta2[lo+c0 : lo+c1]
		mx = max(mx, subScaledMax(th2, ts.theta[lo+c0:lo+c1], g[c0:c1], ts.s))
		sum += ExpShiftSum(e[c0:c1], th2, ts.shift)
	}
	ts.mx[t], ts.sum[t] = mx, sum
	return e
}

// End returns log Σ e^θ2 and z = 1/Σ e, and whether e was taken again at a
// new shift. It panics, as Step, if θ2 holds a NaN or +Inf, or only −Inf,
// and if a tile did not run.
func (ts *TiledStep) End() (logZ, z float64, redone bool) {
	defer func() { ts.theta2, ts.theta, ts.e = nil, nil, nil }()
	mx := maxOfMaxima(ts.mx) // Begin marks every tile NaN until it runs
	if math.Abs(mx-ts.shift) > shiftRange {
		logZ, z = ts.st.Exp(ts.theta2, mx, ts.e)
		return logZ, z, true
	}
	logZ, z = logSum(ts.shift, ts.sum)
	return logZ, z, false
}
