package solvers

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
)

// The steps of the adaptive rounds (fadaptive.go): the budget they spend,
// the annealing rule, and the rounds run step by step on a fixture.

// TestRoundsSpend: over the rounds, spend charges exactly the σ and ε0 it
// is given (as annealing leaves them) until the last call, which spends
// what is left; the total never exceeds the rounds' ρ.
func TestRoundsSpend(t *testing.T) {
	// A round's σ and ε0 for ρ split over n rounds, share to the selection.
	split := func(rho, share, sens float64, n int) (sigma, eps float64) {
		per := rho / float64(n)
		return privacy.CalibrateGaussian((1-share)*per, 1, sens), privacy.CalibrateExponential(share*per, 1)
	}
	type tc struct {
		name             string
		rho, share, sens float64
		sigma, eps       float64
		anneal           map[int]bool // anneal after these calls (0-based)
		calls            int          // calls up to the last one
	}
	var cases []tc
	for _, c := range []struct {
		name             string
		rho, share, sens float64
		n                int
		anneal           map[int]bool
		calls            int
	}{
		// The calibrations charge a little under ρ/n: n calls, the last
		// one on what is left.
		{"20 rounds", 1e-2, 0.1, 1, 20, nil, 20},
		{"replace-one sensitivity", 4e-4, 0.15, math.Sqrt2, 12, nil, 12},
		{"rounds not a divisor", 3e-3, 0.1, 1, 7, nil, 7},
		// Annealing quadruples a round's cost: 4 calls of ρ/40, then 8 of
		// 4ρ/40, and the last on the 4ρ/40 left.
		{"anneal halves σ", 1e-2, 0.1, 1, 40, map[int]bool{3: true}, 13},
		// 1 of ρ/100, 5 of 4ρ/100, 3 of 16ρ/100, the last on 31ρ/100.
		{"anneal twice", 1e-2, 0.1, 1, 100, map[int]bool{0: true, 5: true}, 10},
		// Annealed past what is left: the next call is the last.
		{"anneal past the budget", 1e-3, 0.1, 1, 4, map[int]bool{0: true}, 2},
		// One round's cost is over half the budget: the first call is the last.
		{"first call is last", 1e-2, 0.1, 1, 1, nil, 1},
	} {
		sigma, eps := split(c.rho, c.share, c.sens, c.n)
		cases = append(cases, tc{c.name, c.rho, c.share, c.sens, sigma, eps, c.anneal, c.calls})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &rounds{s: &Project{}, rho: c.rho, sigma: c.sigma, eps: c.eps, share: c.share, sens: c.sens}
			sigma, eps := c.sigma, c.eps // what the next call should charge, unless last
			for call := 0; ; call++ {
				if call > 1000 {
					t.Fatalf("spend() never returned last = true; used %v of %v", r.used, r.rho)
				}
				before := r.used
				left := r.rho - r.used
				last, err := r.spend()
				if err != nil {
					t.Fatalf("call %d: spend() = %v", call, err)
				}
				if r.used > r.rho {
					t.Fatalf("call %d: spend() charged %v in all, want <= %v", call, r.used, r.rho)
				}
				if !last {
					if r.sigma != sigma || r.eps != eps {
						t.Errorf("call %d: spend() = σ %v ε0 %v, want σ %v ε0 %v", call, r.sigma, r.eps, sigma, eps)
					}
					want := privacy.GaussianCost(c.sens, sigma).Rho + privacy.ExponentialMechanismCost(eps).Rho
					if got := r.used - before; math.Abs(got-want) > 1e-12*want {
						t.Errorf("call %d: spend() charged %v, want %v", call, got, want)
					}
					if c.anneal[call] {
						r.anneal(0, 1, 2, false) // the batch did not move the model
						sigma, eps = sigma/2, eps*2
					}
					continue
				}
				// The last call spends what was left, split by share: the
				// calibrations leave 10⁻⁹ to 2·10⁻⁹ of it (privacy.calSlack,
				// calTol), under 10⁻⁹ of ρ unless the last call found more
				// than half of ρ left.
				if n := call + 1; n != c.calls {
					t.Errorf("spend() = last after %d calls, want %d", n, c.calls)
				}
				unspent := r.rho - r.used
				if unspent < 0 || unspent > 2e-9*left || (left <= r.rho/2 && unspent > 1e-9*r.rho) {
					t.Errorf("spend() = last with ρ %v of %v unspent (%v left before), want at most 2e-9 of what was left", unspent, r.rho, left)
				}
				if g := privacy.GaussianCost(c.sens, r.sigma).Rho; g > (1-c.share)*left || g < (1-c.share)*left*(1-1e-8) {
					t.Errorf("spend() = last with the measurement's ρ %v, want (1−share)·left = %v", g, (1-c.share)*left)
				}
				break
			}
		})
	}
}

