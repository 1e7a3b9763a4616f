package privacy

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// MaxDiscreteScale bounds the scale of DiscreteLaplace and the σ of
// DiscreteGaussian. Samples are int64; at this scale a draw beyond ±2^62 has
// probability below exp(−2^22), and such a draw is rejected and redrawn
// (which changes the distribution by less than that).
const MaxDiscreteScale = 1 << 40

// DiscreteLaplace samples the discrete Laplace distribution on the integers,
// P[X = x] ∝ exp(−|x|/scale), exactly (CKS 2020, Algorithm 2), for a
// rational scale.
//
// Privacy: adding one draw to an integer-valued statistic of ℓ1
// sensitivity Δ (under the stated neighbouring relation; by default replace
// one record, n public) is (Δ/scale)-DP (pure), and so (Δ/scale)²/2-zCDP.
// The sampler is exact: its output distribution is the stated one, with no
// floating-point approximation (Canonne, Kamath, Steinke, "The Discrete
// Gaussian for Differential Privacy", NeurIPS 2020).
//
// A DiscreteLaplace keeps scratch space: it is not safe for concurrent use;
// give each goroutine its own (Clone).
type DiscreteLaplace struct {
	scale   big.Rat
	t, s    big.Int // scale = t/s in lowest terms
	fast    bool    // t and s fit in 64 bits
	t64     uint64
	s64     uint64
	sShift  int // k when s = 2^k, else −1
	e       exact
	u, x, q big.Int
}

// NewDiscreteLaplace returns a sampler for the scale given as a float64,
// converted exactly to a rational. The scale must be finite, positive and at
// most MaxDiscreteScale.
func NewDiscreteLaplace(scale float64) (*DiscreteLaplace, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("privacy: discrete Laplace scale %v: must be finite and positive", scale)
	}
	var q big.Rat
	q.SetFloat64(scale)
	return NewDiscreteLaplaceRat(&q)
}

// NewDiscreteLaplaceRat returns a sampler for an exact rational scale.
func NewDiscreteLaplaceRat(scale *big.Rat) (*DiscreteLaplace, error) {
	if scale.Sign() <= 0 {
		return nil, fmt.Errorf("privacy: discrete Laplace scale %s: must be positive", scale.RatString())
	}
	if scale.Cmp(new(big.Rat).SetInt64(MaxDiscreteScale)) > 0 {
		return nil, fmt.Errorf("privacy: discrete Laplace scale %s exceeds 2^40", scale.FloatString(3))
	}
	return newDiscreteLaplace(scale), nil
}

// newDiscreteLaplace builds the sampler for a positive scale; the callers
// check the bounds.
func newDiscreteLaplace(scale *big.Rat) *DiscreteLaplace {
	d := new(DiscreteLaplace)
	d.scale.Set(scale)
	d.t.Set(d.scale.Num())
	d.s.Set(d.scale.Denom())
	if d.t.IsUint64() && d.s.IsUint64() {
		d.fast, d.t64, d.s64 = true, d.t.Uint64(), d.s.Uint64()
	}
	d.sShift = -1
	if tz := d.s.TrailingZeroBits(); int(tz) == d.s.BitLen()-1 {
		d.sShift = int(tz)
	}
	return d
}

// Clone returns an independent sampler with the same scale, for another
// goroutine.
func (d *DiscreteLaplace) Clone() *DiscreteLaplace {
	return newDiscreteLaplace(&d.scale)
}

// Scale returns the scale as an exact rational (do not modify).
func (d *DiscreteLaplace) Scale() *big.Rat { return &d.scale }

// Cost returns the privacy cost of adding one draw to an integer statistic of
// ℓ1 sensitivity l1Sensitivity: ε = Δ/scale, rounded up.
func (d *DiscreteLaplace) Cost(l1Sensitivity float64) Cost {
	if !(l1Sensitivity > 0) || math.IsInf(l1Sensitivity, 0) {
		panic(fmt.Sprintf("privacy: DiscreteLaplace.Cost with sensitivity %v", l1Sensitivity))
	}
	var q big.Rat
	q.SetFloat64(l1Sensitivity)
	q.Quo(&q, &d.scale)
	return PureCost(ratFloatUp(&q))
}

