package solvers

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

// Empirical neighbour test for the selection-based solvers.
//
// Replace-one neighbours: a tiny universe (two binary attributes, k = 4)
// with its two 1-way marginals (m = 4, 8 signed vertices) and a fixed pair
// of neighbouring datasets (nbRecords: D' replaces one record of D by cell
// (1, 1), which moves every score by the full sensitivity, half of them up
// and half down: the non-monotone worst case of queries and their
// negations). Each solver runs with few iterations 2N times on each dataset
// (seeded, a fresh source per run), and the test estimates the distribution
// of what the mechanism releases, the sequence of selected vertices.
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
// Add/remove neighbours (rows with unit = K): D' is D plus one privacy
// unit of K records, on a workload whose every query the unit moves. The
// replay runs what Solve runs after its first plan and charge: n̂ drawn
// first, the plan with N = n̂, the answers normalised by n̂. Rows with n̂
// fixed (a public value) test the selections given n̂, at their
// sensitivity K·A/n̂ (SMD: K·A/B), against the selections' ε, with the
// noise halved (doubled ε0 for MWEM) as the under-noised variant. Rows
// with n̂ drawn test the whole release, whose outcome is then n̂ (coarsened)
// and the selections, against the count's ε plus the selections'; there
// n̂'s spread leaves only gross errors detectable, so the under-noised
// variant forgets K (noise scale 1/K), on data small enough that n̂ is often
// clamped to 1. DPAM has no row: its oracle is a Gaussian mechanism, with
// no pure ε to claim, and its argmax releases too little for this test to
// resolve an (ε, δ) bound at a δ small against the events' probabilities;
// its sensitivity and σ are checked in addremove_test.go and dpam_test.go.
//
// Adding a solver takes one row of neighbourRows: a constructor with the
// under-noised switch, the budget and the claimed ε from its plan (and
// optionally other datasets). A solver whose Solve is slow on this universe
// (planning and ledger work per run) can implement neighbourReplayer for a
// fast path (neighbourARReplayer for add/remove rows, which need it);
// otherwise the harness calls Solve with a fresh ledger per run and reads
// the selections from Result.Trace.

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
	// unit, if positive, makes an add/remove row with units of K = unit
	// records: D' adds one unit to D. The row runs on arWorkload and
	// arRecords (or its own), and its claim reads the plan made with N = n̂
	// (nHat, or |D|: Solve's second plan).
	unit int
	// nHat, if positive, fixes the noisy count of an add/remove row.
	nHat int
	// workload and unitRecords (given K), if set, replace arWorkload and
	// arRecords for an add/remove row.
	workload    func(testing.TB) *query.Workload
	unitRecords func(K int) (d, d2 [][]int)
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
	// Add/remove rows: D' is D plus one unit of K records. With nHat set,
	// the noisy count is fixed at that public value and the rows test the
	// selections given n̂ (their sensitivity K·A/n̂ or K·A/B), claiming the
	// selections' ε; the under-noised variant halves the noise. Without it,
	// n̂ is drawn as in Solve and the rows test the whole release, claiming
	// the count's ε plus the selections' (the selections are a
	// post-processing of (n̂, selections)); there n̂'s spread hides all but
	// gross errors, and the under-noised variant forgets K (noise scale
	// 1/K: one record's sensitivity). Pure budgets, or a paper setting's
	// pure count beside its own composition, so that there is a pure ε to
	// claim.
	{
		// One selection at n̂ = 2K: the vertices moving down lead those
		// moving up by two sensitivities K/n̂.
		name:   "dpfw tuned add-remove K=1 n̂ fixed",
		solver: func(under bool) Solver { return &DPFW{T: 1, noiseScale: half(under)} },
		budget: privacy.Budget{Eps: 2},
		claim:  func(p *Plan) float64 { return p.Params["T"] * p.Params["eps0"] },
		unit:   1, nHat: 2,
	},
	{
		name:   "dpfw tuned add-remove K=3 n̂ fixed",
		solver: func(under bool) Solver { return &DPFW{T: 1, noiseScale: half(under)} },
		budget: privacy.Budget{Eps: 2},
		claim:  func(p *Plan) float64 { return p.Params["T"] * p.Params["eps0"] },
		unit:   3, nHat: 6,
	},
	{
		name:   "dpfw tuned add-remove K=4",
		solver: func(under bool) Solver { return &DPFW{T: 1, Alpha: 20, noiseScale: quarter(under)} },
		budget: privacy.Budget{Eps: 1.5},
		claim:  func(p *Plan) float64 { return p.Params["count_eps"] + p.Params["T"]*p.Params["eps0"] },
		unit:   4,
	},
	{
		name:   "dpfw paper add-remove K=2 n̂ fixed",
		solver: func(under bool) Solver { return &DPFW{Setting: Paper, T: 2, Alpha: 20, noiseScale: half(under)} },
		budget: privacy.Budget{Eps: 60, Delta: 1e-6},
		// The tight recomputation, as for replace-one.
		claim: func(p *Plan) float64 { return p.Params["T"] * p.Params["eps_step_true"] },
		unit:  2, nHat: 6,
	},
	{
		// One draw on one batch of B = n̂ = 2K: as dpfw's first row.
		name:   "smd tuned add-remove K=2 n̂ fixed",
		solver: func(under bool) Solver { return &neighbourSMD{SMD{T: 1, TauX: 0.01, noiseScale: half(under)}, true} },
		budget: privacy.Budget{Eps: 2},
		claim:  func(p *Plan) float64 { return p.Params["T"] * p.Params["eps_draw"] },
		unit:   2, nHat: 4,
	},
	{
		name:   "smd tuned add-remove K=4",
		solver: func(under bool) Solver { return &neighbourSMD{SMD{T: 1, TauX: 0.01, noiseScale: quarter(under)}, true} },
		budget: privacy.Budget{Eps: 1.5},
		// The count's ε and T draws of ε' each (fewer when n̂ < T, at the
		// same total).
		claim: func(p *Plan) float64 { return p.Params["count_eps"] + p.Params["T"]*p.Params["eps_draw"] },
		unit:  4,
	},
	{
		// As the tuned row, with τ_y set below the paper's privacy cap.
		name: "smd paper add-remove K=2 n̂ fixed",
		solver: func(under bool) Solver {
			return &neighbourSMD{SMD{Setting: Paper, T: 1, TauX: 0.01, TauY: 1.9, noiseScale: half(under)}, true}
		},
		budget: privacy.Budget{Eps: 25, Delta: 1e-6},
		claim:  func(p *Plan) float64 { return p.Params["T"] * p.Params["eps_draw"] },
		unit:   2, nHat: 4,
	},
	{
		name:   "mwem paper add-remove K=2 n̂ fixed",
		solver: func(under bool) Solver { return &MWEM{Setting: Paper, T: 1, TraceEvery: -1, underNoise: double(under)} },
		budget: privacy.Budget{Eps: 4},
		// One round: the measurement after the selection is not part of the
		// outcome.
		claim: func(p *Plan) float64 { return p.Params["eps0"] },
		unit:  2, nHat: 16,
		workload: mwemARWorkload, unitRecords: mwemARRecords,
	},
	{
		// D is one record, so that n̂ is often clamped to 1, where a unit
		// of K = 16 moves the scores by 16 times one record's sensitivity.
		name: "mwem paper add-remove K=16",
		solver: func(under bool) Solver {
			return &MWEM{Setting: Paper, T: 1, TraceEvery: -1, underNoise: times(16, under)}
		},
		budget: privacy.Budget{Eps: 2.1},
		claim:  func(p *Plan) float64 { return p.Params["count_eps"] + p.Params["eps0"] },
		unit:   16, workload: mwemARWorkload,
		unitRecords: func(K int) (d, d2 [][]int) {
			d = [][]int{{2, 0}}
			d2 = append([][]int(nil), d...)
			for range K {
				d2 = append(d2, []int{1, 0})
			}
			return d, d2
		},
	},
}