// TestRoundsAnneal: σ halves and ε0 doubles exactly when the batch moved
// the model by at most allow·annealFactor; one such step is undone (σ
// doubles, ε0 halves) exactly when the batch moved the model by more than
// allowUp and a step is left to undo; with no step to undo, σ widens by √2
// (ε0 / √2) exactly when the batch moved the model by more than 2√2·allow
// and the rounds run are at least twice the rounds left, and the batch
// grows to keep the fits left; nothing changes after the final round.
func TestRoundsAnneal(t *testing.T) {
	const (
		kept    = 0
		halved  = 1
		doubled = -1
		widened = 2
	)
	w := 100 * 2 * math.Sqrt2 // 2√2 allowances of 100
	for _, c := range []struct {
		name         string
		factor       float64 // experiment.anneal (0: 1)
		annealed     int     // steps not undone before the batch
		moved, allow float64
		final        bool
		run          int     // rounds run before the test
		left         float64 // rounds the budget left affords
		want         int
		batch        int // the batch after the test (from 1)
	}{
		{"moved less", 0, 0, 90, 100, false, 0, 0, halved, 1},
		{"moved the allowance", 0, 0, 100, 100, false, 0, 0, halved, 1},
		{"moved more", 0, 0, 100.0001, 100, false, 0, 0, kept, 1},
		{"nothing moved, nothing allowed", 0, 0, 0, 0, false, 0, 0, halved, 1},
		{"final round", 0, 0, 1, 100, true, 0, 0, kept, 1},
		{"final round, nothing moved", 0, 0, 0, 0, true, 0, 0, kept, 1},
		{"factor 0.5, moved 0.6 of allow", 0.5, 0, 60, 100, false, 0, 0, kept, 1},
		{"factor 0.5, moved half of allow", 0.5, 0, 50, 100, false, 0, 0, halved, 1},
		{"factor 2, moved 1.5 of allow", 2, 0, 150, 100, false, 0, 0, halved, 1},
		{"factor 2, moved 2.5 of allow", 2, 0, 250, 100, false, 0, 0, kept, 1},
		{"no step to undo, moved past allowUp", 0, 0, 250, 100, false, 0, 0, kept, 1},
		{"a step to undo, moved past allowUp", 0, 1, 200.0001, 100, false, 0, 0, doubled, 1},
		{"a step to undo, moved allowUp", 0, 1, 200, 100, false, 0, 0, kept, 1},
		{"two steps, moved within allow", 0, 2, 80, 100, false, 0, 0, halved, 1},
		{"a step to undo, final round", 0, 1, 500, 100, true, 0, 0, kept, 1},
		{"moved past 2√2 allowances, run twice the rounds left", 0, 0, w + 1e-9, 100, false, 20, 10, widened, 1},
		{"moved 2√2 allowances", 0, 0, w, 100, false, 20, 10, kept, 1},
		{"run less than twice the rounds left", 0, 0, 1000, 100, false, 19, 10, kept, 1},
		{"a step to undo comes first", 0, 1, 1000, 100, false, 20, 10, doubled, 1},
		{"widened on the final round", 0, 0, 1000, 100, true, 20, 10, kept, 1},
		{"widened past maxFits rounds", 0, 0, 1000, 100, false, 100, 50, widened, 4}, // ⌈(100 + 100)/64⌉
	} {
		t.Run(c.name, func(t *testing.T) {
			setVariant(t, &experiment{anneal: c.factor})
			const sigma, eps = 123.456789, 0.0123456789
			r := &rounds{s: &Project{}, sigma: sigma, eps: eps, annealed: c.annealed, sens: 1, round: c.run, batch: 1}
			r.rho = c.left * r.roundCost()
			allowUp := 2 * c.allow // cellAllowance is linear in σ where the mass is large
			r.anneal(c.moved, c.allow, allowUp, c.final)
			wantS, wantE, wantN, wantW := sigma, eps, c.annealed, 0
			switch c.want {
			case halved:
				wantS, wantE, wantN = sigma/2, eps*2, c.annealed+1
			case doubled:
				wantS, wantE, wantN = sigma*2, eps/2, c.annealed-1
			case widened:
				wantS, wantE, wantW = sigma*math.Sqrt2, eps/math.Sqrt2, 1
			}
			if r.sigma != wantS || r.eps != wantE || r.annealed != wantN || r.widened != wantW || r.batch != c.batch {
				t.Errorf("anneal(%v, %v, %v, %v) with %d steps, %d rounds run, %v left = σ %v ε0 %v, %d steps, %d widened, batch %d, want σ %v ε0 %v, %d steps, %d widened, batch %d",
					c.moved, c.allow, allowUp, c.final, c.annealed, c.run, c.left, r.sigma, r.eps, r.annealed, r.widened, r.batch, wantS, wantE, wantN, wantW, c.batch)
			}
		})
	}
}