// Sample returns one draw.
func (d *DiscreteLaplace) Sample(r *Rand) int64 {
	for {
		x, ok := d.try(r)
		if ok {
			return x
		}
	}
}

// try is one round of Algorithm 2 (with s, t from scale = t/s):
//
//	U ← Uniform{0..t−1}; reject unless Bernoulli(exp(−U/t))
//	V ← number of Bernoulli(exp(−1)) successes before the first failure
//	X ← ⌊(U + t·V)/s⌋; Y ← Bernoulli(1/2); reject if Y = 1 and X = 0
//	return (1 − 2Y)·X
func (d *DiscreteLaplace) try(r *Rand) (int64, bool) {
	if d.fast {
		u := r.Uint64N(d.t64)
		if !d.e.expUnit64(r, u, d.t64) {
			return 0, false
		}
		v := geometricExp1(r)
		hi, lo := bits.Mul64(d.t64, v)
		var c uint64
		lo, c = bits.Add64(lo, u, 0)
		hi += c
		if hi >= d.s64 {
			return 0, false // X >= 2^64: see MaxDiscreteScale
		}
		x, _ := bits.Div64(hi, lo, d.s64)
		if x > math.MaxInt64 {
			return 0, false
		}
		neg := r.Bit()
		if neg && x == 0 {
			return 0, false
		}
		if neg {
			return -int64(x), true
		}
		return int64(x), true
	}
	if d.t.IsUint64() {
		d.u.SetUint64(r.Uint64N(d.t.Uint64()))
	} else {
		d.u.Set(d.e.uniformBelow(r, &d.t))
	}
	if !d.e.expUnit(r, &d.u, &d.t) {
		return 0, false
	}
	d.x.SetUint64(geometricExp1(r))
	d.x.Mul(&d.x, &d.t)
	d.x.Add(&d.x, &d.u)
	if d.sShift >= 0 {
		d.q.Rsh(&d.x, uint(d.sShift)) // s = 2^k, the case of float scales: no allocation
	} else {
		d.q.Quo(&d.x, &d.s)
	}
	if !d.q.IsInt64() {
		return 0, false
	}
	x := d.q.Int64()
	neg := r.Bit()
	if neg && x == 0 {
		return 0, false
	}
	if neg {
		return -x, true
	}
	return x, true
}

// geometricExp1 counts Bernoulli(exp(−1)) successes before the first failure.
func geometricExp1(r *Rand) uint64 {
	var v uint64
	for bernoulliExp1(r) {
		v++
	}
	return v
}

// DiscreteGaussian samples the discrete Gaussian on the integers,
// P[X = x] ∝ exp(−x²/(2σ²)), exactly, by rejection from a discrete Laplace
// of scale t = ⌊σ⌋ + 1 (CKS 2020, Algorithm 3): accept Y with probability
// exp(−(|Y| − σ²/t)²/(2σ²)), a Bernoulli computed on exact rationals.
//
// Privacy: adding independent draws to each coordinate of an integer-valued
// vector statistic of ℓ2 sensitivity Δ (replace one record, n public, unless
// the caller states otherwise) satisfies Δ²/(2σ²)-zCDP (CKS 2020, Theorem 14).
// The sampler is exact. Its variance is slightly below σ².
//
// A DiscreteGaussian keeps scratch space: it is not safe for concurrent use;
// give each goroutine its own (Clone).
type DiscreteGaussian struct {
	sigma2 big.Rat
	p, q   big.Int // σ² = p/q
	qt     big.Int // q·t
	den    big.Int // 2·p·q·t²
	lap    *DiscreteLaplace
	e      exact
	a, a2  big.Int
}

// NewDiscreteGaussian returns a sampler for σ given as a float64; σ² is
// computed exactly from σ's rational value. σ must be finite, positive and at
// most MaxDiscreteScale.
func NewDiscreteGaussian(sigma float64) (*DiscreteGaussian, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("privacy: discrete Gaussian sigma %v: must be finite and positive", sigma)
	}
	var s big.Rat
	s.SetFloat64(sigma)
	s.Mul(&s, &s)
	return NewDiscreteGaussianRat(&s)
}

