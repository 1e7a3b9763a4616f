package privacy

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// GaussianVector fills out with independent N(0, sigma²) draws. It uses every
// core (GOMAXPROCS) and allocates nothing after the first call on r.
//
// The work is cut into fixed chunks of 16,384 values; chunk c draws from a
// ChaCha8 stream keyed by a fresh 256-bit key taken from r for this call,
// with c mixed into the key. The output therefore depends only on r's state,
// not on the number of cores or on scheduling: a seeded run is reproducible.
//
// Privacy: the vector is for internal use and must never be released. It
// serves the Gaussian mechanism on a histogram, as in DPAM (seed 001,
// Algorithm 2): a solver adds the noise to P_n (replace-one neighbours, n
// public, ℓ2 sensitivity √2/n) and releases only a post-processing of the
// noisy vector, such as the argmax over workload vertices of ⟨q, P_n − D + ξ⟩.
// The caller charges GaussianCost(√2/n, sigma) per vector (ρ = 1/(nσ)²).
//
// The draws are floating point (a 256-layer ziggurat with 52-bit uniform
// abscissas), not exact Gaussians. Mironov (CCS 2012) showed that released
// floating-point Laplace values can leak their input through the pattern of
// representable outputs; the same concern applies to any float sampler. It
// is mitigated, not removed, here: the noisy vector never leaves the solver,
// and what leaves (an argmax) changes only when the float artefacts, of order
// 2^-52 relative to the noise, reverse a comparison between scores. No formal
// bound on that effect is claimed. When a proof-grade guarantee is needed,
// use the discrete alternative: add DiscreteGaussian noise to the integer
// counts n·P_n (exact; same ρ = Δ²/(2σ²) with Δ = √2 counts), at the price
// of a much slower sampler (see docs/BENCHMARKS.md).
func GaussianVector(r *Rand, sigma float64, out []float64) {
	if !(sigma >= 0) || math.IsInf(sigma, 0) {
		panic(fmt.Sprintf("privacy: GaussianVector with sigma = %v", sigma))
	}
	if len(out) == 0 {
		return
	}
	if r.vec == nil {
		r.vec = new(vecState)
	}
	j := &r.vec.job
	j.key = r.key()
	j.sigma = sigma
	j.out = out
	j.next.Store(0)
	chunks := (len(out) + vecChunk - 1) / vecChunk
	want := min(runtime.GOMAXPROCS(0)-1, chunks-1, maxHelpers)
	if want > 0 {
		ch := ensureHelpers(want)
		for range want {
			j.wg.Add(1)
			select {
			case ch <- j:
			default:
				j.wg.Done() // no idle helper: the caller does the chunk itself
			}
		}
	}
	j.work(&r.vec.src)
	j.wg.Wait()
	j.out = nil
}

// vecChunk is the number of values drawn from one derived stream.
const vecChunk = 1 << 14

// maxHelpers bounds the helper goroutines of GaussianVector.
const maxHelpers = 63

type vecState struct {
	job vecJob
	src rand.ChaCha8 // the calling goroutine's chunk stream
}

type vecJob struct {
	key   [32]byte
	sigma float64
	out   []float64
	next  atomic.Int64
	wg    sync.WaitGroup
}

// work fills chunks until none is left.
func (j *vecJob) work(src *rand.ChaCha8) {
	n := len(j.out)
	for {
		c := j.next.Add(1) - 1
		lo := int(c) * vecChunk
		if lo >= n {
			return
		}
		hi := min(lo+vecChunk, n)
		k := j.key
		binary.LittleEndian.PutUint64(k[:8], binary.LittleEndian.Uint64(k[:8])^uint64(c))
		src.Seed(k)
		fillNormal(src, j.sigma, j.out[lo:hi])
	}
}

// helpers is a pool of goroutines that wait for GaussianVector jobs. They
// live for the life of the process, idle when there is no work, like the
// runtime's own workers; a pool avoids a goroutine start (an allocation)
// per call.
var helpers struct {
	mu sync.Mutex
	n  atomic.Int32
	ch chan *vecJob
}

