package solvers

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/dpsynth/synth/internal/par"
)

// TestLSFitSUREBest: with SURE stopping, the fit returns the distribution
// of the step with the smallest risk estimate bit for bit — kept without a
// copy while later trials and steps reuse the other buffers — also when
// that step is neither the first nor the last.
func TestLSFitSUREBest(t *testing.T) {
	for _, eps := range []float64{0.05, 0.3, 3} {
		p, _, f := newSmallFit(t, eps, 11)
		f.start(nil)
		path := [][]float64{slices.Clone(f.d)} // the distribution after each step
		f.trace = func(_ int, _ float64, d []float64) { path = append(path, slices.Clone(d)) }
		f.useSURE(p.Rand.NormFloat64, 0.01, 5)
		if err := f.run(context.Background(), 300, 1e-12); err != nil {
			t.Fatal(err)
		}
		best := f.sure.bestIt
		t.Logf("ε = %g: %d steps, best %d", eps, len(path)-1, best)
		if !slices.Equal(f.d, path[best]) {
			t.Errorf("ε = %g: the fit's output is not the distribution of its best step %d", eps, best)
		}
		// A second run continues from there with the buffers still apart.
		if err := f.run(context.Background(), 3, 1e-12); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f.d, path[f.sure.bestIt]) {
			t.Errorf("ε = %g: after a second run, the output is not the best step's", eps)
		}
	}
}

// TestLSFitMomentum: with momentum the fit reaches the loss of a long
// plain fit in fewer steps than the plain path takes (the small fixture at
// three budgets; the plain path is the same fit with the cap at 0), and
// the path's loss never rises.
func TestLSFitMomentum(t *testing.T) {
	for _, eps := range []float64{0.05, 0.3, 3} {
		_, _, plain := newSmallFit(t, eps, 13)
		plain.momCap = 0
		plain.start(nil)
		if err := plain.run(context.Background(), 20000, 1e-12); err != nil {
			t.Fatal(err)
		}
		target := plain.loss + 1e-3*math.Abs(plain.loss)
		steps := func(cap float64) int {
			_, _, f := newSmallFit(t, eps, 13)
			f.momCap = cap
			f.start(nil)
			for it := 1; it <= 20000; it++ {
				prev := f.loss
				if !f.stepOnce() {
					return -1
				}
				if f.loss > prev {
					t.Errorf("ε = %g, cap %g: step %d raised the loss from %g to %g", eps, cap, it, prev, f.loss)
				}
				if f.loss <= target {
					return it
				}
			}
			return -1
		}
		p, m := steps(0), steps(momentumCap)
		t.Logf("ε = %g: loss %g reached in %d plain steps, %d with momentum", eps, target, p, m)
		if m < 0 || (p >= 0 && m >= p) {
			t.Errorf("ε = %g: loss %g reached in %d steps with momentum, %d without; want fewer with", eps, target, m, p)
		}
	}
}

// TestLSFitOnePass: a fit whose trials run in one pass over the universe
// (the operator's AdjointMapAnswer) takes the steps, SURE's stop and, to
// rounding, the distribution of the same fit run in three passes (Adjoint,
// the step, Answer), from the one-way start at three budgets. Only the
// association of the normalising sum differs (per tile against per chunk).
func TestLSFitOnePass(t *testing.T) {
	for _, eps := range []float64{0.05, 0.3, 3} {
		fits := [2]*lsFit{}
		for i := range fits {
			p, ms := small(t).measured(t, eps, 17)
			team := par.NewTeam(0)
			t.Cleanup(team.Close)
			op := ms.op
			if i == 1 {
				op = plainOperator{op}
			}
			f := newLSFit(op, ms.y, ms.w, team)
			f.startFrom(newOneWayStart(p.Workload.Domain(), ms.marginals, ms.nHat).theta)
			f.useSURE(p.Rand.NormFloat64, 0.01, 25)
			if err := f.run(context.Background(), 2000, 1e-12); err != nil {
				t.Fatal(err)
			}
			fits[i] = f
		}
		one, three := fits[0], fits[1]
		if one.fused == nil || one.dir != nil || three.fused != nil {
			t.Fatalf("ε = %g: the fits do not run one pass and three passes", eps)
		}
		if one.iters != three.iters || one.evals != three.evals || one.sure.bestIt != three.sure.bestIt {
			t.Errorf("ε = %g: one pass took %d steps (%d trials, stop %d), three passes %d (%d, %d)", eps,
				one.iters, one.evals, one.sure.bestIt, three.iters, three.evals, three.sure.bestIt)
		}
		for i, v := range one.d {
			if w := three.d[i]; math.Abs(v-w) > 1e-12*w+1e-300 {
				t.Fatalf("ε = %g: D[%d] = %v in one pass, %v in three", eps, i, v, w)
			}
		}
		t.Logf("ε = %g: %d steps, stop at %d", eps, one.iters, one.sure.bestIt)
	}
}

