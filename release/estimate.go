package release

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// ModelChoice is the --model setting.
type ModelChoice int

const (
	// ModelAuto picks the explicit model only when its whole peak memory
	// fits the memory cap, the solver needs it or the universe is small
	// enough (AutoExplicitCells) for it to be the faster choice; the
	// factored model otherwise.
	ModelAuto ModelChoice = iota
	ModelExplicit
	ModelFactored
)

// String returns "auto", "explicit" or "factored".
func (m ModelChoice) String() string {
	switch m {
	case ModelExplicit:
		return "explicit"
	case ModelFactored:
		return "factored"
	}
	return "auto"
}

// ParseModelChoice parses "auto" ("" too), "explicit" or "factored".
func ParseModelChoice(s string) (ModelChoice, error) {
	switch s {
	case "", "auto":
		return ModelAuto, nil
	case "explicit":
		return ModelExplicit, nil
	case "factored":
		return ModelFactored, nil
	}
	return 0, fmt.Errorf("unknown model %q (want auto, explicit or factored)", s)
}

// AutoExplicitCells is the largest universe --model auto gives to the
// explicit model when the factored one can serve the solver. A release on
// the explicit model passes over every cell at every step of its fit, so
// its time grows with the universe: adult-reduced (336,000 cells) about a
// second, healthins (2.15·10^6) 2–3 s, adult-gem (4.5·10^6, 48,842 rows)
// 5–14 s, beps (1.4·10^7 cells, 1,525 rows) 8–10 s against 0.3–0.5 s on
// the factored model, where AIM takes 1.5–3 minutes. Above 2^23 cells
// (about 5 s) an explicit release no longer keeps to a twentieth of AIM's
// time on tables of ten or so attributes, and the factored release is as
// accurate on beps and more so on gssvocab (2.1·10^7 cells;
// docs/BENCHMARKS.md, "One more held-out table: beps"). adult-gem stays
// explicit, where its max error is half the factored model's. titanic
// (8.9·10^7 cells) took a minute and 7 GB explicitly.
const AutoExplicitCells = 1 << 23

// explicitBytesPerCell is every buffer an explicit release holds per universe
// cell at its peak, by solver: the solver's vectors (iterate, log-weights,
// gradient, trial, the SURE shadows or noise vectors), the operator's
// adjoint output, the sampler's histogram and the balancing step. Measured
// as the peak Go heap of whole releases at 2^20 cells (project 14.7, dpfw
// 9.8, smd 8.7, dpam 12.6, mwem 9.0 float64s per cell) and rounded up with
// a margin of at least 20%. SURE's two shadows (three vectors each, where
// the one before held five) left project's peak heap unchanged on affairs
// (1.06·10⁶ cells, 116 MB) and mplsstops.
var explicitBytesPerCell = map[string]float64{
	"project": 8 * 18, "dpfw": 8 * 12, "smd": 8 * 11, "dpam": 8 * 16, "mwem": 8 * 12,
}

// Estimate is a release's plan of memory, made from public inputs before the
// data is read.
type Estimate struct {
	// Model is the representation the release will use, and Reason why.
	Model  solvers.ModelKind
	Reason string
	// PeakBytes is the estimated peak memory of the solver and the sampler;
	// Parts itemises it. The data's own histogram (at most one entry per
	// distinct record) comes on top and is not known before reading.
	PeakBytes uint64
	Parts     []EstimatePart
}

// EstimatePart is one item of an estimate.
type EstimatePart struct {
	Name  string `json:"name"`
	Bytes uint64 `json:"bytes"`
}

// MemoryError refuses a release whose estimated memory is over a cap,
// before the data is read (CLI exit code 78), or, when Spent, after the
// solve and before any row is drawn or written.
type MemoryError struct {
	What string // what is over its cap
	Need uint64
	Cap  uint64
	Flag string // the flag that sets the cap
	Hint string
	// Spent: the data was read and the budget spent (a cap that depends on
	// a noisy output, such as the default row count n̂).
	Spent bool
}

func (e *MemoryError) Error() string {
	state := "nothing was read"
	if e.Spent {
		state = "the data was read and the budget spent, nothing was written"
	}
	return fmt.Sprintf("%s needs about %s, over %s of %s; %s. Hint: %s",
		e.What, fmtBytes(e.Need), e.Flag, fmtBytes(e.Cap), state, e.Hint)
}

// rowBytes is the explicit model's memory per synthetic row while the rows
// are drawn: each row's cell (uint32) is held until written.
const rowBytes = 4

