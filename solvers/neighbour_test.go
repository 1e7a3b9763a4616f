package solvers

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/privacy"
)

// Empirical neighbour test for the selection-based solvers.
//
// A tiny universe (two binary attributes, k = 4) with its two 1-way
// marginals (m = 4, 8 signed vertices) and a fixed pair of neighbouring
// datasets (nbRecords: D' replaces one record of D by cell (1, 1), which
// moves every score by the full sensitivity, half of them up and half down:
// the non-monotone worst case of queries and their negations). Each solver
// runs with few iterations 2N times on each dataset (seeded, a fresh source
// per run), and the test estimates the distribution of what the mechanism
// releases, the sequence of selected vertices.
//
// Any event E over the released sequences (a union of outcomes) is
// post-processing, so a mechanism that is ε-DP has |ln P[E|D]/P[E|D']| <= ε
// for every E. The test uses the first N runs of each dataset to choose
// events, and the other N runs to test them (so the choice does not bias
// the test): the two events that look most extreme on the first half
// (outcomes sorted by their estimated ratio, the prefix with the largest
// lower confidence bound on the loss, in each direction), plus every single
// outcome seen at least nbMinCount times in the second half under both
// datasets. For each tested event it estimates L = ln(P̂[E|D]/P̂[E|D']) with
// standard error (delta method) se = √((1 − p)/(Np) + (1 − p')/(Np')) and
// checks |L| <= ε + z·se, where ε is the per-run (pure) ε the solver claims
// for its selections and z is the two-sided normal quantile for a
// false-failure rate of nbFalseFailure = 1e-6, Bonferroni-corrected over
// the events tested (each event has at least nbMinCount runs under both
// datasets, where the normal approximation of ln p̂ is good). An outcome
// seen at least nbOneSided·e^ε times under one dataset and never under the
// other also fails (probability below e^−nbOneSided ≈ 1e-13 for a correct
// mechanism).
//
// The same check must FAIL for a deliberately under-noised variant of each
// solver (its unexported noiseScale hook halves the noise scale, doubling
// the exponent of the selection): some event's loss must be significantly
// above ε (|L| − z·se > ε), so the test can fail. The configurations (α,
// steps, budgets) are chosen so that every step is close to the worst case
// and the extreme events are frequent enough to be estimated; privacy does
// not depend on them.
//
// The harness compares the sequence of selected vertices (Result.Trace's
// Selected). For a solver that also releases other values (MWEM's noisy
// measurements) the selections are a function of its release, so their
// loss is still bounded by the solver's ε: the test stays valid, if less
// powerful.
//
// Adding a solver (e.g. MWEM) takes one row of neighbourRows: a
// constructor with the under-noised switch, the budget and the claimed ε
// from its plan (and optionally other datasets). A solver whose Solve is
// slow on this universe (planning and ledger work per run) can implement
// neighbourReplayer for a fast path; otherwise the harness calls Solve
// with a fresh ledger per run and reads the selections from Result.Trace.

const (
	nbFalseFailure = 1e-6
	nbMinCount     = 200
	nbOneSided     = 30
)

// neighbourRuns is N, the number of runs per dataset, variant and half.
func neighbourRuns() int {
	if testing.Short() {
		return 40_000
	}
	return 60_000
}

type neighbourRow struct {
	name string
	// solver returns the solver to test, configured for this tiny problem
	// with few iterations; under = true returns the under-noised variant.
	solver func(under bool) Solver
	// budget is the budget the runs are planned with.
	budget privacy.Budget
	// claim is the per-run pure ε the solver claims for the selections it
	// releases, read from its plan for the tiny problem.
	claim func(plan *Plan) float64
	// records, if set, replaces nbRecords.
	records func() (d, d2 [][]int)
}