// TestPathDF: the degrees of freedom SURE reads are the running maximum of
// the probe's readings, never below 0, so that a reading far too low (the
// probe's shadow oscillating where the steps overshoot) cannot make a
// minimum of the risk estimate.
func TestPathDF(t *testing.T) {
	// The loss falls steadily; the probe reads the degrees of freedom
	// rising, then oscillating from step 6 on, once far too low (step 8).
	loss := []float64{300, 200, 140, 110, 96, 90, 87, 85, 84, 83}
	div := []float64{-1, 10, 25, 34, 39, 42, 47, 41, 5, 49}
	wantDF := []float64{0, 10, 25, 34, 39, 42, 47, 47, 47, 49}
	const m = 100
	var d pathDF
	best, bestIt := math.Inf(1), -1
	for i := range loss {
		df := d.add(div[i])
		if df != wantDF[i] {
			t.Errorf("step %d: pathDF.add(%g) = %g, want %g", i, div[i], df, wantDF[i])
		}
		if r := loss[i] - m + 2*df; r < best {
			best, bestIt = r, i
		}
	}
	// Risk: 200, 120, 90, 78, 74, 74, 81, 79, 78, 81 — the smallest at step
	// 4; the raw reading at step 8 would have made it 84 − 100 + 10 = −6.
	if bestIt != 4 {
		t.Errorf("smallest risk at step %d, want 4", bestIt)
	}
}

// newSmallFit is a fit of the small fixture's measurements at ε and seed
// (not started), on a team closed with the test.
func newSmallFit(t *testing.T, eps float64, seed uint64) (*Problem, *measured, *lsFit) {
	t.Helper()
	p, ms := small(t).measured(t, eps, seed)
	team := par.NewTeam(0)
	t.Cleanup(team.Close)
	return p, ms, newLSFit(ms.op, ms.y, ms.w, team)
}

// TestSUREProbes: SURE runs sureProbes shadow fits, each on its own probe
// and started from its own perturbed measurements, and its divergence is
// the mean of their readings: the risk it records at each step is the
// loss − M + 2·(running maximum of that mean), recomputed here from the
// shadows themselves.
func TestSUREProbes(t *testing.T) {
	p, ms, f := newSmallFit(t, 0.3, 5)
	start := newOneWayStart(p.Workload.Domain(), ms.marginals, ms.nHat)
	f.startFrom(start.theta)
	f.useSURE(p.Rand.NormFloat64, 0.01, 5)
	su := f.sure
	if len(su.shadows) != sureProbes || len(su.probes) != sureProbes {
		t.Fatalf("%d shadows and %d probes, want %d of each", len(su.shadows), len(su.probes), sureProbes)
	}
	if slices.Equal(su.probes[0], su.probes[1]) {
		t.Errorf("the probes are equal")
	}
	want := make([]float64, len(f.theta))
	for k, sh := range su.shadows {
		start.theta(sh.y, f.w, want)
		if !slices.Equal(sh.theta, want) {
			t.Errorf("shadow %d does not start from its own measurements' start", k)
		}
	}
	var df pathDF
	for step := 0; step < 20; step++ {
		if step > 0 && !f.stepOnce() {
			t.Fatalf("step %d not taken", step)
		}
		div := 0.0
		for k, sh := range su.shadows {
			for j, b := range su.probes[k] {
				if b != 0 {
					div += b * (sh.ans[j] - f.ans[j]) / (su.delta * su.sigma[j])
				}
			}
		}
		want := f.loss - float64(su.m) + 2*df.add(div/float64(sureProbes))
		if got := su.history[step]; math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("step %d: recorded risk %g, want %g", step, got, want)
		}
	}
}