func fmtBytes(b uint64) string { return universe.FormatBytes(new(big.Int).SetUint64(b)) }

func satMul(a float64, b float64) uint64 {
	v := a * b
	if v >= math.MaxUint64 || math.IsNaN(v) {
		return math.MaxUint64
	}
	return uint64(v)
}

// Route chooses the model of a release and estimates its memory from public
// inputs: the domain, the workload, the solver and the caps.
func Route(cfg *Config, dom *universe.Domain, wl *query.Workload, solver string) (*Estimate, error) {
	memCap := cfg.memoryCap()
	k, indexable := dom.Size()
	perCell, ok := explicitBytesPerCell[solver]
	if !ok {
		perCell = 8 * 18
	}
	explicitPeak := uint64(math.MaxUint64)
	if indexable {
		explicitPeak = satMul(float64(k), perCell)
	}
	fitsExplicit := indexable && explicitPeak <= memCap && k <= math.MaxInt32*64
	factoredOK := factoredSolvers[solver]
	est := &Estimate{}
	// The workload's answers: at most five vectors of m float64s (true, on
	// the rows, on D, on the holdout, and the errors the report's histogram
	// keeps); the report itself keeps no vector of m. Measured on full ADULT
	// with all 3-way marginals (m = 2.1·10^7): the report stage adds 6 MB to
	// the rows' stage, peak RSS 1.03 GB (1.55–1.78 GB with the earlier
	// report's 12 vectors).
	est.Parts = append(est.Parts, EstimatePart{fmt.Sprintf("the workload's %s answers and the report", universe.FormatCount(big.NewInt(int64(wl.M())))), satMul(float64(wl.M()), 5*8)})
	explicit := func(reason string) (*Estimate, error) {
		est.Model, est.Reason = solvers.Explicit, reason
		est.Parts = append(est.Parts, EstimatePart{fmt.Sprintf("%s's vectors over the %s-cell universe", solver, universe.FormatCount(dom.SizeBig())), explicitPeak})
		return est, nil
	}
	factored := func(reason string) (*Estimate, error) {
		est.Model, est.Reason = solvers.Factored, reason
		est.Parts = append(est.Parts, EstimatePart{"sampling rows along the junction tree (one chunk of rows)", model.StratifiedBytes(dom.Len(), math.MaxInt64)})
		return est, nil
	}
	tooBig := func() error {
		hint := "coarsen or drop attributes, ask for fewer marginals"
		if factoredOK {
			hint += ", or use the factored model (--model factored or auto)"
		}
		return &MemoryError{What: fmt.Sprintf("the explicit model of %s over %s cells (10^%.2f)", solver, universe.FormatCount(dom.SizeBig()), dom.Log10Size()),
			Need: explicitPeak, Cap: memCap, Flag: "--memory-cap", Hint: hint}
	}
	switch cfg.Model {
	case ModelExplicit:
		if !fitsExplicit {
			return nil, tooBig()
		}
		return explicit("--model explicit")
	case ModelFactored:
		if !factoredOK {
			return nil, &ConfigError{Msg: factoredRefusal(solver)}
		}
		return factored("--model factored")
	}
	switch {
	case fitsExplicit && (!factoredOK || k <= AutoExplicitCells):
		return explicit(fmt.Sprintf("auto: the universe has %s cells, at most %s, and its vectors fit the memory cap", universe.FormatCount(dom.SizeBig()), universe.FormatCount(big.NewInt(AutoExplicitCells))))
	case factoredOK:
		return factored(fmt.Sprintf("auto: the universe has %s cells (10^%.2f); the junction tree's cost follows the workload instead", universe.FormatCount(dom.SizeBig()), dom.Log10Size()))
	}
	err := tooBig()
	err.(*MemoryError).Hint += "; " + factoredRefusal(solver)
	return nil, err
}

// factoredSolvers are the solvers with a factored form: project, and the
// seeds' selection-based solvers, whose iterates are log-linear over the
// queries they select.
var factoredSolvers = map[string]bool{"project": true, "mwem": true, "dpfw": true, "smd": true}

func factoredRefusal(solver string) string {
	if solver == "dpam" {
		return "dpam needs the full noisy histogram over the universe and runs only on the explicit model (--model explicit); the project, mwem, dpfw and smd solvers run on the factored model"
	}
	return solver + " runs only on the explicit model; the project solver (the default), mwem, dpfw and smd run on the factored model"
}