var neighbourRows = []neighbourRow{
	{
		name: "dpfw tuned",
		// A large α keeps D_1 close to D_0, so both steps are near the
		// worst case.
		solver: func(under bool) Solver { return &DPFW{T: 2, Alpha: 20, noiseScale: half(under)} },
		budget: privacy.Budget{Eps: 3, Delta: 1e-6},
		// T exponential mechanisms, ε0 each.
		claim: func(p *Plan) float64 { return p.Params["T"] * p.Params["eps0"] },
	},
	{
		name:   "dpfw paper",
		solver: func(under bool) Solver { return &DPFW{Setting: Paper, T: 2, Alpha: 20, noiseScale: half(under)} },
		budget: privacy.Budget{Eps: 60, Delta: 1e-6},
		// The tight recomputation: Laplace report-noisy-max at scale b with
		// non-monotone scores of sensitivity Δ is 2Δ/b-DP per step.
		claim: func(p *Plan) float64 { return p.Params["T"] * p.Params["eps_step_true"] },
	},
	{
		name: "smd tuned",
		// Two records, two batches of one, the differing record in the
		// first (see neighbourSMD.replay); a small τ_x keeps x^2 close to x^1.
		solver: func(under bool) Solver { return &neighbourSMD{SMD{T: 2, TauX: 0.01, noiseScale: half(under)}, true} },
		budget: privacy.Budget{Eps: 4, Delta: 1e-6},
		// T exponential-mechanism draws, ε' = 2τ_y·R/B each.
		claim:   func(p *Plan) float64 { return p.Params["T"] * p.Params["eps_draw"] },
		records: func() (d, d2 [][]int) { return [][]int{{0, 0}, {0, 0}}, [][]int{{1, 1}, {0, 0}} },
	},
	{
		name: "smd paper",
		solver: func(under bool) Solver {
			return &neighbourSMD{SMD{Setting: Paper, T: 2, TauX: 0.01, noiseScale: half(under)}, true}
		},
		budget: privacy.Budget{Eps: 15, Delta: 1e-6},
		// τ_y at the privacy cap: ε' = 2τ_y·R/B per draw.
		claim:   func(p *Plan) float64 { return p.Params["T"] * p.Params["eps_draw"] },
		records: func() (d, d2 [][]int) { return [][]int{{0, 0}, {0, 0}}, [][]int{{1, 1}, {0, 0}} },
	},
}

// neighbourSMD is SMD with the neighbour test's fast path.
type neighbourSMD struct {
	SMD
	fixedBatches bool
}

func half(under bool) float64 {
	if under {
		return 0.5
	}
	return 0
}

// nbRecords are the tiny datasets: D = {4 × (0, 0), (1, 1)} and D'
// replaces one (0, 0) by (1, 1). At the uniform D_0 the scores of the
// vertices moving down exceed those moving up by three sensitivities.
func nbRecords() (d, d2 [][]int) {
	d = [][]int{{0, 0}, {0, 0}, {0, 0}, {0, 0}, {1, 1}}
	d2 = [][]int{{0, 0}, {0, 0}, {0, 0}, {1, 1}, {1, 1}}
	return d, d2
}

// neighbourReplayer is an optional fast path: replay returns a function
// that runs the solver's private steps on p with the given source (as Solve
// would, after planning once) and returns the selected vertices.
type neighbourReplayer interface {
	replay(t testing.TB, p *Problem) func(r *privacy.Rand) []int
}