// TestRoundsCoarseScoreSigma checks that a batch's selections score the
// coarse pairs with the σ of the batch's first measurement, as the
// candidates and the bounds: the batch's last spend may recalibrate r.sigma
// (to spend what is left), and a coarse pair scored with a smaller σ than
// its bound's could exceed the bound, which the lazy selection refuses
// with a panic.
func TestRoundsCoarseScoreSigma(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	_, _, fit, r := startRounds(t, fx, &Project{}, AddRemove, 0.5)
	if len(r.coarse) == 0 {
		t.Fatal("no coarse pairs: the test needs the middle regime's")
	}
	if _, err := r.score(context.Background(), fit); err != nil {
		t.Fatal(err)
	}
	L := len(r.fp.cands)
	idx := make([]int, len(r.coarse))
	for q := range r.coarse {
		idx[q] = L + q
	}
	r.evaluate(fit.cur, idx)
	want := slices.Clone(r.scoresAll[L:])
	r.sigma /= 3 // as the batch's last spend may
	r.evaluate(fit.cur, idx)
	if r.evalErr != nil {
		t.Fatal(r.evalErr)
	}
	for q, i := range idx {
		if got := r.scoresAll[i]; got != want[q] || got > r.upper[i] {
			t.Errorf("coarse pair %d after σ changed in the batch: score %v, want %v (bound %v)", q, got, want[q], r.upper[i])
		}
	}
}