// TestLSFitArmijoOnMeasurements: the fit reads the Armijo test's
// first-order term on the measurements, ⟨r, A·D − A·D2⟩, from the answers
// it keeps; it is Σ g·(D − D2) over the universe (g = Aᵀr), here computed
// from the normalised distributions, to rounding.
func TestLSFitArmijoOnMeasurements(t *testing.T) {
	_, _, f := newSmallFit(t, 0.3, 3)
	f.start(nil)
	grad := make([]float64, len(f.theta))
	for step := range 8 {
		if !f.stepOnce() {
			t.Fatalf("step %d not taken", step)
		}
		d := f.distribution()
		f.op.Adjoint(f.res, grad)
		s := 2 * f.step
		logZ, z := f.st.Apply(f.th2, f.theta, grad, s, f.logZ, f.d2)
		f.evaluate(f.d2, z, f.ans2, f.res2)
		onM, norm := 0.0, 0.0
		for j, r := range f.res {
			onM += r * (f.ans[j] - f.ans2[j])
		}
		onK := 0.0
		for i, g := range grad {
			onK += g * (d[i] - z*f.d2[i])
			norm += math.Abs(g) * (d[i] + z*f.d2[i])
		}
		if math.Abs(onM-onK) > 1e-12*norm {
			t.Errorf("step %d: ⟨r, A·D − A·D2⟩ = %g, Σ g·(D − D2) = %g", step, onM, onK)
		}
		if math.IsNaN(logZ) {
			t.Fatalf("step %d: logZ is NaN", step)
		}
	}
}

// TestLSFitVanishedStep: when no trial step passes the Armijo test, the
// fit stops and still returns SURE's best distribution, normalised.
func TestLSFitVanishedStep(t *testing.T) {
	p, _, f := newSmallFit(t, 0.3, 7)
	f.start(nil)
	path := [][]float64{slices.Clone(f.d)} // the distribution after each step
	f.useSURE(p.Rand.NormFloat64, 0.01, 1000)
	for step := range 30 {
		if !f.stepOnce() {
			t.Fatalf("step %d not taken", step)
		}
		path = append(path, f.distribution())
	}
	f.loss = math.Inf(-1) // no trial can pass the Armijo test from here
	if err := f.run(context.Background(), 10, 0); err != nil {
		t.Fatal(err)
	}
	if f.sure.it != 30 {
		t.Fatalf("the fit took %d steps, want 30", f.sure.it)
	}
	if !slices.Equal(f.d, path[f.sure.bestIt]) {
		t.Errorf("after a vanished step the output is not SURE's best step %d", f.sure.bestIt)
	}
	if sum := floats.Sum(f.d); math.Abs(sum-1) > 1e-12 {
		t.Errorf("the output sums to %v, want 1", sum)
	}
}

// TestSUREStable: a shadow's reading ‖e‖/‖b‖ flags the fit unstable once
// it passes 2 + its reading at the start, the bound of stable steps, and
// the growth is that reading's factor over the one before.
func TestSUREStable(t *testing.T) {
	tests := []struct {
		name     string
		readings []float64 // one shadow's readings, the first at the start
		want     int       // the reading that flags the fit (-1: none)
		growth   float64
	}{
		{"rising, stable", []float64{0.08, 0.08, 0.1, 0.18, 0.9, 1.9}, -1, 0},
		{"at the bound", []float64{0.1, 1.5, 2.1}, -1, 0},
		{"past the bound", []float64{0.1, 0.38, 3.96, 57}, 2, 3.96 / 0.38},
		{"started high", []float64{1.5, 1.4, 3.4, 3.6}, 3, 3.6 / 3.4},
	}
	for _, tt := range tests {
		s := &sureState{ratio: make([]float64, 1), ratio0: make([]float64, 1)}
		got := -1
		for i, r := range tt.readings {
			s.it = i
			s.stable(0, r)
			if s.unstable && got < 0 {
				got = i
			}
		}
		if got != tt.want || (got >= 0 && math.Abs(s.growth-tt.growth) > 1e-12) {
			t.Errorf("%s: stable(%v) flags reading %d with growth %g, want %d with %g", tt.name, tt.readings, got, s.growth, tt.want, tt.growth)
		}
	}
}