// outcomes runs the solver n times on p and counts the selection
// sequences.
func outcomes(t *testing.T, s Solver, p *Problem, seed0 uint64, n int) map[string]int {
	counts := map[string]int{}
	var run func(r *privacy.Rand) []int
	if rp, ok := s.(neighbourReplayer); ok {
		run = rp.replay(t, p)
	} else {
		run = func(r *privacy.Rand) []int {
			p.Rand = r
			led, _ := privacy.NewLedger(p.Budget, nil)
			p.Ledger = led
			res, err := s.Solve(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			sel := make([]int, len(res.Trace))
			for i, st := range res.Trace {
				sel[i] = st.Selected
			}
			return sel
		}
	}
	var b strings.Builder
	for i := range n {
		sel := run(privacy.NewSeeded(seed0 + uint64(i)))
		b.Reset()
		for _, v := range sel {
			fmt.Fprintf(&b, "%d,", v)
		}
		counts[b.String()]++
	}
	return counts
}

// event is a set of outcomes.
type event []string

func (e event) count(c map[string]int) int {
	s := 0
	for _, o := range e {
		s += c[o]
	}
	return s
}

// extremeEvents chooses, from the first-half counts, the event with the
// largest lower confidence bound on ln(P[E|D]/P[E|D']) and the one for the
// reverse ratio: prefixes of the outcomes sorted by their estimated ratio.
func extremeEvents(c1, c2 map[string]int, n int) []event {
	var keys []string
	for k := range c1 {
		keys = append(keys, k)
	}
	for k := range c2 {
		if _, ok := c1[k]; !ok {
			keys = append(keys, k)
		}
	}
	ratio := func(k string) float64 { return (float64(c1[k]) + 0.5) / (float64(c2[k]) + 0.5) }
	sort.Slice(keys, func(i, j int) bool {
		if ri, rj := ratio(keys[i]), ratio(keys[j]); ri != rj {
			return ri > rj
		}
		return keys[i] < keys[j]
	})
	best := func(keys []string, c1, c2 map[string]int) event {
		var e event
		bestLCB := math.Inf(-1)
		a, b := 0, 0
		for i, k := range keys {
			a += c1[k]
			b += c2[k]
			if a < nbMinCount || b < nbMinCount {
				continue
			}
			l, se := logRatio(a, b, n)
			if lcb := l - 2*se; lcb > bestLCB {
				bestLCB, e = lcb, event(keys[:i+1])
			}
		}
		return e
	}
	rev := make([]string, len(keys))
	for i, k := range keys {
		rev[len(keys)-1-i] = k
	}
	var out []event
	for _, e := range []event{best(keys, c1, c2), best(rev, c2, c1)} {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// logRatio returns ln(p1/p2) and its standard error for counts a, b out of
// n each.
func logRatio(a, b, n int) (l, se float64) {
	N := float64(n)
	p1, p2 := float64(a)/N, float64(b)/N
	return math.Log(p1 / p2), math.Sqrt((1-p1)/(N*p1) + (1-p2)/(N*p2))
}

// lossCheck tests the events on the second-half counts against eps. It
// returns the worst excess, max over events of |L| − z·se − eps (> 0 is a
// failure), a description of that event, and the number of events tested.
func lossCheck(events []event, c1, c2 map[string]int, n int, eps float64) (excess float64, worst string, tested int) {
	var tests []event
	for _, e := range events {
		if e.count(c1) >= nbMinCount && e.count(c2) >= nbMinCount {
			tests = append(tests, e)
		}
	}
	keys := map[string]bool{}
	for k := range c1 {
		keys[k] = true
	}
	for k := range c2 {
		keys[k] = true
	}
	var single []string
	for k := range keys {
		if c1[k] >= nbMinCount && c2[k] >= nbMinCount {
			single = append(single, k)
		}
	}
	sort.Strings(single)
	for _, k := range single {
		tests = append(tests, event{k})
	}
	z := distuv.UnitNormal.Quantile(1 - nbFalseFailure/float64(2*max(1, len(tests))))
	excess = math.Inf(-1)
	for _, e := range tests {
		a, b := e.count(c1), e.count(c2)
		l, se := logRatio(a, b, n)
		if x := math.Abs(l) - z*se - eps; x > excess {
			excess = x
			worst = fmt.Sprintf("event of %d outcome(s) %v: P̂ = %.5f vs %.5f, loss %.3f ± %.3f (z·se) vs ε = %.3f",
				len(e), e[:min(len(e), 4)], float64(a)/float64(n), float64(b)/float64(n), l, z*se, eps)
		}
	}
	one := float64(nbOneSided) * math.Exp(eps)
	for k := range keys {
		if (float64(c1[k]) >= one && c2[k] == 0) || (float64(c2[k]) >= one && c1[k] == 0) {
			return math.Inf(1), fmt.Sprintf("outcome %s: counts %d vs %d", k, c1[k], c2[k]), len(tests)
		}
	}
	return excess, worst, len(tests)
}

func TestNeighbourPrivacyLoss(t *testing.T) {
	wl := fwWorkload(t, `{"a": 2, "b": 2}`, `{"families": [{"type": "marginals", "sets": [["a"], ["b"]]}]}`)
	n := neighbourRuns()
	for ri, row := range neighbourRows {
		t.Run(strings.ReplaceAll(row.name, " ", "-"), func(t *testing.T) {
			d, d2 := nbRecords()
			if row.records != nil {
				d, d2 = row.records()
			}
			p1 := fwProblem(t, wl, d, row.budget, 0)
			p2 := fwProblem(t, wl, d2, row.budget, 0)
			for _, under := range []bool{false, true} {
				s := row.solver(under)
				plan, err := s.Plan(&p1.Shape)
				if err != nil {
					t.Fatal(err)
				}
				eps := row.claim(plan)
				seed := uint64(ri)*10_000_000 + 1
				if under {
					seed += 5_000_000
				}
				// First half: choose events; second half: test them.
				a1 := outcomes(t, s, p1, seed, n)
				a2 := outcomes(t, s, p2, seed+1_000_000, n)
				b1 := outcomes(t, s, p1, seed+2_000_000, n)
				b2 := outcomes(t, s, p2, seed+3_000_000, n)
				excess, worst, tested := lossCheck(extremeEvents(a1, a2, n), b1, b2, n, eps)
				t.Logf("under-noised %v: claimed ε = %.3f, %d events tested (N = %d runs each); worst: %s", under, eps, tested, n, worst)
				if tested == 0 {
					t.Fatalf("no event seen %d times under both datasets", nbMinCount)
				}
				switch {
				case !under && excess > 0:
					t.Errorf("estimated privacy loss exceeds the claimed ε = %.3f: %s", eps, worst)
				case under && excess <= 0:
					t.Errorf("the under-noised variant was not caught: %s", worst)
				}
			}
		})
	}
}

// replay is DPFW's fast path for the neighbour test: plan once, then run
// the private steps (newFWRun draws the paper's q_0 from r as Solve does).
func (s *DPFW) replay(t testing.TB, p *Problem) func(r *privacy.Rand) []int {
	_, fp, err := s.plan(&p.Shape)
	if err != nil {
		t.Fatal(err)
	}
	team := par.NewTeam(1)
	t.Cleanup(team.Close)
	return func(r *privacy.Rand) []int {
		p.Rand = r
		run := newFWRun(p, fp, team, s.noiseScale)
		for it := range fp.T {
			run.step(it)
		}
		return run.sel
	}
}

// replay is SMD's fast path for the neighbour test. The privacy proof holds
// for every batch assignment (the random permutation only dilutes the
// loss, since the differing record may land in a later batch or be
// unused), so the replay tests the draws given a fixed assignment: the
// permutation drawn from r is replaced by the data's order, which puts the
// differing record of the row's datasets in the first batch, where it moves
// the scores of both draws.
func (s *neighbourSMD) replay(t testing.TB, p *Problem) func(r *privacy.Rand) []int {
	_, sp, err := s.plan(&p.Shape)
	if err != nil {
		t.Fatal(err)
	}
	team := par.NewTeam(1)
	t.Cleanup(team.Close)
	return func(r *privacy.Rand) []int {
		p.Rand = r
		run, err := newSMDRun(p, sp, team, s.noiseScale)
		if err != nil {
			t.Fatal(err)
		}
		if s.fixedBatches {
			slices.Sort(run.rec)
		}
		sel := make([]int, sp.T)
		for it := range sp.T {
			sel[it], _ = run.step(it)
		}
		return sel
	}
}