// TestRoundsSteps runs the adaptive rounds step by step, as solveFactored
// does, and checks each step's effect on the rounds' state: the batch's
// size, the measured and covered sets, the tree, the trace, the annealing
// decision, and the budget spent at the end.
func TestRoundsSteps(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	for _, c := range []struct {
		name   string
		s      *Project
		v      *experiment // the rules' variant (nil: the rules)
		nb     Neighbours
		eps    float64
		batch  int
		minFit int
	}{
		{"one per fit", &Project{}, nil, ReplaceOne, 1, 1, 2},
		{"add-remove, middle regime", &Project{}, nil, AddRemove, 0.5, 1, 2},
		{"batches of 4", &Project{Rounds: 200}, nil, AddRemove, 1, 4, 2},
		{"annealing factor 3", &Project{}, &experiment{anneal: 3}, AddRemove, 1, 1, 2},
		{"widening", &Project{Rounds: 100}, &experiment{widenMoves: 1, widenRun: 0.25}, AddRemove, 0.5, 2, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			setVariant(t, c.v)
			ctx := context.Background()
			p, plan, fit, r := startRounds(t, fx, c.s, c.nb, c.eps)
			fp, nHat := plan.factored, r.nHat
			if !fp.adaptive || fp.batch != c.batch {
				t.Fatalf("plan: adaptive %v batch %d, want adaptive, batch %d", fp.adaptive, fp.batch, c.batch)
			}
			if d := fx.dom.Len(); len(r.measured) != d || len(fit.meas) != d {
				t.Fatalf("measureOneWays: %d sets measured, %d fitted, want %d", len(r.measured), len(fit.meas), d)
			}
			var err error
			res, start := &Result{Plan: plan}, time.Now()
			for final := false; !final; r.fits++ {
				if r.fits > 1000 {
					t.Fatal("the rounds never end")
				}
				nMeasured, nTrace, round, size := len(r.measured), len(res.Trace), r.round, r.batch
				if final, err = r.score(ctx, fit); err != nil {
					t.Fatal(err)
				}
				batch, tree, last, err := r.selectBatch(p, fit, final)
				if err != nil {
					t.Fatal(err)
				}
				final = last
				if len(batch) == 0 || len(batch) > size || (!final && len(batch) != size) {
					t.Fatalf("fit %d: selectBatch() = %d selections (final %v), want %d", r.fits, len(batch), final, size)
				}
				if got := len(r.measured) - nMeasured; got != len(batch) {
					t.Errorf("fit %d: selectBatch() measured %d sets, want %d", r.fits, got, len(batch))
				}
				for _, b := range batch {
					done := r.covered
					if b.coarse != nil {
						done = r.coarseDone
					}
					if !done[b.index] {
						t.Errorf("fit %d: selectBatch() left candidate %v unmarked", r.fits, fp.cands[b.index])
					}
					if r.gtree.Covering(b.meas.set) < 0 {
						t.Errorf("fit %d: selectBatch() = a tree without %v (measured as %v)", r.fits, fp.cands[b.index], b.meas.set)
					}
					if r.dtree.Covering(fp.cands[b.index]) < 0 {
						t.Errorf("fit %d: selectBatch() left the domain's tree without %v", r.fits, fp.cands[b.index])
					}
				}
				if tree != r.fitTree() {
					t.Errorf("fit %d: selectBatch() = a tree of %v cells, want the smaller of %v (grouped) and %v (domain)", r.fits, tree.TotalCells(), r.gtree.TotalCells(), r.dtree.TotalCells())
				}
				if err := r.fitBatch(ctx, fit, tree, batch, final); err != nil {
					t.Fatal(err)
				}
				if fit.tree != tree {
					t.Errorf("fit %d: fitBatch() left the fit on another tree", r.fits)
				}
				// The annealing test on the fitted model.
				moved, allow, allowUp := 0.0, 0.0, 0.0
				for _, b := range batch {
					mv, al, up, err := b.moved(fit.cur, fp.cands[b.index], nHat)
					if err != nil {
						t.Fatal(err)
					}
					if up < al {
						t.Errorf("fit %d: moved() = allowance %v at 2σ, %v at σ, want it larger at 2σ", r.fits, up, al)
					}
					moved, allow, allowUp = moved+mv, allow+al, allowUp+up
				}
				// settle reads the batch's move on a settled fit where the
				// fitted move is within the allowance, and leaves the model
				// as the round's fit left it.
				if !final && moved > annealFactor()*allow && r.settled != moved {
					t.Errorf("fit %d: settle() = move %v, want the fitted move %v (beyond the allowance %v)", r.fits, r.settled, moved, allow)
				}
				if !final {
					moved = r.settled
				}
				sigma, eps, annealed := r.sigma, r.eps, r.annealed
				w, k := widenTest()
				widen := moved > w*allow && float64(round+len(batch)) >= k*r.roundsLeft()
				if err := r.afterFit(p, res, fit, batch, final, start); err != nil {
					t.Fatal(err)
				}
				if r.round != round+len(batch) || len(res.Trace) != nTrace+len(batch) {
					t.Errorf("fit %d: afterFit() = round %d, %d trace steps, want %d and %d", r.fits, r.round, len(res.Trace), round+len(batch), nTrace+len(batch))
				}
				wantS, wantE := sigma, eps
				if !final && moved <= annealFactor()*allow {
					wantS, wantE = sigma/2, eps*2
				} else if !final && annealed > 0 && moved > allowUp {
					wantS, wantE = sigma*2, eps/2
				} else if !final && annealed == 0 && widen {
					wantS, wantE = sigma*math.Sqrt2, eps/math.Sqrt2
					if r.batch < size {
						t.Errorf("fit %d: afterFit() widened and cut the batch from %d to %d", r.fits, size, r.batch)
					}
				}
				if r.sigma != wantS || r.eps != wantE {
					t.Errorf("fit %d: afterFit() with moved %v allow %v = σ %v ε0 %v, want σ %v ε0 %v", r.fits, moved, allow, r.sigma, r.eps, wantS, wantE)
				}
			}
			if r.fits < c.minFit {
				t.Errorf("%d fits, want at least %d", r.fits, c.minFit)
			}
			if c.v != nil && c.v.widenMoves > 0 && r.widened == 0 {
				t.Errorf("the rounds never widened σ, want a widening step under %+v", *c.v)
			}
			if unspent := r.rho - r.used; unspent < 0 || unspent > 2e-9*r.rho {
				t.Errorf("the rounds left ρ %v of %v unspent, want none and never more than spent", unspent, r.rho)
			}
		})
	}
}

