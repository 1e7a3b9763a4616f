package solvers

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

// The seeds' solvers (MWEM, DPFW, SMD) on the factored model: the same
// selections and (DPFW, SMD) the same distribution as on the explicit model
// where both run, the conformance rules, and the cap filter.

// seedsFixture is five attributes of adult-reduced (1,400 cells) with its
// ten 2-way marginals (m = 331): small enough for the explicit model, with
// junction trees of several cliques.
func seedsFixture(t testing.TB) *fixture {
	return loadFixture(t, "adult-reduced", []string{"sex", "race", "age", "marital-status", "income>50K"}, 2)
}

// factoredOf turns an explicit problem into the same problem on the
// factored model (same seed, fresh ledger).
func factoredOf(t testing.TB, fx *fixture, eps, delta float64, seed uint64, capBytes uint64) *Problem {
	t.Helper()
	p := fx.problem(t, eps, delta, seed)
	p.Op = nil
	p.Model = Factored
	p.MaxModelBytes = capBytes
	p.Data = fx.counts
	return p
}

// modelAnswers answers the workload from a model.
func modelAnswers(t testing.TB, m *model.Model, wl *query.Workload) []float64 {
	t.Helper()
	out := make([]float64, wl.M())
	for _, s := range wl.Marginals() {
		if err := m.Marginal(s.Attrs, out[s.Offset:s.Offset+s.Cells]); err != nil {
			t.Fatal(err)
		}
		for c := range s.Cells {
			out[s.Offset+c] *= s.Weight
		}
	}
	return out
}

func selections(tr []Step) []int {
	s := make([]int, len(tr))
	for i, st := range tr {
		s[i] = st.Selected
	}
	return s
}

// TestFactoredSeedsMatchExplicit: DPFW and SMD make the same selections on
// both models and release the same distribution (SMD's average of iterates
// as a Mixture on the factored model; or the last iterate on both): every
// workload answer within 1e-9, without privacy and with
// privacy at the same seed (the selections' random draws are the same; the
// scores differ by rounding only, so a flip would need a near-tie within
// about 1e-15, which these seeds do not have).
func TestFactoredSeedsMatchExplicit(t *testing.T) {
	fx := seedsFixture(t)
	solvers := []struct {
		name string
		s    func() Solver
	}{
		{"dpfw", func() Solver { return &DPFW{T: 150} }},
		{"dpfw/average", func() Solver { return &DPFW{T: 60, Output: FWOutputAverage} }},
		{"dpfw/paper", func() Solver { return &DPFW{Setting: Paper, TMax: 80} }},
		{"smd", func() Solver { return &SMD{T: 150} }},
		{"smd/last", func() Solver { return &SMD{T: 150, Last: true} }},
		{"smd/paper", func() Solver { return &SMD{Setting: Paper, T: 80, Last: true} }},
	}
	for _, sv := range solvers {
		for _, priv := range []bool{false, true} {
			name := sv.name + "/no-privacy"
			if priv {
				name = sv.name + "/private"
			}
			t.Run(name, func(t *testing.T) {
				pe := fx.problem(t, 1, 1e-9, 5)
				pf := factoredOf(t, fx, 1, 1e-9, 5, 0)
				pe.noPrivacy, pf.noPrivacy = !priv, !priv
				re, err := sv.s().Solve(context.Background(), pe)
				if err != nil {
					t.Fatal(err)
				}
				rf, err := sv.s().Solve(context.Background(), pf)
				if err != nil {
					t.Fatal(err)
				}
				defer rf.Model.Close()
				if se, sf := selections(re.Trace), selections(rf.Trace); !reflect.DeepEqual(se, sf) {
					t.Fatalf("selections differ:\nexplicit %v\nfactored %v", se, sf)
				}
				ae := make([]float64, fx.wl.M())
				pe.Op.Answer(re.D, ae)
				af := modelAnswers(t, rf.Model, fx.wl)
				if rf.Mixture != nil {
					if err := rf.Mixture.Answers(af); err != nil {
						t.Fatal(err)
					}
				}
				worst := 0.0
				for j := range ae {
					worst = max(worst, math.Abs(ae[j]-af[j]))
				}
				if worst > 1e-9 {
					t.Errorf("max |explicit − factored| answer = %.3g, want ≤ 1e-9", worst)
				}
				for i := range re.Trace {
					if a, b := re.Trace[i].MaxError, rf.Trace[i].MaxError; math.Abs(a-b) > 1e-9 {
						t.Fatalf("iteration %d: max error %v explicit, %v factored", i, a, b)
					}
				}
			})
		}
	}
}

