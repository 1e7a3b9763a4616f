package solvers

import (
	"context"
	"errors"
	"fmt"

	"github.com/dpsynth/synth/model"
)

// NoisyMarginal is a noisy count table of an attribute set, measured
// elsewhere (for example the noisy prefix sums of a continual release):
// Counts in the set's mixed radix, with independent noise of standard
// deviation Sigma (counts) on every cell.
type NoisyMarginal struct {
	Set    []int
	Counts []float64
	Sigma  float64
}

// Fitted is a factored model fitted to noisy marginals.
type Fitted struct {
	// Model is the fitted distribution; the caller owns it and must Close
	// it.
	Model   *model.Model
	Cliques [][]int
	// N is the number of records estimated from the tables' totals
	// (inverse-variance weighted).
	N float64
	// Sets are the measured sets the model was fitted to (all of them
	// unless the model's memory cap left some out).
	Sets  [][]int
	Steps int
}

// fitNoisyMaxModelBytes is FitNoisy's default cap: the measurements are
// given, so the cap only decides which of them one tree can hold (the
// release's rounds choose theirs under DefaultMaxModelBytes).
const fitNoisyMaxModelBytes = 128 << 20

// FitNoisy fits a log-linear model on a junction tree to noisy marginals by
// the factored project solver's least-squares fit (entropic mirror descent,
// each table weighted by 1/σ²), within maxModelBytes (0: 128 MiB;
// sets that would break the cap are left out, the most dependent first
// kept), in at most iters steps (0: 300). The default is a speed choice
// measured on adult-reduced only (the same errors as 2,000 steps, 6× faster);
// other tables may want more steps, which the project solver's fit, with
// its 2,000 and its tolerance, would give.
//
// Privacy: post-processing of the noisy tables; it reads no data.
func FitNoisy(ctx context.Context, sizes []int, ms []NoisyMarginal, maxModelBytes uint64, iters int) (*Fitted, error) {
	if len(ms) == 0 {
		return nil, errors.New("solvers: FitNoisy: no measurements")
	}
	if maxModelBytes == 0 {
		maxModelBytes = fitNoisyMaxModelBytes
	}
	if iters <= 0 {
		iters = 300
	}
	sums, vars := make([]float64, len(ms)), make([]float64, len(ms))
	for i, m := range ms {
		if !(m.Sigma > 0) {
			return nil, fmt.Errorf("solvers: FitNoisy: measurement %d: σ = %v, want > 0", i, m.Sigma)
		}
		cells := 1
		for _, a := range m.Set {
			cells *= sizes[a]
		}
		if len(m.Counts) != cells {
			return nil, fmt.Errorf("solvers: FitNoisy: measurement %d of set %v: %d counts, want %d", i, m.Set, len(m.Counts), cells)
		}
		for _, v := range m.Counts {
			sums[i] += v
		}
		vars[i] = float64(cells) * m.Sigma * m.Sigma
	}
	nHat := estimateN(sums, vars)
	fm := make([]fmeas, len(ms))
	for i, m := range ms {
		fm[i] = toMeas(m.Set, m.Counts, m.Sigma, nHat)
	}
	tree, fm, err := chooseMeasured(sizes, fm, maxModelBytes)
	if err != nil {
		return nil, err
	}
	fit := newFactoredFit(&model.Settings{})
	defer fit.close()
	fit.add(tree, fm...)
	if err := fit.run(ctx, iters, 1e-7); err != nil {
		return nil, err
	}
	out := &Fitted{Model: fit.cur, Cliques: tree.Cliques(), N: nHat, Steps: fit.iters}
	for _, m := range fm {
		out.Sets = append(out.Sets, m.set)
	}
	fit.cur = nil // kept by the result
	fit.try.Close()
	fit.try = nil
	return out, nil
}