// TestRoundsChooseLazy runs the adaptive rounds on a fixture and, on every
// model, checks the lazy selection (rounds.choose) against the exponential
// mechanism on every score computed (selectFeasible) from the same draws:
// the bounds hold, and both choose the same candidate, with every candidate
// accepted and with a cap test that rejects a third of them.
func TestRoundsChooseLazy(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	for _, c := range []struct {
		name string
		s    *Project
		nb   Neighbours
		eps  float64
		rows int // the scores' sample's rows (0: the default)
	}{
		{"one per fit", &Project{}, ReplaceOne, 1, 0},
		{"add-remove, middle regime", &Project{}, AddRemove, 0.5, 0},
		{"batches of 4", &Project{Rounds: 200}, AddRemove, 1, 0},
		{"batches of 4, middle regime", &Project{Rounds: 200}, AddRemove, 0.5, 0},
		{"small ε", &Project{}, AddRemove, 0.05, 0},
		{"scores on a sample", &Project{}, AddRemove, 1, 512},
		{"scores on a sample, middle regime", &Project{}, AddRemove, 0.5, 512},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			p, plan, fit, r := startRounds(t, fx, c.s, c.nb, c.eps)
			if c.rows > 0 {
				r.sampled.rows = c.rows
			}
			sampledFits := 0
			var err error
			res, start := &Result{Plan: plan}, time.Now()
			for final := false; !final; r.fits++ {
				if final, err = r.score(ctx, fit); err != nil {
					t.Fatal(err)
				}
				checkChoose(t, r, p, fit.cur, uint64(r.fits))
				if r.sampledOn() {
					sampledFits++
				}
				batch, tree, last, err := r.selectBatch(p, fit, final)
				if err != nil {
					t.Fatal(err)
				}
				final = last
				for _, b := range batch {
					// The annealing test reads the exact marginal.
					want := make([]float64, len(b.before))
					if err := fit.cur.Marginal(r.fp.cands[b.index], want); err != nil {
						t.Fatal(err)
					}
					for k := range want {
						if math.Abs(b.before[k]-want[k]) > 1e-12 {
							t.Fatalf("fit %d: selection %v kept %v in cell %d, the model's marginal %v", r.fits, r.fp.cands[b.index], b.before[k], k, want[k])
						}
					}
				}
				if tree != r.fitTree() {
					t.Errorf("fit %d: selectBatch() = a tree of %v cells, want the smaller of %v (grouped) and %v (domain)", r.fits, tree.TotalCells(), r.gtree.TotalCells(), r.dtree.TotalCells())
				}
				if err := r.fitBatch(ctx, fit, tree, batch, final); err != nil {
					t.Fatal(err)
				}
				if err := r.afterFit(p, res, fit, batch, final, start); err != nil {
					t.Fatal(err)
				}
			}
			if c.rows > 0 && sampledFits == 0 {
				t.Errorf("no fit scored on a sample of %d rows", c.rows)
			}
		})
	}
}

// checkChoose compares rounds.choose with selectFeasible on every score,
// from generators seeded alike, on the candidates and coarse pairs in the
// running; it leaves the scores computed (choose only reuses them).
func checkChoose(t *testing.T, r *rounds, p *Problem, m *model.Model, seed uint64) {
	t.Helper()
	L := len(r.fp.cands)
	var idx []int
	for i := range L {
		if r.active[i] != nil && !r.covered[i] {
			idx = append(idx, i)
		}
	}
	for q, k := range r.coarse {
		if r.active[k.base] != nil && !r.covered[k.base] && !r.coarseDone[k.base] {
			idx = append(idx, L+q)
		}
	}
	if len(idx) == 0 {
		return
	}
	for _, fits := range []func(int) bool{func(int) bool { return true }, func(i int) bool { return i%3 != 0 }} {
		lazy, eager := *p, *p
		lazy.Rand, eager.Rand = privacy.NewSeeded(seed), privacy.NewSeeded(seed)
		got := r.choose(&lazy, m, idx, fits)
		r.evaluate(m, idx)
		if r.evalErr != nil {
			t.Fatal(r.evalErr)
		}
		for _, i := range idx {
			if s := r.scoresAll[i]; math.IsInf(s, -1) || s > r.upper[i] {
				t.Fatalf("fit %d: candidate %d scores %v, bound %v", r.fits, i, s, r.upper[i])
			}
		}
		want := selectFeasible(&eager, r.scoresAll, idx, make([]float64, 0, len(idx)), r.eps, r.fp.scoreSens, fits)
		if got != want {
			t.Errorf("fit %d: choose() = %d, want %d (the exponential mechanism on every score)", r.fits, got, want)
		}
	}
}

