package solvers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// TestSupportIndex: the single-query sums and scalings agree with the
// operator's Answer and AddQuery, for marginal cells (of every shape of
// fixed and free attributes) and for ranges, prefixes and predicates.
func TestSupportIndex(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(`{"a": 3, "b": 2, "c": 4, "d": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	spec := `{"families": [
		{"type": "kway", "k": 1},
		{"type": "kway", "k": 2},
		{"type": "kway", "k": 3},
		{"type": "marginals", "sets": [["a", "b", "c", "d"]]},
		{"type": "range", "attribute": "c", "lo": "1", "hi": "2"},
		{"type": "prefixes", "attribute": "a"},
		{"type": "predicate", "where": [{"attribute": "b", "in": ["1"]}, {"attribute": "d", "lo": "0", "hi": "1"}], "weight": 0.5}
	]}`
	wl, err := query.Parse([]byte(spec), dom)
	if err != nil {
		t.Fatal(err)
	}
	op, err := wl.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	k, m := op.K(), op.M()
	x := make([]float64, k)
	for i := range x {
		x[i] = float64((i*7919)%97) + 0.25
	}
	want := make([]float64, m)
	op.Answer(x, want)
	sup := newSupportIndex(wl, op)
	for j := range m {
		_, w := op.Range(j)
		if got := w * sup.sum(j, x); math.Abs(got-want[j]) > 1e-9*math.Abs(want[j]) {
			t.Errorf("query %d (%s): weight·sum = %v, Answer = %v", j, wl.Label(j), got, want[j])
		}
		// scale(j, f) = x + (f−1)·1_S·x: compare through AddQuery.
		y := append([]float64(nil), x...)
		sup.scale(j, 3, y)
		ind := make([]float64, k)
		op.AddQuery(j, 1/w, ind)
		for i := range y {
			if wantY := x[i] * (1 + 2*ind[i]); math.Abs(y[i]-wantY) > 1e-12*wantY {
				t.Fatalf("query %d: scale by 3 gives y[%d] = %v, want %v", j, i, y[i], wantY)
			}
		}
	}
}

// TestMWEMPaperPureBudget: the paper setting runs under a pure budget
// (δ = 0) and charges only pure costs summing to at most ε; the tuned one
// refuses it.
func TestMWEMPaperPureBudget(t *testing.T) {
	fx := small(t)
	p := fx.problem(t, 1, 0, 5)
	res, err := (&MWEM{Setting: Paper}).Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	eps := 0.0
	for _, c := range p.Ledger.Charges() {
		if c.Kind != privacy.Pure {
			t.Errorf("charge %q is %v, want pure", c.Label, c.Kind)
		}
		eps += c.Eps
	}
	if eps > 1 || eps < 1-1e-6 {
		t.Errorf("pure ε charged = %v, want 1 (within 1e-6, never above)", eps)
	}
	if err := checkDistribution(res.D); err != nil {
		t.Error(err)
	}
	if _, err := (&MWEM{}).Plan(&p.Shape); !errors.Is(err, ErrUnsupported) {
		t.Errorf("tuned plan under a pure budget: err = %v, want ErrUnsupported", err)
	}
}

// TestMWEMPlan: per-round parameters meet the charged totals, and the
// bounds follow the noise scales.
func TestMWEMPlan(t *testing.T) {
	fx := small(t)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	rho, _ := b.Rho(privacy.Tight)
	n := 48842
	s := &MWEM{}
	plan, err := s.Plan(&Shape{Neighbours: ReplaceOne, Budget: b, N: n, Workload: fx.wl})
	if err != nil {
		t.Fatal(err)
	}
	T := plan.Iterations
	if want := mwemT(n, rho); T != want || T < 100 || T > 200 {
		t.Errorf("T = %d, want the rule's %d (in [100, 200] at ε = 1 on n = %d)", T, want, n)
	}
	eps0, sigma := plan.Params["eps0"], plan.Params["noise_counts"]
	sel := float64(T) * eps0 * eps0 / 8
	meas := float64(T) / (2 * sigma * sigma)
	if sel > plan.Charges[0].Rho || sel < plan.Charges[0].Rho*(1-1e-6) {
		t.Errorf("T·ε0²/8 = %v, charged %v", sel, plan.Charges[0].Rho)
	}
	if meas > plan.Charges[1].Rho || meas < plan.Charges[1].Rho*(1-1e-6) {
		t.Errorf("T/(2σ²) = %v, charged %v", meas, plan.Charges[1].Rho)
	}
	if got := plan.Total(); got > rho || math.Abs(got/rho-mwemSelectShare-(1-mwemSelectShare)) > 1e-6 {
		t.Errorf("total ρ = %v, budget's %v", got, rho)
	}
	p := fx.problem(t, 1, 1e-9, 2)
	res, err := s.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bounds) != 2 {
		t.Fatalf("bounds %+v, want measurement and selection bounds", res.Bounds)
	}
	want := sigma * math.Sqrt(2*math.Log(2*float64(T)/0.05)) / float64(n)
	if b := res.Bounds[0]; math.Abs(b.Value-want) > 1e-12 || b.Confidence != 0.95 {
		t.Errorf("measurement bound %+v, want value %v at 0.95", b, want)
	}
}

// TestMWEMRepeatsAverage: more rounds than queries: repeated selections are
// measured again and averaged, and the run stays a valid distribution.
func TestMWEMRepeatsAverage(t *testing.T) {
	fx := tinyFixture(t, []int{2, 3}, tinyRecords, 1)
	p := fx.problem(t, 4, 1e-6, 9)
	s := &MWEM{T: 40}
	res, err := s.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for _, st := range res.Trace {
		seen[st.Selected]++
	}
	if len(seen) > p.Op.M() || len(res.Trace) != 40 {
		t.Fatalf("%d rounds over %d distinct queries (m = %d)", len(res.Trace), len(seen), p.Op.M())
	}
	if err := checkDistribution(res.D); err != nil {
		t.Error(err)
	}
	// Without noise the fit reproduces the 1-way marginals closely.
	p = fx.problem(t, 4, 1e-6, 9)
	p.noPrivacy = true
	res, err = s.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if mx, _ := fx.maxError(t, p.Op, res.D); mx > 1e-3 {
		t.Errorf("exact MWEM on a 6-cell universe: max error %v, want < 1e-3", mx)
	}
}

// TestMWEMExtremeSettings: no NaN or Inf reaches the output for extreme
// step sizes, many passes or a tiny budget.
func TestMWEMExtremeSettings(t *testing.T) {
	fx := small(t)
	for _, tc := range []struct {
		s   MWEM
		eps float64
	}{
		{MWEM{T: 20, Step: 1000, Passes: 3}, 1},
		{MWEM{T: 20, Step: 1e-9}, 1},
		{MWEM{T: 50, Passes: 200}, 1e-3},
		{MWEM{Setting: Paper, T: 20, Step: 1000}, 1e-3},
	} {
		s := tc.s
		p := fx.problem(t, tc.eps, 1e-9, 4)
		res, err := s.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("%+v: %v", tc.s, err)
		}
		if err := checkDistribution(res.D); err != nil {
			t.Errorf("%+v at ε = %g: %v", tc.s, tc.eps, err)
		}
	}
}

// Empirical neighbour test of MWEM's selections.
//
// Two cases, each on a fixed pair of neighbouring datasets (replace-one,
// n = 10) with the 1-way marginal cells of a tiny universe as workload:
//
//   - one round on a single attribute of 4 values (m = 4): D has counts
//     (6, 3, 1, 0), D' moves one record from value 0 to value 1. The score
//     of query 1 rises by Δ = 1/n while that of query 0, which carries most
//     of the selection mass, falls by Δ: close to the exponential
//     mechanism's worst case. The claim is the selection's own ε0 (pure).
//   - three rounds on the same data (64 sequences): the claim is the whole
//     run's ε (pure, paper setting): the sequence of selections is a
//     post-processing of the run's transcript.
//
// We run the mechanism `runs` times on each dataset with independent seeds
// and, for every outcome o and both directions, bound the privacy loss from
// below by ln(p_lo(o)/p'_hi(o)), with p_lo and p'_hi one-sided Chernoff (KL)
// confidence bounds. The test fails when a lower bound exceeds the claim.
// Each of the 4·|outcomes| bounds is wrong with probability at most
// 1e-6/(4·|outcomes|), so a correct implementation fails with probability
// at most 1e-6. The under-noised variants run the exponential mechanism
// with ε0 multiplied (the unexported hook) but claim the same cost; they
// must fail: 2× in the first case (the classic mistake of using Δ instead
// of 2Δ for non-monotone scores); in the second, whose claim (the run's ε)
// is far above what a fixed pair of datasets realises, 12×.
func TestMWEMNeighbourSelections(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical neighbour test skipped in -short mode")
	}
	one := [][][]int{{{0}, {0}, {0}, {0}, {0}, {0}, {1}, {1}, {1}, {2}}, {{0}, {0}, {0}, {0}, {0}, {1}, {1}, {1}, {1}, {2}}}
	for _, tc := range []struct {
		setting   Setting
		eps       float64
		T         int
		sizes     []int
		data      [][][]int
		claimEps0 bool // claim the selection's ε0 (else the run's ε)
		under     float64
		violate   bool
		runs      int
	}{
		{Paper, 2, 1, []int{4}, one, true, 0, false, 100000},
		{Paper, 2, 1, []int{4}, one, true, 2, true, 100000},
		{Tuned, 4, 1, []int{4}, one, true, 0, false, 100000},
		{Tuned, 4, 1, []int{4}, one, true, 2, true, 100000},
		{Paper, 2, 3, []int{4}, one, false, 0, false, 60000},
		{Paper, 2, 3, []int{4}, one, false, 12, true, 60000},
	} {
		name := fmt.Sprintf("%s/T=%d/under=%g", tc.setting, tc.T, tc.under)
		t.Run(name, func(t *testing.T) {
			s := &MWEM{Setting: tc.setting, T: tc.T, underNoise: tc.under, TraceEvery: -1}
			h0, run := selectionHistogram(t, s, tc.sizes, tc.data[0], tc.eps, tc.runs, 1)
			h1, _ := selectionHistogram(t, s, tc.sizes, tc.data[1], tc.eps, tc.runs, 1+uint64(tc.runs))
			claim := tc.eps
			if tc.claimEps0 {
				claim = run.eps0
			}
			outcomes := 1
			for range tc.T {
				outcomes *= run.m
			}
			loss, outcome := lossLowerBound(h0, h1, tc.runs, 1e-6/float64(4*outcomes), 1e-9)
			t.Logf("%s: lower confidence bound on the privacy loss %.3f (outcome %s), claimed %.3f", name, loss, outcome, claim)
			if tc.violate && loss <= claim {
				t.Errorf("under-noised variant not detected: loss bound %.3f <= claim %.3f", loss, claim)
			}
			if !tc.violate && loss > claim {
				t.Errorf("privacy loss bound %.3f exceeds the claim %.3f (outcome %s)", loss, claim, outcome)
			}
		})
	}
}

// selectionHistogram runs s on the records `runs` times (seeds from seed0)
// and counts the sequences of selected queries. The plan is derived once
// (it depends on the public shape only); each run is a fresh solver state
// with its own seeded source, exactly what Solve runs after charging.
func selectionHistogram(t *testing.T, s *MWEM, sizes []int, records [][]int, eps float64, runs int, seed0 uint64) (map[string]int, *mwemRun) {
	t.Helper()
	fx := tinyFixture(t, sizes, records, 1)
	op, err := fx.wl.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	b := privacy.Budget{Eps: eps, Delta: 1e-9}
	p := &Problem{Shape: Shape{Neighbours: ReplaceOne, Budget: b, N: len(records), Workload: fx.wl}, Op: op,
		Counts: fx.counts, Answers: fx.answers}
	run, err := s.derive(&p.Shape, false)
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]int{}
	var key strings.Builder
	for i := range runs {
		p.Rand = privacy.NewSeeded(seed0 + uint64(i))
		st, err := newMWEMState(run, p, -1, s.underNoise)
		if err != nil {
			t.Fatal(err)
		}
		key.Reset()
		for r := 1; r <= run.T; r++ {
			st.step(r)
			fmt.Fprintf(&key, "%d.", st.res.Trace[r-1].Selected)
		}
		h[key.String()]++
	}
	return h, run
}

// lossLowerBound returns the largest, over outcomes and both directions, of
// ln((p_lo − δ)/p'_hi), where p_lo and p'_hi are one-sided Chernoff
// confidence bounds at level alpha on the outcome's probabilities.
func lossLowerBound(h0, h1 map[string]int, runs int, alpha, delta float64) (float64, string) {
	best, where := math.Inf(-1), ""
	keys := map[string]bool{}
	for k := range h0 {
		keys[k] = true
	}
	for k := range h1 {
		keys[k] = true
	}
	for k := range keys {
		for dir := 0; dir < 2; dir++ {
			a, b := h0[k], h1[k]
			if dir == 1 {
				a, b = b, a
			}
			lo := chernoffBound(a, runs, alpha, false) - delta
			hi := chernoffBound(b, runs, alpha, true)
			if lo <= 0 {
				continue
			}
			if l := math.Log(lo / hi); l > best {
				best, where = l, k
			}
		}
	}
	return best, where
}

// chernoffBound returns a one-sided confidence bound on a binomial
// proportion from x successes in n trials: the p on the requested side of
// x/n with n·KL(x/n ‖ p) = ln(1/alpha) (P(bound wrong) <= alpha).
func chernoffBound(x, n int, alpha float64, upper bool) float64 {
	ph := float64(x) / float64(n)
	target := math.Log(1/alpha) / float64(n)
	kl := func(p float64) float64 {
		v := 0.0
		if ph > 0 {
			v += ph * math.Log(ph/p)
		}
		if ph < 1 {
			v += (1 - ph) * math.Log((1-ph)/(1-p))
		}
		return v
	}
	lo, hi := 0.0, ph
	if upper {
		lo, hi = ph, 1
	}
	for range 200 {
		mid := (lo + hi) / 2
		if (kl(mid) > target) == upper {
			hi = mid
		} else {
			lo = mid
		}
	}
	if upper {
		return hi
	}
	return lo
}