// arWorkload is the add/remove rows' workload: the two range queries a = 1
// and b = 1 (4 signed vertices), both moved by a unit added at (1, 1).
func arWorkload(t testing.TB) *query.Workload {
	return fwWorkload(t, `{"a": 2, "b": 2}`, `{"families": [{"type": "range", "attribute": "a", "lo": 1, "hi": 1}, {"type": "range", "attribute": "b", "lo": 1, "hi": 1}]}`)
}

// arRecords are the add/remove rows' datasets: D = 2 × (0, 0) and D' = D
// plus one unit of K records at (1, 1).
func arRecords(K int) (d, d2 [][]int) {
	d = [][]int{{0, 0}, {0, 0}}
	d2 = append([][]int(nil), d...)
	for range K {
		d2 = append(d2, []int{1, 1})
	}
	return d, d2
}

// mwemARWorkload has two queries that a unit added at a = 1 moves in
// opposite directions in MWEM's scores |a_j − ⟨q_j, D⟩| (D_0 uniform):
// a = 1 (answer below its uniform 1/4, score falling) and a ∈ 1..3 (answer
// above its uniform 3/4, score rising).
func mwemARWorkload(t testing.TB) *query.Workload {
	return fwWorkload(t, `{"a": 4, "b": 2}`, `{"families": [{"type": "range", "attribute": "a", "lo": 1, "hi": 1}, {"type": "range", "attribute": "a", "lo": 1, "hi": 3}]}`)
}