// TestFactoredMWEM: without privacy the factored fit converges (workload
// max error below 0.01 after 120 rounds) and its first rounds select what
// explicit MWEM selects: with exact measurements both fits converge to the
// same model (the maximum-entropy one that matches the measured cells), so
// with both fits run to convergence (200 sweeps / steps per round) the
// selections agree until two scores come within the fits' tolerances. With
// the default fits (10 sweeps, 25 steps) rounds 9 and 10 swap here.
func TestFactoredMWEM(t *testing.T) {
	fx := seedsFixture(t)
	pe := fx.problem(t, 1, 1e-9, 5)
	pf := factoredOf(t, fx, 1, 1e-9, 5, 0)
	pe.noPrivacy, pf.noPrivacy = true, true
	re, err := (&MWEM{T: 120, Passes: 200}).Solve(context.Background(), pe)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := (&MWEM{T: 120, FitSteps: 200}).Solve(context.Background(), pf)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Model.Close()
	const first = 10
	se, sf := selections(re.Trace), selections(rf.Trace)
	if !reflect.DeepEqual(se[:first], sf[:first]) {
		t.Errorf("first %d selections differ:\nexplicit %v\nfactored %v", first, se[:first], sf[:first])
	}
	same := 0
	for same < len(se) && se[same] == sf[same] {
		same++
	}
	t.Logf("the first %d of %d selections agree", same, len(se))
	af := modelAnswers(t, rf.Model, fx.wl)
	worst := 0.0
	for j, a := range fx.answers {
		worst = max(worst, math.Abs(a-af[j]))
	}
	ee, _ := fx.maxError(t, pe.Op, re.D)
	t.Logf("no privacy, 120 rounds: max error factored %.4g, explicit %.4g", worst, ee)
	if worst > 0.01 {
		t.Errorf("factored MWEM without privacy: max error %.4g, want ≤ 0.01", worst)
	}
	if got := rf.Trace[len(rf.Trace)-1].MaxError; math.Abs(got-worst) > 1e-9 {
		t.Errorf("trace's last max error %v, want %v", got, worst)
	}
}

