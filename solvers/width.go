package solvers

import (
	"math"
	"sync"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

// widthSeed is the fixed, public seed of the Gaussian-width Monte Carlo. The
// estimate depends on the workload alone (never on data), so a public seed
// costs no privacy and makes plans reproducible.
const widthSeed = 0x5eed_001_77

// Width is a Monte Carlo estimate of the Gaussian width of the signed
// workload, w(Q ∪ −Q) = E max_j |⟨q_j, ξ⟩| with ξ ~ N(0, I_k) (seed 001,
// L229), and its standard error.
type Width struct {
	W, StdErr float64
	Samples   int
}

// GaussianWidth estimates w(Q ∪ −Q) of the workload from samples draws of ξ
// (one fused Answer pass each), with the fixed public seed widthSeed. It is
// a function of the public workload only. Its cost is samples × (k normal
// draws + one Answer): about a second for 256 samples at k = 336,000.
func GaussianWidth(op Operator, samples int) Width {
	if samples < 2 {
		samples = 2
	}
	r := privacy.NewSeeded(widthSeed)
	xi := make([]float64, op.K())
	u := make([]float64, op.M())
	var sum, sum2 float64
	for range samples {
		privacy.GaussianVector(r, 1, xi)
		op.Answer(xi, u)
		mx := 0.0
		for _, v := range u {
			mx = max(mx, math.Abs(v))
		}
		sum += mx
		sum2 += mx * mx
	}
	f := float64(samples)
	mean := sum / f
	vr := max(0, (sum2-f*mean*mean)/(f-1))
	return Width{W: mean, StdErr: math.Sqrt(vr / f), Samples: samples}
}

// widthCache keeps the last few width estimates by workload, so that Plan
// and Solve (and repeated plans of one release) estimate it once.
var widthCache struct {
	sync.Mutex
	entries []widthEntry
}

type widthEntry struct {
	wl      *query.Workload
	samples int
	w       Width
}

// cachedWidth returns the width of the workload, compiling an operator when
// op is nil.
func cachedWidth(wl *query.Workload, op Operator, samples int) (Width, error) {
	widthCache.Lock()
	for _, e := range widthCache.entries {
		if e.wl == wl && e.samples == samples {
			widthCache.Unlock()
			return e.w, nil
		}
	}
	widthCache.Unlock()
	if op == nil {
		c, err := wl.Compile(nil)
		if err != nil {
			return Width{}, err
		}
		defer c.Close()
		op = c
	}
	w := GaussianWidth(op, samples)
	widthCache.Lock()
	defer widthCache.Unlock()
	widthCache.entries = append(widthCache.entries, widthEntry{wl, samples, w})
	if len(widthCache.entries) > 4 {
		widthCache.entries = widthCache.entries[1:]
	}
	return w, nil
}