// mwemARRecords: D = 12 records at a = 2 (at n̂ = 16: scores 1/4 and 0,
// the falling query ahead by two sensitivities K/n̂ for K = 2); D' adds K
// records at a = 1.
func mwemARRecords(K int) (d, d2 [][]int) {
	for range 12 {
		d = append(d, []int{2, 0})
	}
	d2 = append([][]int(nil), d...)
	for range K {
		d2 = append(d2, []int{1, 0})
	}
	return d, d2
}

func quarter(under bool) float64 {
	if under {
		return 0.25
	}
	return 0
}

func times(f float64, under bool) float64 {
	if under {
		return f
	}
	return 0
}

func double(under bool) float64 {
	if under {
		return 2
	}
	return 0
}

// replayAR is DPFW's add/remove path (neighbourARReplayer).
func (s *DPFW) replayAR(t testing.TB, p *Problem, nHat int) func(r *privacy.Rand) []int {
	ar := newARReplay(t, p, nHat, s.plan)
	team := par.NewTeam(1)
	t.Cleanup(team.Close)
	return func(r *privacy.Rand) []int {
		q, fp := ar.next(t, r)
		run := newFWRun(q, fp, team, s.noiseScale)
		for it := range fp.T {
			run.step(it)
		}
		return ar.outcome(run.sel)
	}
}