// ensureHelpers starts helpers until at least want exist and returns the
// channel they listen on.
func ensureHelpers(want int) chan *vecJob {
	if int(helpers.n.Load()) >= want {
		return helpers.ch
	}
	helpers.mu.Lock()
	defer helpers.mu.Unlock()
	if helpers.ch == nil {
		helpers.ch = make(chan *vecJob)
	}
	for int(helpers.n.Load()) < want {
		go helper(helpers.ch)
		helpers.n.Add(1)
	}
	return helpers.ch
}

func helper(ch chan *vecJob) {
	src := new(rand.ChaCha8)
	for j := range ch {
		j.work(src)
		j.wg.Done()
	}
}

// Ziggurat for the standard normal (Marsaglia and Tsang, J. Stat. Softw.
// 2000), 256 layers of area zigV, with float64 tables built at start-up and
// 52-bit abscissas. Go's rand.NormFloat64 uses the same method with 128
// layers, float32 tables and 32-bit abscissas, and its tail can return ±Inf
// when its uniform draw is 0; this version draws one 64-bit word per value
// on the fast path, keeps more resolution and never returns ±Inf.
const (
	zigN = 256
	zigR = 3.6541528853610088 // start of the tail
	zigV = 4.92867323399e-3   // area of each layer
	zigS = 0x1p-51            // scale of the 52-bit signed abscissa
	zigM = 0xff               // layer index mask (low 8 bits)
	zigH = 12                 // shift that keeps the high 52 bits
)

var (
	zigX [zigN + 1]float64 // layer right edges: x[0] = v/f(r), x[1] = r, …, x[256] = 0
	zigF [zigN + 1]float64 // f(x[i]) = exp(−x[i]²/2)
)

func init() {
	f := func(x float64) float64 { return math.Exp(-0.5 * x * x) }
	zigX[0] = zigV / f(zigR)
	zigX[1] = zigR
	for i := 2; i < zigN; i++ {
		zigX[i] = math.Sqrt(-2 * math.Log(zigV/zigX[i-1]+f(zigX[i-1])))
	}
	// With these published constants the top layer's area matches zigV to a
	// relative 1e-9, a density error far below what any test can see.
	zigX[zigN] = 0
	for i := range zigF {
		zigF[i] = f(zigX[i])
	}
}

// fillNormal writes sigma·N(0,1) draws into out.
func fillNormal(src *rand.ChaCha8, sigma float64, out []float64) {
	for i := range out {
		u := src.Uint64()
		l := u & zigM
		x := (float64(int64(u)>>zigH) + 0.5) * zigS * zigX[l]
		if math.Abs(x) < zigX[l+1] {
			out[i] = sigma * x
			continue
		}
		out[i] = sigma * normalSlow(src, x, l)
	}
}

// normal returns one N(0,1) draw.
func normal(src *rand.ChaCha8) float64 {
	u := src.Uint64()
	l := u & zigM
	x := (float64(int64(u)>>zigH) + 0.5) * zigS * zigX[l]
	if math.Abs(x) < zigX[l+1] {
		return x
	}
	return normalSlow(src, x, l)
}

// normalSlow finishes a draw whose first candidate x in layer l fell outside
// the layer's inner rectangle: the wedge test, the tail, or a fresh start.
func normalSlow(src *rand.ChaCha8, x float64, l uint64) float64 {
	for {
		if l == 0 {
			return normalTail(src, x < 0)
		}
		y := zigF[l] + float64(src.Uint64()>>11)*0x1p-53*(zigF[l+1]-zigF[l])
		if y < math.Exp(-0.5*x*x) {
			return x
		}
		u := src.Uint64()
		l = u & zigM
		x = (float64(int64(u)>>zigH) + 0.5) * zigS * zigX[l]
		if math.Abs(x) < zigX[l+1] {
			return x
		}
	}
}

// normalTail draws from the normal tail beyond zigR (Marsaglia 1964).
//
// privacy:float-ok: internal Gaussian noise, never released (GaussianVector).
func normalTail(src *rand.ChaCha8, neg bool) float64 {
	for {
		a := -math.Log(float64(src.Uint64()>>11+1)*0x1p-53) / zigR
		b := -math.Log(float64(src.Uint64()>>11+1) * 0x1p-53)
		if b+b > a*a {
			if neg {
				return -zigR - a
			}
			return zigR + a
		}
	}
}