// addPlan completes the estimate with the plan's model size (factored).
func (e *Estimate) addPlan(p *solvers.Plan) {
	if e.Model != solvers.Factored {
		e.sum()
		return
	}
	mb := uint64(p.Params["model_bytes"])
	what := "the junction tree of the measured sets"
	if mb == 0 {
		mb = uint64(p.Params["max_model_bytes"])
		what = "the junction tree of the adaptively measured sets (at most the model cap)"
	}
	if copies := p.Params["model_copies"]; copies > 0 {
		// A seed solver's iterate (and MWEM's trial copy), at most the cap
		// each, and its vectors over the workload: the answers and the
		// scores of the signed queries.
		e.Parts = append(e.Parts,
			EstimatePart{fmt.Sprintf("%s's junction tree of the selected sets (at most the model cap), ×%g", p.Solver, copies), satMul(float64(mb), copies)},
			EstimatePart{fmt.Sprintf("%s's vectors over the workload's queries", p.Solver), satMul(p.Params["m"], 8*seedWorkloadVectors[p.Solver])})
		e.sum()
		return
	}
	// The fit holds the model and a trial copy, and SURE a shadow pair;
	// the adaptive rounds (no SURE) hold a copy of the model's beliefs
	// instead, half a model (Drift).
	e.Parts = append(e.Parts, EstimatePart{what + ", ×4 (model, trial, SURE shadow pair or the rounds' copy of the beliefs)", satMul(float64(mb), 4)})
	if c := p.Params["candidate_cells"]; c > 0 {
		// Per cell: its count and the model's marginal (16 bytes); for a
		// candidate grouped on the supports, its cell's group (4) and at
		// most one group's count and marginal (16).
		e.Parts = append(e.Parts, EstimatePart{"candidate count tables, the model's marginals and the grouped candidates' groups", satMul(c, 36)})
	}
	if b := p.Params["score_sample_bytes"]; b > 0 {
		e.Parts = append(e.Parts, EstimatePart{"the rounds' sample of the model for scoring (at most 2^20 rows) and its conditionals", uint64(b)})
	}
	e.sum()
}

// seedWorkloadVectors is the number of float64 vectors of the workload's m
// queries a seed solver holds on the factored model: answers and scores
// (MWEM 2; DPFW: answers, 2m signed scores; SMD: answers, 2m cumulative
// scores and 2m packed ones when the cap leaves sets out).
var seedWorkloadVectors = map[string]float64{"mwem": 2, "dpfw": 3, "smd": 5}

func (e *Estimate) sum() {
	var t uint64
	for _, p := range e.Parts {
		if t+p.Bytes < t {
			t = math.MaxUint64
			break
		}
		t += p.Bytes
	}
	e.PeakBytes = t
}

// check refuses an estimate over the memory cap.
func (e *Estimate) check(cfg *Config) error {
	if e.PeakBytes > cfg.memoryCap() {
		return &MemoryError{What: "the release (" + e.Model.String() + " model)", Need: e.PeakBytes, Cap: cfg.memoryCap(), Flag: "--memory-cap",
			Hint: "lower --max-model-size, coarsen or drop attributes, or ask for fewer marginals"}
	}
	// The explicit model holds its rows while it draws them (the default
	// number, n̂, is checked once drawn: runner.checkRowsMemory).
	if cfg.Rows > 0 {
		return e.checkRows(cfg, cfg.Rows, "give fewer --rows", false)
	}
	return nil
}

// checkRows refuses rows that the explicit model, which holds them while it
// draws them (rowBytes each), cannot hold beside the estimate under the
// memory cap; spent says whether the budget was already spent.
func (e *Estimate) checkRows(cfg *Config, rows int64, hint string, spent bool) error {
	need := e.PeakBytes + satMul(float64(rows), rowBytes)
	if e.Model != solvers.Explicit || need <= cfg.memoryCap() {
		return nil
	}
	return &MemoryError{What: fmt.Sprintf("drawing %d synthetic rows on the explicit model", rows), Need: need, Cap: cfg.memoryCap(),
		Flag: "--memory-cap", Hint: hint, Spent: spent}
}

// Describe writes the estimate for people.
func (e *Estimate) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: %s (%s)\n", e.Model, e.Reason)
	fmt.Fprintf(&b, "estimated peak memory: %s\n", fmtBytes(e.PeakBytes))
	for _, p := range e.Parts {
		fmt.Fprintf(&b, "  %s: %s\n", p.Name, fmtBytes(p.Bytes))
	}
	return b.String()
}
