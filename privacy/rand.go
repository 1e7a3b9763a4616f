package privacy

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
)

// Rand is the only source of randomness for privacy. It is a ChaCha8 stream
// (math/rand/v2) keyed either from the operating system's cryptographic
// generator (NewSecure) or from a user seed (NewSeeded, for tests and demos).
//
// A Rand is not safe for concurrent use. Parallel workers each take their
// own stream with Split; streams split from a seeded Rand are themselves
// deterministic, so a seeded run is reproducible whatever the number of
// workers, as long as the work given to each stream is fixed.
type Rand struct {
	src    rand.ChaCha8
	secure bool
	seed   uint64 // the user seed, when !secure
	vec    *vecState
}

// SeededWarning is what Describe returns for a seeded Rand; the manifest and
// stderr repeat it.
const SeededWarning = "seeded: not private against anyone who knows the seed"

// entropy is where NewSecure reads its key; a variable so that tests can
// make the read fail.
var entropy io.Reader = crand.Reader

// NewSecure returns a Rand keyed with 32 bytes from crypto/rand. It returns
// an error, and no Rand, if the operating system's generator cannot be read;
// callers must stop rather than fall back to anything weaker.
func NewSecure() (*Rand, error) {
	var key [32]byte
	if _, err := io.ReadFull(entropy, key[:]); err != nil {
		return nil, fmt.Errorf("privacy: reading the system's secure random source: %w", err)
	}
	r := &Rand{secure: true}
	r.src.Seed(key)
	clear(key[:])
	return r, nil
}

// NewSeeded returns a deterministic Rand for tests and demos. Its output is
// not private against anyone who knows the seed (see Describe).
func NewSeeded(seed uint64) *Rand {
	var key [32]byte
	// Domain-separate user seeds from other uses of ChaCha8 keys.
	copy(key[:], "synth/privacy seeded v1\x00")
	binary.LittleEndian.PutUint64(key[24:], seed)
	r := &Rand{seed: seed}
	r.src.Seed(key)
	return r
}

// Secure reports whether r is keyed from crypto/rand.
func (r *Rand) Secure() bool { return r.secure }

// Describe says where r's randomness comes from, for the manifest.
func (r *Rand) Describe() string {
	if r.secure {
		return "secure: ChaCha8 keyed from crypto/rand"
	}
	return SeededWarning
}

// Split returns a new stream keyed with 256 bits drawn from r. The child has
// r's security status; drawing the key advances r, so successive calls give
// independent streams and a seeded run stays deterministic.
func (r *Rand) Split() *Rand {
	c := &Rand{secure: r.secure, seed: r.seed}
	c.src.Seed(r.key())
	return c
}

// SplitN returns n independent streams split from r, one per worker.
func (r *Rand) SplitN(n int) []*Rand {
	out := make([]*Rand, n)
	for i := range out {
		out[i] = r.Split()
	}
	return out
}

// key draws a fresh 256-bit ChaCha8 key from r.
func (r *Rand) key() [32]byte {
	var k [32]byte
	for i := 0; i < 32; i += 8 {
		binary.LittleEndian.PutUint64(k[i:], r.src.Uint64())
	}
	return k
}

// Uint64 returns 64 uniform bits.
func (r *Rand) Uint64() uint64 { return r.src.Uint64() }

// Bit returns a uniform bit.
func (r *Rand) Bit() bool { return r.src.Uint64()>>63 != 0 }

// Uint64N returns a uniform integer in [0, n); it panics if n == 0. It is
// exact (Lemire's multiply-and-reject), so Bernoulli(a/n) = Uint64N(n) < a.
func (r *Rand) Uint64N(n uint64) uint64 {
	if n == 0 {
		panic("privacy: Uint64N(0)")
	}
	hi, lo := bits.Mul64(r.src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.src.Uint64(), n)
		}
	}
	return hi
}

// Float64 returns a uniform float64 in [0, 1) with 53 random bits.
func (r *Rand) Float64() float64 {
	return float64(r.src.Uint64()>>11) * 0x1p-53
}

// openFloat64 returns a uniform float64 in (0, 1]: never 0, so that its
// logarithm is finite.
func (r *Rand) openFloat64() float64 {
	return float64(r.src.Uint64()>>11+1) * 0x1p-53
}

// NormFloat64 returns a standard normal draw (ziggurat; see GaussianVector
// for its use and its caveats). Not for released values.
func (r *Rand) NormFloat64() float64 { return normal(&r.src) }

// pow2 returns 2^e for any exponent in the float64 range.
func pow2(e int) float64 { return math.Ldexp(1, e) }
