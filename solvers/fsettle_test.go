package solvers

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestSettle runs the adaptive rounds twice from the same seed, with and
// without settling the annealing test's fit, and checks at each fit until
// the two annealing decisions part: settle leaves the model as the
// round's fit left it (every measured marginal within 1e-9 of the model
// without settling); its move is the fitted move where that is beyond the
// allowance; and it settles at least once on the fixture (the move it
// reads is larger than the fitted one), so that the test sees a
// difference.
func TestSettle(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	ctx := context.Background()
	type state struct {
		p   *Problem
		fit *factoredFit
		r   *rounds
		res *Result
	}
	start := func(v *experiment) state {
		setVariant(t, v)
		p, plan, fit, r := startRounds(t, fx, &Project{Rounds: 60}, AddRemove, 1)
		return state{p, fit, r, &Result{Plan: plan}}
	}
	// step runs one fit of the rounds under variant v; it reports whether
	// it was the final one, the batch's fitted move and allowance.
	step := func(st state, v *experiment) (final bool, moved, allow float64) {
		setVariant(t, v)
		var err error
		if final, err = st.r.score(ctx, st.fit); err != nil {
			t.Fatal(err)
		}
		batch, tree, last, err := st.r.selectBatch(st.p, st.fit, final)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.r.fitBatch(ctx, st.fit, tree, batch, last); err != nil {
			t.Fatal(err)
		}
		if moved, allow, err = st.r.batchMove(st.fit, batch); err != nil {
			t.Fatal(err)
		}
		if err := st.r.afterFit(st.p, st.res, st.fit, batch, last, time.Now()); err != nil {
			t.Fatal(err)
		}
		st.r.fits++
		return last, moved, allow
	}
	off := &experiment{settle: -1}
	a, b := start(off), start(nil)
	settled := 0
	for fits := 0; ; fits++ {
		if fits > 200 {
			t.Fatal("the rounds never end")
		}
		finalA, movedA, _ := step(a, off)
		finalB, movedB, allowB := step(b, nil)
		for j := range a.fit.mu {
			for i, x := range a.fit.mu[j] {
				if y := b.fit.mu[j][i]; math.Abs(x-y) > 1e-9*max(1, math.Abs(x)) {
					t.Fatalf("fit %d: measurement %d cell %d: settled rounds' model %v, want %v (as without settling)", fits, j, i, y, x)
				}
			}
		}
		if math.Abs(movedA-movedB) > 1e-6*movedA {
			t.Fatalf("fit %d: fitted move %v with settling, %v without", fits, movedB, movedA)
		}
		if finalA || finalB {
			break
		}
		switch {
		case movedB > allowB && b.r.settled != movedB:
			t.Errorf("fit %d: settle() = move %v, want the fitted move %v (beyond the allowance %v)", fits, b.r.settled, movedB, allowB)
		case b.r.settled > movedB*(1+1e-9):
			settled++
		}
		if a.r.sigma != b.r.sigma {
			break // the annealing decisions part here
		}
	}
	if settled == 0 {
		t.Error("settle() never read a larger move than the round's fit, want it to settle at least once on the fixture")
	}
}

// TestFitSnapshot checks that restore puts a factored fit back to its
// snapshot: potentials, step and step count exact, the model's marginals
// within 1e-12, after more steps moved them.
func TestFitSnapshot(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	_, _, fit, _ := startRounds(t, fx, &Project{}, AddRemove, 1)
	snap := fit.snapshot()
	mu := make([][]float64, len(fit.mu))
	for j := range mu {
		mu[j] = append([]float64(nil), fit.mu[j]...)
	}
	if err := fit.run(context.Background(), 50, 0); err != nil {
		t.Fatal(err)
	}
	if fit.iters == snap.iters {
		t.Fatal("the fit took no step: nothing to restore")
	}
	fit.restore(snap)
	if fit.step != snap.step || fit.iters != snap.iters {
		t.Errorf("restore() = step %v after %d steps, want %v after %d", fit.step, fit.iters, snap.step, snap.iters)
	}
	for j := range mu {
		for i, x := range mu[j] {
			if y := fit.mu[j][i]; math.Abs(x-y) > 1e-12 || fit.phi[j][i] != snap.phi[j][i] {
				t.Fatalf("restore(): measurement %d cell %d: marginal %v potential %v, want %v and %v", j, i, y, fit.phi[j][i], x, snap.phi[j][i])
			}
		}
	}
}
