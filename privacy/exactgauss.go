package privacy

import (
	"fmt"
	"math"
)

// GaussianBranch is Tables integer counts, each released with independent
// discrete Gaussian noise N_Z(0, Sigma²), each of which moves by one between
// neighbours: one cell of each of Tables marginal tables when one record is
// added or removed.
type GaussianBranch struct {
	Tables int
	Sigma  float64
}

// StagedGaussian is a release made of exact discrete Gaussians only: an
// optional first count of sensitivity one with noise N_Z(0, CountSigma²)
// (CountSigma 0: none), then one of Branches, which may be chosen by any
// function of the count's noisy value.
//
// Privacy: Delta(ε) bounds the release's δ at ε from its privacy-loss
// distribution, not through zCDP. A branch's loss depends on its noise only
// through the sum Y of its Tables draws: L = (m − 2Y)/(2σ²) for m tables.
// Y is within total variation τ of the discrete Gaussian N_Z(0, mσ²)
// (branchTV, by Poisson summation), whose δ(t) is exact (Canonne, Kamath and
// Steinke 2020, Theorem 7, shift m):
//
//	δ_b(t) ≤ P[Z > σ²t − m/2] − e^t·P[Z > σ²t + m/2] + τ·(1 + e^t).
//
// Given the count's noise x, its loss is ℓ(x) = (1 − 2x)/(2σ_c²) and the
// branch is fixed, so the pair's δ(ε) = Σ_x P(x)·δ_b(x)(ε − ℓ(x)) ≤
// Σ_x P(x)·max_b δ_b(ε − ℓ(x)): the bound holds whichever branch the count
// picks. Both directions of the relation give the same loss distribution
// (the discrete Gaussian is symmetric). Every tail left out of a sum (beyond
// 9 standard deviations of the count, 13 of a branch) is counted at δ = 1,
// the count's values are taken in blocks at each block's highest loss,
// every σ² is rounded down and
// every tail probability is bounded on the private side, so Delta never
// understates δ by more than the float rounding of its sums (a relative
// 10⁻¹² or so).
type StagedGaussian struct {
	CountSigma float64
	Branches   []GaussianBranch
}

// tailSDs is how many standard deviations each sum covers before the rest
// is bounded and counted against privacy.
const tailSDs = 13

// Delta returns an upper bound on the smallest δ for which the release is
// (eps, δ)-DP (see StagedGaussian); 1 when the bound is not informative
// (a σ below 1).
func (p StagedGaussian) Delta(eps float64) float64 {
	if math.IsNaN(eps) || eps < 0 {
		panic(fmt.Sprintf("privacy: StagedGaussian.Delta(%v)", eps))
	}
	if len(p.Branches) == 0 {
		panic("privacy: StagedGaussian with no branch")
	}
	bs := make([]*branchLoss, len(p.Branches))
	for i, b := range p.Branches {
		bl, ok := newBranchLoss(b)
		if !ok {
			return 1
		}
		bs[i] = bl
	}
	worst := func(t float64) float64 {
		d := 0.0
		for _, b := range bs {
			d = max(d, b.delta(t))
		}
		return d
	}
	if p.CountSigma == 0 {
		return worst(eps)
	}
	v := sigma2Down(p.CountSigma)
	if !(v >= 1) || v > maxCountVar {
		return 1
	}
	m := int64(math.Ceil(countSDs * math.Sqrt(v)))
	s := dgNormaliser(v)
	// The count's values in blocks of width w, each at its highest loss
	// (its lowest x): δ_b(ε − ℓ) grows with ℓ, so this errs on the private
	// side, by a loss step of w/σ_c² within a block.
	w := max(1, int64(math.Sqrt(v)/countBlocksPerSD))
	sum := 0.0
	for lo := -m; lo <= m; lo += w {
		sum += blockMass(v, lo, min(lo+w-1, m)) / s * worst(eps-(1-2*float64(lo))/(2*v))
	}
	sum += 2 * gaussTailBound(v, m) / s // the count beyond ±m: δ = 1
	return min(1, sum)
}

// maxCountVar is the largest count variance Delta sums over (σ_c = 10¹²);
// beyond it Delta returns 1.
const maxCountVar = 1e24

// blockMass bounds Σ_{x=a}^{b} exp(−x²/(2v)) from above: term by term for
// a short block, else as a difference of tailSum's brackets.
func blockMass(v float64, a, b int64) float64 {
	if b-a < 256 {
		mass := 0.0
		for x := a; x <= b; x++ {
			fx := float64(x)
			mass += math.Exp(-fx * fx / (2 * v))
		}
		return mass
	}
	switch {
	case a >= 0:
		_, hi := tailSum(v, float64(a))
		lo, _ := tailSum(v, float64(b+1))
		return max(0, hi-lo)
	case b < 0:
		return blockMass(v, -b, -a)
	}
	return blockMass(v, a, -1) + blockMass(v, 0, b)
}