// startRounds plans s's release of fx at eps under nb (seed 5, a 64 KiB
// cap), measures the one-way tables and sets up the rounds, as
// solveFactored does before its loop; the fit and the rounds' team close
// with the test.
func startRounds(t *testing.T, fx *fixture, s *Project, nb Neighbours, eps float64) (*Problem, *Plan, *factoredFit, *rounds) {
	t.Helper()
	ctx := context.Background()
	p, _ := factoredProblem(t, fx, eps, 5, 64<<10)
	p.Neighbours = nb
	plan, err := s.Plan(&p.Shape)
	if err != nil {
		t.Fatal(err)
	}
	fit := newFactoredFit(&model.Settings{})
	t.Cleanup(fit.close)
	tabs, err := p.Data.Marginals(ctx, plan.factored.cands)
	if err != nil {
		t.Fatal(err)
	}
	nHat, measured, err := s.measureOneWays(ctx, p, plan, fit, tabs)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.newRounds(p, plan, fit, tabs, nHat, measured)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.team.Close)
	return p, plan, fit, r
}

// TestCellAllowance checks cellAllowance(m, σ) against E|max(m+z, 0) − m|,
// z ~ N(0, σ²), integrated numerically (midpoint rule over ±12σ in 200,000
// steps: error far below the 1e-9 relative tolerance), and its two limits.
func TestCellAllowance(t *testing.T) {
	expect := func(m, sigma float64) float64 {
		const steps = 200000
		lo, hi := -12*sigma, 12*sigma
		h := (hi - lo) / steps
		s := 0.0
		for i := range steps {
			z := lo + (float64(i)+0.5)*h
			s += math.Abs(max(m+z, 0)-m) * math.Exp(-z*z/(2*sigma*sigma))
		}
		return s * h / (sigma * math.Sqrt(2*math.Pi))
	}
	for _, c := range []struct{ m, sigma float64 }{
		{0, 1}, {0, 37}, {0.3, 1}, {1, 1}, {2.5, 1}, {40, 10}, {1e4, 5}, {-3, 2},
	} {
		got, want := cellAllowance(c.m, c.sigma), expect(max(c.m, 0), c.sigma)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("cellAllowance(%v, %v) = %.12g, want %.12g", c.m, c.sigma, got, want)
		}
	}
	if got, want := cellAllowance(0, 2), 2/math.Sqrt(2*math.Pi); math.Abs(got-want) > 1e-15 {
		t.Errorf("cellAllowance(0, 2) = %v, want σ/√(2π) = %v", got, want)
	}
	if got, want := cellAllowance(1e9, 2), 2*math.Sqrt(2/math.Pi); math.Abs(got-want) > 1e-12 {
		t.Errorf("cellAllowance(1e9, 2) = %v, want √(2/π)·σ = %v", got, want)
	}
}

// TestRoundsParams checks that a release's plan states how the moves set
// the rounds' σ: the annealing steps kept, the widenings and the last batch
// size, with the rules and with a variant that widens.
func TestRoundsParams(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	for _, c := range []struct {
		name  string
		v     *experiment
		widen bool
	}{
		{"the rules", nil, false},
		{"widening", &experiment{widenMoves: 1, widenRun: 0.25}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			setVariant(t, c.v)
			p, _ := factoredProblem(t, fx, 0.5, 5, 64<<10)
			p.Neighbours = AddRemove
			res, err := (&Project{Rounds: 100}).Solve(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			pp := res.Plan.Params
			for _, k := range []string{"annealing_steps", "widenings", "batch_last"} {
				if _, ok := pp[k]; !ok {
					t.Errorf("Params[%q] missing", k)
				}
			}
			if got := pp["widenings"] > 0; got != c.widen {
				t.Errorf("Params[widenings] = %v, want > 0: %v", pp["widenings"], c.widen)
			}
			if pp["batch_last"] < pp["batch"] {
				t.Errorf("Params[batch_last] = %v, want at least Params[batch] = %v", pp["batch_last"], pp["batch"])
			}
		})
	}
}