// NewDiscreteGaussianRat returns a sampler for an exact rational variance
// parameter σ².
func NewDiscreteGaussianRat(sigma2 *big.Rat) (*DiscreteGaussian, error) {
	if sigma2.Sign() <= 0 {
		return nil, errors.New("privacy: discrete Gaussian σ² must be positive")
	}
	lim := new(big.Rat).SetInt64(MaxDiscreteScale)
	lim.Mul(lim, lim)
	if sigma2.Cmp(lim) > 0 {
		return nil, fmt.Errorf("privacy: discrete Gaussian σ² = %s exceeds 2^80", sigma2.FloatString(3))
	}
	g := new(DiscreteGaussian)
	g.sigma2.Set(sigma2)
	g.p.Set(g.sigma2.Num())
	g.q.Set(g.sigma2.Denom())
	// t = ⌊σ⌋ + 1 = isqrt(⌊p/q⌋) + 1.
	var t big.Int
	t.Quo(&g.p, &g.q)
	t.Sqrt(&t)
	t.Add(&t, bigOne)
	g.qt.Mul(&g.q, &t)
	g.den.Mul(&g.p, &g.qt)
	g.den.Mul(&g.den, &t)
	g.den.Lsh(&g.den, 1)
	g.lap = newDiscreteLaplace(new(big.Rat).SetInt(&t)) // t <= 2^40 + 1
	return g, nil
}

// Clone returns an independent sampler with the same σ², for another
// goroutine.
func (g *DiscreteGaussian) Clone() *DiscreteGaussian {
	c, _ := NewDiscreteGaussianRat(&g.sigma2)
	return c
}

// Sigma2 returns σ² as an exact rational (do not modify).
func (g *DiscreteGaussian) Sigma2() *big.Rat { return &g.sigma2 }

// Sigma returns σ as a float64 (nearest).
func (g *DiscreteGaussian) Sigma() float64 {
	v, _ := g.sigma2.Float64()
	return math.Sqrt(v)
}

// Cost returns the zCDP cost of adding one vector of draws to an integer
// statistic of ℓ2 sensitivity l2Sensitivity: ρ = Δ²/(2σ²), rounded up.
func (g *DiscreteGaussian) Cost(l2Sensitivity float64) Cost {
	if !(l2Sensitivity > 0) || math.IsInf(l2Sensitivity, 0) {
		panic(fmt.Sprintf("privacy: DiscreteGaussian.Cost with sensitivity %v", l2Sensitivity))
	}
	var d big.Rat
	d.SetFloat64(l2Sensitivity)
	d.Mul(&d, &d)
	d.Quo(&d, &g.sigma2)
	d.Quo(&d, big.NewRat(2, 1))
	return ZCDPCost(ratFloatUp(&d))
}

// Sample returns one draw.
func (g *DiscreteGaussian) Sample(r *Rand) int64 {
	for {
		y := g.lap.Sample(r)
		ay := y
		if ay < 0 {
			ay = -ay
		}
		// γ = (|Y| − σ²/t)²/(2σ²) = (|Y|·q·t − p)² / (2·p·q·t²).
		g.a.SetInt64(ay)
		g.a.Mul(&g.a, &g.qt)
		g.a.Sub(&g.a, &g.p)
		g.a2.Mul(&g.a, &g.a)
		if g.e.bernoulliExp(r, &g.a2, &g.den) {
			return y
		}
	}
}

// AddTo adds one independent draw to each element of counts (the discrete
// Gaussian mechanism on an integer vector).
func (g *DiscreteGaussian) AddTo(r *Rand, counts []int64) {
	for i := range counts {
		counts[i] += g.Sample(r)
	}
}

// ratFloatUp returns the smallest float64 >= q (q >= 0), so that a cost
// reported as a float is never below the exact one.
func ratFloatUp(q *big.Rat) float64 {
	f, exact := q.Float64()
	if !exact {
		var back big.Rat
		if back.SetFloat64(f) != nil && back.Cmp(q) < 0 {
			f = math.Nextafter(f, math.Inf(1))
		}
	}
	return f
}