// countBlocksPerSD is how many blocks of the count's values a standard
// deviation holds (StagedGaussian.Delta): a block spans at most σ_c/128
// values, a loss step of at most 1/(128·σ_c), which raises δ at ε 0.1 and
// δ = 10⁻⁹ by about 0.2% (ρ by 0.02%); below σ_c = 256 every value is its
// own block.
const countBlocksPerSD = 128

// countSDs is how many standard deviations of the count the sum covers;
// the rest, 2·exp(−81/2) ≈ 5·10⁻¹⁸ of the mass, counts at δ = 1.
const countSDs = 9

// sigma2Down returns σ² rounded down by a few ulps.
func sigma2Down(sigma float64) float64 {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		panic(fmt.Sprintf("privacy: StagedGaussian with σ = %v", sigma))
	}
	return sigma * sigma * (1 - 1e-15)
}

// dgNormaliser is Σ_z exp(−z²/(2v)) over the integers, by Poisson
// summation: √(2πv)·(1 + 2·Σ_{k≥1} exp(−2π²vk²)).
func dgNormaliser(v float64) float64 {
	theta := 1.0
	for k := 1.0; ; k++ {
		t := 2 * math.Exp(-2*math.Pi*math.Pi*v*k*k)
		if t < 1e-300 || t < theta*1e-18 {
			break
		}
		theta += t
	}
	return math.Sqrt(2*math.Pi*v) * theta
}

// gaussTailBound bounds Σ_{z>m} exp(−z²/(2v)) by ∫_m^∞ exp(−u²/(2v)) du ≤
// (v/m)·exp(−m²/(2v)) (m > 0).
func gaussTailBound(v float64, m int64) float64 {
	fm := float64(m)
	return v / fm * math.Exp(-fm*fm/(2*v))
}

// branchLoss evaluates one branch's δ(t).
type branchLoss struct {
	m   float64 // tables
	v   float64 // σ² per table, rounded down
	z   dgTail  // N_Z(0, m·v)
	tau float64 // total variation between the branch's sum and z
}

func newBranchLoss(b GaussianBranch) (*branchLoss, bool) {
	if b.Tables < 1 {
		panic(fmt.Sprintf("privacy: GaussianBranch with %d tables", b.Tables))
	}
	v := sigma2Down(b.Sigma)
	if !(v >= 1) {
		return nil, false
	}
	m := float64(b.Tables)
	return &branchLoss{m: m, v: v, z: newDGTail(m * v), tau: branchTV(b.Tables, v)}, true
}

// delta bounds the branch's hockey-stick divergence at t (any real t).
func (b *branchLoss) delta(t float64) float64 {
	et := math.Exp(t)
	d := b.z.upper(b.v*t-b.m/2) - et*b.z.lower(b.v*t+b.m/2) + b.tau*(1+et)
	return min(1, max(0, d))
}

// branchTV bounds the total variation distance between the sum Y of m
// independent N_Z(0, v) draws and N_Z(0, mv), for v ≥ 1.
//
// The characteristic function of N_Z(0, v) is A(t)/A(0) with A(t) =
// Σ_k exp(−v(t + 2πk)²/2) (Poisson summation); that of N_Z(0, mv) is
// A_m(t)/A_m(0), A_m the same sum with each term to the m-th power. Split
// the circle at θ = 2π(√2 − 1), where the two bounds below decay alike. On
// |t| ≤ θ, A(t) = g(t)(1 + r(t)) with g(t) = exp(−vt²/2) and 0 ≤ r(t) ≤
// ρ₁ = 2q/(1 − q), q = exp(−2πv(π − θ)); A_m(t) = g(t)^m(1 + r_m(t)) with
// 0 ≤ r_m ≤ r; so the two functions differ by at most
// g(t)^m·(e^{mρ₁} − 1 + mρ₁) there. On θ ≤ |t| ≤ π, A(t) ≤ α =
// 2·exp(−vθ²/2) and A_m(t) ≤ 2·exp(−mvθ²/2). Inverting, every point
// probability differs by at most D = (e^{mρ₁} − 1 + mρ₁)/√(2πmv) +
// (α^m + 2·exp(−mvθ²/2))/2; over |y| ≤ M, and with both laws sub-Gaussian
// with variance proxy mv beyond (CKS 2020, Lemma 8), the distance is at
// most (M + ½)·D + 2·exp(−M²/(2mv)).
func branchTV(m int, v float64) float64 {
	if m == 1 {
		return 0
	}
	fm := float64(m)
	theta := 2 * math.Pi * (math.Sqrt2 - 1)
	q := math.Exp(-2 * math.Pi * v * (math.Pi - theta))
	rho1 := 2 * q / (1 - q)
	if fm*rho1 > 0.5 {
		return 1
	}
	s2 := fm * v
	alpha := min(1, 2*math.Exp(-v*theta*theta/2))
	far := (math.Pow(alpha, fm) + 2*math.Exp(-s2*theta*theta/2)) / 2
	d := (math.Expm1(fm*rho1)+fm*rho1)/math.Sqrt(2*math.Pi*s2) + far
	big := math.Ceil(tailSDs * math.Sqrt(s2))
	return min(1, (big+0.5)*d+2*math.Exp(-big*big/(2*s2)))
}