// TestLSFitRestart: a restart after unstable shadows is the fit begun
// afresh with the capped step: the restarted fit's output, SURE's path and
// best step are those of a new fit with the same probes and that cap, bit
// for bit (no buffer of the first path survives into the second).
func TestLSFitRestart(t *testing.T) {
	p, ms, f := newSmallFit(t, 0.3, 9)
	start := newOneWayStart(p.Workload.Domain(), ms.marginals, ms.nHat)
	var draws []float64
	norm := func() float64 { v := p.Rand.NormFloat64(); draws = append(draws, v); return v }
	f.startFrom(start.theta)
	f.useSURE(norm, 0.01, 5)
	flagged := false
	f.trace = func(it int, _ float64, _ []float64) {
		if it == 10 && !flagged { // as if step 10's reading broke the bound
			flagged = true
			f.sure.unstable, f.sure.growth = true, 3
		}
	}
	if err := f.run(context.Background(), 300, 1e-12); err != nil {
		t.Fatal(err)
	}
	if f.restarts != 1 || !(f.maxStep > 0) {
		t.Fatalf("restarts %d, step cap %g; want 1 restart and a cap", f.restarts, f.maxStep)
	}

	g := newLSFit(ms.op, ms.y, ms.w, f.team)
	i := 0
	replay := func() float64 { i++; return draws[i-1] }
	g.startFrom(start.theta)
	g.maxStep = f.maxStep
	g.step = min(g.step0, g.maxStep)
	g.useSURE(replay, 0.01, 5)
	if err := g.run(context.Background(), 300, 1e-12); err != nil {
		t.Fatal(err)
	}
	if f.sure.bestIt != g.sure.bestIt || !slices.Equal(f.sure.history, g.sure.history) {
		t.Errorf("restarted: best step %d of %d; a new fit with the cap: %d of %d, or SURE's paths differ",
			f.sure.bestIt, len(f.sure.history), g.sure.bestIt, len(g.sure.history))
	}
	if !slices.Equal(f.d, g.d) {
		t.Errorf("the restarted fit's output is not the new fit's")
	}
}

// TestSUREPatienceAlongPath: SURE's patience is counted along the path,
// each step with momentum β as 1/(1 − β) plain steps (replayed here from
// the steps' momentum counters): the fit stops at the first step whose
// path since SURE's best passes the patience, which with momentum is fewer
// steps after the best than the patience itself.
func TestSUREPatienceAlongPath(t *testing.T) {
	const patience = 10
	for _, eps := range []float64{0.05, 0.3, 3} {
		p, ms, f := newSmallFit(t, eps, 17)
		f.startFrom(newOneWayStart(p.Workload.Domain(), ms.marginals, ms.nHat).theta)
		path := []float64{0} // the replayed path after each step
		f.trace = func(int, float64, []float64) {
			beta := 0.0
			if k := f.k - 1; k > 1 { // f.k counts the step just taken
				beta = min(float64(k-1)/float64(k+2), momentumCap)
			}
			path = append(path, path[len(path)-1]+1/(1-beta))
		}
		f.useSURE(p.Rand.NormFloat64, 0.01, patience)
		if err := f.run(context.Background(), 5000, 0); err != nil {
			t.Fatal(err)
		}
		if f.restarts > 0 {
			t.Fatalf("ε = %g: the fit restarted; the replay assumes one path", eps)
		}
		last, best := len(path)-1, f.sure.bestIt
		t.Logf("ε = %g: best at step %d, stopped at %d, path %.1f since the best", eps, best, last, path[last]-path[best])
		if got := f.sure.path; math.Abs(got-path[last]) > 1e-9 {
			t.Errorf("ε = %g: SURE's path %g, replayed %g", eps, got, path[last])
		}
		if path[last]-path[best] <= patience || path[last-1]-path[best] > patience {
			t.Errorf("ε = %g: stopped at step %d with a path of %g since the best (step %d); want the first step past %d",
				eps, last, path[last]-path[best], best, patience)
		}
		if last-best > patience {
			t.Errorf("ε = %g: %d steps after the best, want fewer than the patience's %d with momentum", eps, last-best, patience+1)
		}
	}
}
