package privacy

import (
	"math/big"
	"math/bits"
)

// exact holds the scratch integers of the exact samplers (Canonne, Kamath
// and Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS
// 2020, Algorithms 1–3). Every probability is a ratio of integers and every
// coin is an exact comparison of a uniform integer with a numerator: no
// floating point touches a released value. Integers that fit in 64 bits take
// a fast path; larger ones use math/big with reused storage.
//
// An exact is not safe for concurrent use.
type exact struct {
	k, dk, rem, quo, n64, d64 big.Int
	words                     []big.Word
	draw                      big.Int
}

var bigOne = big.NewInt(1)

// bernoulli returns true with probability num/den, 0 <= num <= den,
// den > 0 (an exact Bernoulli(num/den) coin).
func (e *exact) bernoulli(r *Rand, num, den *big.Int) bool {
	if den.IsUint64() {
		return r.Uint64N(den.Uint64()) < num.Uint64()
	}
	return e.uniformBelow(r, den).Cmp(num) < 0
}

// uniformBelow returns a uniform integer in [0, n), n > 0 and larger than
// 64 bits, by rejection from the smallest enclosing power of two. The result
// aliases e's scratch and is valid until the next call.
func (e *exact) uniformBelow(r *Rand, n *big.Int) *big.Int {
	bl := n.BitLen()
	nw := (bl + bits.UintSize - 1) / bits.UintSize
	if cap(e.words) < nw {
		e.words = make([]big.Word, nw)
	}
	w := e.words[:nw]
	top := uint(bl - (nw-1)*bits.UintSize) // bits used in the top word, 1..UintSize
	for {
		for i := range w {
			w[i] = big.Word(r.Uint64())
		}
		if top < bits.UintSize {
			w[nw-1] &= big.Word(1)<<top - 1
		}
		// SetBits normalises (drops leading zero words) without copying.
		e.draw.SetBits(w)
		if e.draw.Cmp(n) < 0 {
			return &e.draw
		}
	}
}

// bernoulliExp returns true with probability exp(−num/den), num >= 0,
// den > 0 (CKS 2020, Algorithm 1). num and den must not be e's scratch.
func (e *exact) bernoulliExp(r *Rand, num, den *big.Int) bool {
	if num.Cmp(den) <= 0 {
		return e.expUnit(r, num, den)
	}
	// γ > 1: exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋)).
	e.quo.QuoRem(num, den, &e.rem)
	whole := uint64(1<<64 - 1) // beyond 2^64 coins the loop has surely stopped
	if e.quo.IsUint64() {
		whole = e.quo.Uint64()
	}
	for range whole {
		if !bernoulliExp1(r) {
			return false
		}
	}
	return e.expUnit(r, &e.rem, den)
}

// expUnit is Algorithm 1 for γ = num/den in [0, 1]: draw A_K ~
// Bernoulli(γ/K) for K = 1, 2, … until one is 0, and return whether that K
// is odd: P[K odd] = Σ_k (−γ)^k/k! = exp(−γ).
func (e *exact) expUnit(r *Rand, num, den *big.Int) bool {
	if num.IsUint64() && den.IsUint64() {
		return e.expUnit64(r, num.Uint64(), den.Uint64())
	}
	e.k.SetUint64(1)
	return e.expUnitFrom(r, num, den)
}

// expUnit64 is expUnit for 64-bit num <= den.
func (e *exact) expUnit64(r *Rand, num, den uint64) bool {
	if num == 0 {
		return true
	}
	for k := uint64(1); ; k++ {
		hi, dk := bits.Mul64(den, k)
		if hi != 0 {
			// den·k no longer fits in 64 bits: go on with big integers.
			e.n64.SetUint64(num)
			e.d64.SetUint64(den)
			e.k.SetUint64(k)
			return e.expUnitFrom(r, &e.n64, &e.d64)
		}
		if r.Uint64N(dk) >= num {
			return k%2 == 1
		}
	}
}

// expUnitFrom runs Algorithm 1's loop from K = e.k.
func (e *exact) expUnitFrom(r *Rand, num, den *big.Int) bool {
	if num.Sign() == 0 {
		return true
	}
	for {
		e.dk.Mul(den, &e.k)
		if !e.bernoulli(r, num, &e.dk) {
			return e.k.Bit(0) == 1
		}
		e.k.Add(&e.k, bigOne)
	}
}

// bernoulliExp1 returns true with probability exp(−1).
func bernoulliExp1(r *Rand) bool {
	for k := uint64(1); ; k++ {
		if r.Uint64N(k) != 0 {
			return k%2 == 1
		}
	}
}