// dgTail bounds the upper tail of N_Z(0, v): from a table of suffix sums
// (exact) when the table is small, else from the Gaussian integral
// (tailSum). Either way P[Z ≥ k] is bracketed, never estimated.
type dgTail struct {
	v      float64
	suffix []float64 // suffix[k] = Σ_{z=k}^{M} exp(−z²/(2v)), 0 ≤ k ≤ M = ⌈13√v⌉; nil: analytic
	out, s float64   // the mass beyond M (unnormalised, a bound); the normaliser
}

// maxTailTable is the largest table dgTail builds; beyond it the tails
// come from the Gaussian integral, whose bracket is then within a relative
// 10⁻⁶ or so.
const maxTailTable = 1 << 15

func newDGTail(v float64) dgTail {
	d := dgTail{v: v, s: dgNormaliser(v)}
	m := math.Ceil(tailSDs * math.Sqrt(v))
	if m > maxTailTable {
		return d
	}
	n := int(m)
	d.suffix = make([]float64, n+2)
	for z := n; z >= 0; z-- {
		fz := float64(z)
		d.suffix[z] = d.suffix[z+1] + math.Exp(-fz*fz/(2*v))
	}
	d.out = gaussTailBound(v, int64(n))
	return d
}

// atLeast returns bounds on P[Z ≥ k] for k ≥ 0.
func (d *dgTail) atLeast(k float64) (lo, hi float64) {
	if d.suffix == nil {
		l, h := tailSum(d.v, k)
		return l / d.s, min(1, h/d.s)
	}
	if k >= float64(len(d.suffix)-1) {
		return 0, min(1, d.out/d.s)
	}
	c := d.suffix[int(k)]
	return c / d.s, min(1, (c+d.out)/d.s)
}

// tailSum brackets Σ_{z≥k} f(z), f(z) = exp(−z²/(2v)), for an integer
// k ≥ 0, with I(a) = ∫_a^∞ f = √(πv/2)·erfc(a/√(2v)). f decreases on
// [0, ∞), so the sum lies in [I(k), f(k) + I(k)]; where f is also convex
// (from √v on) the trapezoid and midpoint rules give the much tighter
// [I(k) + f(k)/2, I(k − ½)]. Both ends are widened by a relative 10⁻¹²
// for the float evaluation (and the upper by 10⁻³⁰⁰ for underflow).
func tailSum(v, k float64) (lo, hi float64) {
	c := math.Sqrt(math.Pi * v / 2)
	r := 1 / math.Sqrt(2*v)
	integral := func(a float64) float64 { return c * math.Erfc(a*r) }
	f := math.Exp(-k * k / (2 * v))
	if k-0.5 >= math.Sqrt(v) {
		lo, hi = integral(k)+f/2, integral(k-0.5)
	} else {
		lo, hi = integral(k), f+integral(k)
	}
	return lo * (1 - 1e-12), hi*(1+1e-12) + 1e-300
}

// above returns bounds on P[Z > a].
func (d *dgTail) above(a float64) (lo, hi float64) {
	k := math.Floor(a) + 1 // Z > a ⟺ Z ≥ k
	if k >= 1 {
		return d.atLeast(min(k, 1e300))
	}
	// P[Z ≥ k] = 1 − P[Z ≤ k − 1] = 1 − P[Z ≥ 1 − k] by symmetry.
	l, h := d.atLeast(min(1-k, 1e300))
	return 1 - h, 1 - l
}

func (d *dgTail) upper(a float64) float64 { _, h := d.above(a); return h }
func (d *dgTail) lower(a float64) float64 { l, _ := d.above(a); return l }