// replayAR is MWEM's add/remove path (neighbourARReplayer): each run is a
// fresh solver state, exactly what Solve runs after charging.
func (s *MWEM) replayAR(t testing.TB, p *Problem, nHat int) func(r *privacy.Rand) []int {
	derive := func(sh *Shape) (*Plan, *mwemRun, error) {
		r, err := s.derive(sh, false)
		if err != nil {
			return nil, nil, err
		}
		return r.plan, r, nil
	}
	ar := newARReplay(t, p, nHat, derive)
	return func(r *privacy.Rand) []int {
		q, run := ar.next(t, r)
		st, err := newMWEMState(run, q, -1, s.underNoise)
		if err != nil {
			t.Fatal(err)
		}
		for it := 1; it <= run.T; it++ {
			st.step(it)
		}
		return ar.outcome(selections(st.res.Trace))
	}
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

// neighbourARReplayer is the add/remove rows' path (every add/remove row's
// solver implements it): as Solve would after its first plan and charge,
// each run draws n̂ from its source first (or, with nHat > 0, takes n̂ =
// nHat), then runs on the plan with N = n̂ and the problem normalised by
// n̂, and returns the selected vertices.
type neighbourARReplayer interface {
	replayAR(t testing.TB, p *Problem, nHat int) func(r *privacy.Rand) []int
}

// outcomes runs the solver n times on p and counts the selection
// sequences; nHat fixes the noisy count of an add/remove row.
func outcomes(t *testing.T, s Solver, p *Problem, nHat int, seed0 uint64, n int) map[string]int {
	counts := map[string]int{}
	var run func(r *privacy.Rand) []int
	if rp, ok := s.(neighbourARReplayer); ok && p.Neighbours == AddRemove {
		run = rp.replayAR(t, p, nHat)
	} else if rp, ok := s.(neighbourReplayer); ok {
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
	n := neighbourRuns()
	for ri, row := range neighbourRows {
		t.Run(strings.ReplaceAll(row.name, " ", "-"), func(t *testing.T) {
			// The rows are independent (each its own workload, problems and
			// seeds) and run side by side: the test is most of the package's
			// time.
			t.Parallel()
			wl := fwWorkload(t, `{"a": 2, "b": 2}`, `{"families": [{"type": "marginals", "sets": [["a"], ["b"]]}]}`)
			p1, p2 := neighbourProblems(t, row, wl)
			for _, under := range []bool{false, true} {
				s := row.solver(under)
				plan, err := s.Plan(&p1.Shape)
				if err != nil {
					t.Fatal(err)
				}
				if row.unit > 0 {
					sh := p1.Shape
					if row.nHat > 0 {
						sh.N = row.nHat
					}
					plan = internalPlan(t, s, &sh)
				}
				eps := row.claim(plan)
				seed := uint64(ri)*10_000_000 + 1
				if under {
					seed += 5_000_000
				}
				// First half: choose events; second half: test them.
				a1 := outcomes(t, s, p1, row.nHat, seed, n)
				a2 := outcomes(t, s, p2, row.nHat, seed+1_000_000, n)
				b1 := outcomes(t, s, p1, row.nHat, seed+2_000_000, n)
				b2 := outcomes(t, s, p2, row.nHat, seed+3_000_000, n)
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

// neighbourProblems are a row's two neighbouring problems.
func neighbourProblems(t *testing.T, row neighbourRow, wl *query.Workload) (p1, p2 *Problem) {
	d, d2 := nbRecords()
	switch {
	case row.unit > 0:
		wl = arWorkload(t)
		if row.workload != nil {
			wl = row.workload(t)
		}
		d, d2 = arRecords(row.unit)
		if row.unitRecords != nil {
			d, d2 = row.unitRecords(row.unit)
		}
	case row.records != nil:
		d, d2 = row.records()
	}
	p1 = fwProblem(t, wl, d, row.budget, 0)
	p2 = fwProblem(t, wl, d2, row.budget, 0)
	if row.unit > 0 {
		for _, p := range []*Problem{p1, p2} {
			p.Neighbours, p.UnitRows = AddRemove, row.unit
		}
	}
	return p1, p2
}

// arReplay is Solve's add/remove preamble for the replays (begin without
// the ledger): the plan made with N = 0 once; then, per run, n̂ drawn first
// from the run's source, the plan with N = n̂ (cached: a function of n̂)
// and the problem normalised by n̂.
type arReplay[T any] struct {
	p     *Problem
	count *countPlan
	fixed int // n̂, if positive
	nHat  int // the last run's n̂
	plan  func(*Shape) (*Plan, T, error)
	plans map[int]T
}

func newARReplay[T any](t testing.TB, p *Problem, fixed int, plan func(*Shape) (*Plan, T, error)) *arReplay[T] {
	first, _, err := plan(p.planShape())
	if err != nil {
		t.Fatal(err)
	}
	return &arReplay[T]{p: p, count: first.count, fixed: fixed, plan: plan, plans: map[int]T{}}
}

func (a *arReplay[T]) next(t testing.TB, r *privacy.Rand) (*Problem, T) {
	a.p.Rand = r
	nHat := a.fixed
	if nHat == 0 {
		nHat = a.count.estimate(r, a.p.N)
	}
	a.nHat = nHat
	x, ok := a.plans[nHat]
	if !ok {
		var err error
		if _, x, err = a.plan(a.p.countedShape(nHat)); err != nil {
			t.Fatal(err)
		}
		a.plans[nHat] = x
	}
	return a.p.normalised(nHat), x
}

// outcome is what the test compares of a run: its selections and, when n̂
// is drawn, n̂ itself (released too), coarsened to ⌊log2 n̂⌋ + 1 (at most
// 8) so that events over similar counts share outcomes.
func (a *arReplay[T]) outcome(sel []int) []int {
	if a.fixed > 0 {
		return sel
	}
	return append([]int{min(bits.Len(uint(a.nHat)), 8)}, sel...)
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
	team := par.NewTeam(1)
	t.Cleanup(team.Close)
	_, sp, err := s.plan(&p.Shape)
	if err != nil {
		t.Fatal(err)
	}
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

// replayAR is SMD's add/remove path (neighbourARReplayer). With
// fixedBatches the assignment puts every record of cell (1, 1) (the added
// unit) in the first batch, where it moves the scores of every draw, and
// the other records' copies in turn in the batches: a fixed function of a
// record's cell and copy, for which the proof holds as for the keyed one
// (SMD, Privacy).
func (s *neighbourSMD) replayAR(t testing.TB, p *Problem, nHat int) func(r *privacy.Rand) []int {
	team := par.NewTeam(1)
	t.Cleanup(team.Close)
	ar := newARReplay(t, p, nHat, s.plan)
	return func(r *privacy.Rand) []int {
		q, sp := ar.next(t, r)
		run, err := newSMDRun(q, sp, team, s.noiseScale)
		if err != nil {
			t.Fatal(err)
		}
		if s.fixedBatches {
			fixedAssign(run, q)
		}
		sel := make([]int, sp.T)
		for it := range sp.T {
			sel[it], _ = run.step(it)
		}
		return ar.outcome(sel)
	}
}

// fixedAssign replaces an add/remove SMD run's batches by the neighbour
// test's fixed assignment (see neighbourSMD.replay).
func fixedAssign(r *smdRun, p *Problem) {
	T := r.sp.T
	batches := make([][]int32, T)
	c := p.Counts
	for i := range c.Distinct() {
		added := slices.Equal(c.Codes(i), []int32{1, 1})
		for k := range c.Count(i) {
			b := int(k) % T
			if added {
				b = 0
			}
			batches[b] = append(batches[b], int32(i))
		}
	}
	r.rec = r.rec[:0]
	for b, recs := range batches {
		r.start[b] = len(r.rec)
		r.rec = append(r.rec, recs...)
	}
	r.start[T] = len(r.rec)
}