// TestFactoredSeedsConformance: on the factored model each seed solver's
// plan is independent of N and within its budget, Solve charges exactly the
// plan, outputs a calibrated model whose marginals each sum to 1, is
// deterministic under a seed, and honours cancellation.
func TestFactoredSeedsConformance(t *testing.T) {
	fx := seedsFixture(t)
	for _, name := range []string{"mwem", "dpfw", "smd"} {
		t.Run(name, func(t *testing.T) {
			s, _ := New(name, Tuned)
			b := privacy.Budget{Eps: 1, Delta: 1e-9}
			p0, err := s.Plan(&Shape{Neighbours: ReplaceOne, Budget: b, Workload: fx.wl, Model: Factored})
			if err != nil {
				t.Fatal(err)
			}
			p1, err := s.Plan(&Shape{Neighbours: ReplaceOne, Budget: b, N: 48842, Workload: fx.wl, Model: Factored})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p0.Charges, p1.Charges) {
				t.Errorf("the plan's charges depend on N: %v vs %v", p0.Charges, p1.Charges)
			}
			led, _ := privacy.NewLedger(b, nil)
			if err := led.Check(p1.Charges...); err != nil {
				t.Errorf("plan exceeds its budget: %v", err)
			}
			p := factoredOf(t, fx, 1, 1e-9, 7, 0)
			plan, _ := s.Plan(&p.Shape)
			res, err := s.Solve(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Model.Close()
			if res.D != nil || res.Model == nil || len(res.Cliques) == 0 {
				t.Fatalf("result: D %d cells, model %v, %d cliques; want a model only", len(res.D), res.Model != nil, len(res.Cliques))
			}
			if got := p.Ledger.Charges(); !reflect.DeepEqual(got, plan.Charges) {
				t.Errorf("ledger charges %v, want the plan's %v", got, plan.Charges)
			}
			for _, mg := range fx.wl.Marginals() {
				out := make([]float64, mg.Cells)
				if err := res.Model.Marginal(mg.Attrs, out); err != nil {
					t.Fatal(err)
				}
				sum := 0.0
				for _, v := range out {
					if !(v >= 0) {
						t.Fatalf("marginal %v has cell %v", mg.Attrs, v)
					}
					sum += v
				}
				if math.Abs(sum-1) > 1e-9 {
					t.Errorf("marginal %v sums to %v, want 1", mg.Attrs, sum)
				}
			}
			res2, err := s.Solve(context.Background(), factoredOf(t, fx, 1, 1e-9, 7, 0))
			if err != nil {
				t.Fatal(err)
			}
			defer res2.Model.Close()
			if !reflect.DeepEqual(modelAnswers(t, res.Model, fx.wl), modelAnswers(t, res2.Model, fx.wl)) {
				t.Errorf("two seeded runs differ")
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := s.Solve(ctx, factoredOf(t, fx, 1, 1e-9, 7, 0)); !errors.Is(err, context.Canceled) {
				t.Errorf("Solve with a cancelled context: err = %v, want context.Canceled", err)
			}
		})
	}
}

// TestFactoredSeedsCap: with a cap that holds any one 2-way set but not
// all of them, every run finishes, its model stays under the cap, and some
// workload set is left uncovered (the filter bound).
func TestFactoredSeedsCap(t *testing.T) {
	fx := seedsFixture(t)
	sizes := fx.dom.Sizes()
	var one, all uint64
	var sets [][]int
	for _, mg := range fx.wl.Marginals() {
		tr, err := model.NewTree(sizes, [][]int{mg.Attrs})
		if err != nil {
			t.Fatal(err)
		}
		one = max(one, tr.Bytes())
		sets = append(sets, mg.Attrs)
	}
	tr, _ := model.NewTree(sizes, sets)
	all = tr.Bytes()
	capB := one + (all-one)/4
	for _, s := range []Solver{&MWEM{T: 60}, &DPFW{T: 100}, &SMD{T: 100}} {
		t.Run(s.Name(), func(t *testing.T) {
			p := factoredOf(t, fx, 1, 1e-9, 3, capB)
			res, err := s.Solve(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Model.Close()
			tr := res.Model.Tree()
			if tr.Bytes() > capB {
				t.Errorf("model of %d bytes over the cap of %d", tr.Bytes(), capB)
			}
			uncovered := 0
			for _, set := range sets {
				if tr.Covering(set) < 0 {
					uncovered++
				}
			}
			t.Logf("cap %d bytes (one set %d, all %d): model %d bytes, %d of %d sets uncovered", capB, one, all, tr.Bytes(), uncovered, len(sets))
			if uncovered == 0 {
				t.Errorf("every set covered under a cap below the whole workload's tree (%d > %d)", all, capB)
			}
		})
	}
}

// TestFactoredSeedsRefusals: non-marginal families and MWEM's averaged
// (paper) output are refused on the factored model before any charge.
func TestFactoredSeedsRefusals(t *testing.T) {
	wl := fwWorkload(t, `{"attributes": [{"name": "a", "type": "integer", "min": 0, "max": 9}, {"name": "b", "type": "integer", "min": 0, "max": 3}]}`,
		`{"families": [{"type": "prefixes", "attribute": "a"}]}`)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	for _, s := range []Solver{&MWEM{}, &DPFW{}, &SMD{}} {
		if _, err := s.Plan(&Shape{Neighbours: ReplaceOne, Budget: b, Workload: wl, Model: Factored}); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s on a range workload, factored: err = %v, want ErrUnsupported", s.Name(), err)
		}
	}
	fx := seedsFixture(t)
	if _, err := (&MWEM{Setting: Paper}).Plan(&Shape{Neighbours: ReplaceOne, Budget: b, Workload: fx.wl, Model: Factored}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("mwem (paper), factored: err = %v, want ErrUnsupported", err)
	}
}

// TestFactoredSMDMixture: the mixture's first component is the uniform
// distribution, its last is the Last run's model (rebuilt after going
// back), and its answers are the average of its components'.
func TestFactoredSMDMixture(t *testing.T) {
	fx := seedsFixture(t)
	res, err := (&SMD{T: 40}).Solve(context.Background(), factoredOf(t, fx, 1, 1e-9, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	last, err := (&SMD{T: 40, Last: true}).Solve(context.Background(), factoredOf(t, fx, 1, 1e-9, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer last.Model.Close()
	mx := res.Mixture
	if mx == nil || mx.Len() != 41 {
		t.Fatalf("mixture %v, want 41 components", mx)
	}
	want := modelAnswers(t, last.Model, fx.wl)
	avg := make([]float64, fx.wl.M())
	for i := range mx.Len() {
		a := modelAnswers(t, mx.Component(i), fx.wl)
		for j := range avg {
			avg[j] += a[j] / float64(mx.Len())
		}
	}
	u := modelAnswers(t, mx.Component(0), fx.wl)
	got := modelAnswers(t, mx.Component(mx.Len()-1), fx.wl)
	ans := make([]float64, fx.wl.M())
	if err := mx.Answers(ans); err != nil {
		t.Fatal(err)
	}
	margs := fx.wl.Marginals()
	for _, mg := range margs {
		for c := range mg.Cells {
			j := mg.Offset + c
			if w := mg.Weight / float64(mg.Cells); math.Abs(u[j]-w) > 1e-12 {
				t.Fatalf("component 0, query %d: %v, want uniform %v", j, u[j], w)
			}
			if math.Abs(got[j]-want[j]) > 1e-12 {
				t.Fatalf("last component, query %d: %v, want the Last run's %v", j, got[j], want[j])
			}
			if math.Abs(ans[j]-avg[j]) > 1e-12 {
				t.Fatalf("Answers, query %d: %v, want the components' average %v", j, ans[j], avg[j])
			}
		}
	}
}

// TestExpSelect: below emBlockedMin scores the seed solvers' selection is
// privacy.ExponentialMechanism draw for draw (so explicit and factored runs
// of the same seed agree); from there the blocked form, which picks the one
// dominant score.
func TestExpSelect(t *testing.T) {
	var e expSelect
	small := []float64{0.1, 0.4, 0.2, 0.35}
	r1, r2 := privacy.NewSeeded(3), privacy.NewSeeded(3)
	for range 50 {
		if a, b := e.draw(r1, small, 1, 0.01), privacy.ExponentialMechanism(r2, small, 1, 0.01); a != b {
			t.Fatalf("expSelect.draw = %d, ExponentialMechanism = %d on the same stream", a, b)
		}
	}
	large := make([]float64, emBlockedMin+5)
	large[emBlockedMin+3] = 1
	for range 3 {
		if got := e.draw(r1, large, 1, 1e-3); got != emBlockedMin+3 {
			t.Fatalf("blocked draw = %d, want the dominant score %d", got, emBlockedMin+3)
		}
	}
}
