package solvers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// Operator is the workload as the solvers see it: the matrix A (M × K) of
// the workload's queries, applied to dense vectors over an explicit
// universe. *query.Operator implements it.
type Operator interface {
	M() int
	K() int
	// Answer writes out[j] = ⟨q_j, d⟩ (len(d) = K, len(out) = M).
	Answer(d, out []float64)
	// Adjoint writes out = Σ_j y_j q_j (len(y) = M, len(out) = K).
	Adjoint(y, out []float64)
	// AddQuery adds s·q_j to x (len K), touching only q_j's support.
	AddQuery(j int, s float64, x []float64)
	// Range returns the minimum and maximum of q_j over the universe.
	Range(j int) (lo, hi float64)
}

// Neighbours is the neighbouring relation a release is private under.
// The zero value is AddRemove, the default.
type Neighbours int

const (
	// AddRemove: datasets differ by one privacy unit added or removed: one
	// record, or all the records of one unit when a release bounds each unit
	// to Shape.UnitRows records (package contrib). n is private; the solvers
	// estimate it from noisy outputs. This is the relation of OpenDP, Tumult,
	// private-pgm and Google's DP libraries, and the default.
	AddRemove Neighbours = iota
	// ReplaceOne: datasets differ in one record, n is public (the seeds'
	// setting). It has no privacy unit other than a record.
	ReplaceOne
)

// String returns the relation as the manifest prints it.
func (n Neighbours) String() string {
	switch n {
	case ReplaceOne:
		return privacy.DefaultNeighbours
	case AddRemove:
		return "add or remove one record; n private"
	}
	return fmt.Sprintf("Neighbours(%d)", int(n))
}

// Flag returns the relation's name on the command line: "add-remove" or
// "replace-one".
func (n Neighbours) Flag() string {
	switch n {
	case ReplaceOne:
		return "replace-one"
	case AddRemove:
		return "add-remove"
	}
	return fmt.Sprintf("Neighbours(%d)", int(n))
}

// ParseNeighbours parses "add-remove" or "replace-one" ("" is add-remove,
// the default).
func ParseNeighbours(s string) (Neighbours, error) {
	switch s {
	case "", "add-remove":
		return AddRemove, nil
	case "replace-one":
		return ReplaceOne, nil
	}
	return 0, fmt.Errorf("unknown neighbouring relation %q (want add-remove or replace-one)", s)
}

// Accounting says how a plan states its privacy.
type Accounting int

const (
	// AccountZCDP: every mechanism's cost in zCDP, composed and converted to
	// (ε, δ) once (Shape.Conversion). The zero value.
	AccountZCDP Accounting = iota
	// AccountExact: a plan made only of exact discrete Gaussians on counts
	// that move by one (the project solver's explicit marginal plans under
	// add/remove of one record or replace-one) is calibrated to the (ε, δ) that its
	// privacy-loss distribution gives (privacy.StagedGaussian), about 11%
	// more ρ than the zCDP conversion allows, and is charged as one (ε, δ)
	// cost. Such a charge composes with others by basic composition, so a
	// release that spends from a lifetime budget of many releases is better
	// accounted in zCDP. Other plans are accounted in zCDP.
	AccountExact
)

// ParseAccounting parses "zcdp" or "exact".
func ParseAccounting(s string) (Accounting, error) {
	switch s {
	case "zcdp":
		return AccountZCDP, nil
	case "exact":
		return AccountExact, nil
	}
	return 0, fmt.Errorf("unknown accounting %q (want zcdp or exact)", s)
}

// Setting selects a solver's parameter rules.
type Setting int

const (
	// Tuned: parameters derived from the true sensitivities with zCDP
	// accounting, chosen on evidence (docs/BENCHMARKS.md). The default.
	Tuned Setting = iota
	// Paper: the seeds' printed formulas and accounting, capped where they
	// are not computable (with a warning).
	Paper
)

// String returns "tuned" or "paper".
func (s Setting) String() string {
	if s == Paper {
		return "paper"
	}
	return "tuned"
}

// ParseSetting parses "tuned" or "paper" ("" is tuned).
func ParseSetting(s string) (Setting, error) {
	switch s {
	case "", "tuned":
		return Tuned, nil
	case "paper":
		return Paper, nil
	}
	return 0, fmt.Errorf("unknown setting %q (want tuned or paper)", s)
}

// Shape is the public description of a problem: everything a solver may
// use to plan its privacy cost before any record is read.
type Shape struct {
	Budget     privacy.Budget
	Conversion privacy.Conversion
	// Accounting is how the plan states its privacy (the zero value:
	// zCDP).
	Accounting Accounting
	Neighbours Neighbours
	// UnitRows is K, the most records one privacy unit contributes once the
	// release has bounded each unit (package contrib); 0 means 1, every
	// record its own unit. Under AddRemove every sensitivity is K times that
	// of one record (a unit is at most K records added or removed); ReplaceOne
	// takes no K other than 1.
	UnitRows int
	// N is the number of records, public under ReplaceOne. It may be 0 when
	// planning before the data is opened: a plan's charges never depend on
	// N, only its noise scales do.
	N        int
	Workload *query.Workload
	// Model is the representation of D the solver must produce; Factored
	// needs no explicit universe (project, mwem, dpfw and smd support it;
	// dpam does not).
	Model ModelKind
	// MaxModelBytes caps a factored model's memory (0: DefaultMaxModelBytes).
	MaxModelBytes uint64
}

// Unit returns K, the most records one privacy unit contributes (at
// least 1).
func (s *Shape) Unit() int {
	return max(s.UnitRows, 1)
}

// checkUnit refuses a unit bound that the relation cannot state: K must be
// at least 1, and ReplaceOne has no privacy unit other than one record.
func (s *Shape) checkUnit(solver string) error {
	if s.UnitRows < 0 {
		return fmt.Errorf("%s: UnitRows = %d: must be at least 1 (0 means 1)", solver, s.UnitRows)
	}
	if s.UnitRows > 1 && s.Neighbours == ReplaceOne {
		return fmt.Errorf("%s: a privacy unit of up to %d records needs add/remove neighbours (under replace-one the number of records is public only when every unit is one record): %w", solver, s.UnitRows, ErrUnsupported)
	}
	return nil
}

// K is the universe size (the workload's domain must be explicit).
func (s *Shape) K() int {
	k, _ := s.Workload.Domain().Size()
	return int(k)
}

// Plan is what a solver will do and spend, computed from a Shape alone.
type Plan struct {
	Solver  string
	Setting Setting
	// Charges are the privacy charges of the whole run. The release checks
	// them against the budget before reading data; the solver charges
	// exactly these to the ledger.
	Charges []privacy.Charge
	// Iterations is the number of private steps (0 if not iterative).
	Iterations int
	// Params records the derived parameters (T, α, σ, ε0, ...) for the
	// manifest; they may depend on N.
	Params map[string]float64
	// Warnings are printed on stderr and stored in the manifest (e.g. "T
	// capped 1.2e10 -> 1e4").
	Warnings []string
	// AnswersUnused says the solve never reads Problem.Answers (the
	// factored project solver reads the data's tables instead), so a
	// caller may compute them beside the solve; false means it may.
	AnswersUnused bool
	// ReadsWorkloadTables says the solve asks Problem.Data for the count
	// table of every marginal set of the workload, which is marginals only
	// (the adaptive factored plan: its candidates hold every workload set).
	// A caller whose Data keeps the tables it served can then take the
	// workload's answers from them after the solve (Workload.AnswerTables)
	// instead of counting them again.
	ReadsWorkloadTables bool

	groups   []group       // measure-and-project: what is measured
	factored *factoredPlan // measure-and-project on the factored model
	count    *countPlan    // the seed solvers' noisy record count (add/remove)
	stage    *secondStage  // the explicit tuned plan's second stage (add/remove)
}

// Total is the zCDP ρ of the plan's ZCDP and Pure charges (Approx
// charges are not included).
func (p *Plan) Total() float64 {
	rho := 0.0
	for _, c := range p.Charges {
		if c.Kind != privacy.Approx {
			rho += c.Rho
		}
	}
	return rho
}

// ApproxTotal sums the (ε, δ) of the plan's Approx ("paper") charges.
func (p *Plan) ApproxTotal() (eps, delta float64) {
	for _, c := range p.Charges {
		if c.Kind == privacy.Approx {
			eps += c.Eps
			delta += c.Delta
		}
	}
	return eps, delta
}

// Problem is one solve: the public shape plus the private data.
type Problem struct {
	Shape
	// Op is the compiled workload.
	Op Operator
	// Counts is the data (private): the sparse histogram over the universe.
	// Solvers on the factored model read Data instead and may find it nil.
	Counts *universe.Counts
	// Data serves marginal count tables of the data (private); for file
	// sources it is Counts.
	Data Data
	// Answers are the exact workload answers on the data, fractions of N
	// (private), len M.
	Answers []float64
	// Rand is the only randomness a solver may use.
	Rand *privacy.Rand
	// Ledger receives the plan's charges before the first private step.
	Ledger *privacy.Ledger
	// Progress, if set, is called after each iteration (from the solving
	// goroutine; it must be quick).
	Progress func(Progress)

	// noPrivacy turns every private step into its exact counterpart and
	// skips the ledger. It exists for tests of convergence (sign and step
	// errors show up without noise) and cannot be set outside this package.
	noPrivacy bool
}

// Progress reports a solver's advance.
type Progress struct {
	Iter, Total int
	// Objective is the solver's current estimate of its objective, from
	// private quantities only (never the true error).
	Objective float64
	Elapsed   time.Duration
}

// Step is one entry of a solver's trace.
type Step struct {
	Iter int `json:"iter"`
	// Selected is the workload query (or signed vertex) the step chose, -1
	// if none.
	Selected int `json:"selected"`
	// Objective is the solver's own estimate of its objective from private
	// quantities only (e.g. the fit's risk estimate), NaN if none.
	Objective float64 `json:"objective"`
	// MaxError is the workload max error of the current iterate against the
	// data: internal, computed on the private data, not differentially
	// private. NaN when not computed.
	MaxError float64       `json:"max_error"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// Result is a solver's output.
type Result struct {
	// D is the synthetic distribution over the universe (len K, sums to 1,
	// no NaN or Inf); nil on the factored model.
	D []float64
	// Model is the synthetic distribution on the factored model (nil on the
	// explicit one); Cliques are its junction tree's cliques. The caller
	// owns Model and must Close it.
	Model   *model.Model
	Cliques [][]int
	// Mixture, when not nil, is the synthetic distribution on the factored
	// model instead of Model alone: an equal-weight mixture of models on
	// Model's tree, each component rebuilt into Model on demand (SMD's
	// average of iterates). Model then holds its last component.
	Mixture *Mixture
	Plan    *Plan
	// Trace has one Step per iteration (internal: its errors are computed on
	// the private data).
	Trace []Step
	// Bounds are a-priori error bounds derived from the noise scales alone
	// (safe to publish), if the solver can state them.
	Bounds []Bound
}

// Bound is an a-priori error bound derived from noise scales alone: with
// probability at least Confidence the error of each of the Queries queries
// it covers is at most Value. Method says what it covers (e.g. the noise of
// a measurement, not the fit's bias).
type Bound struct {
	// Scope is "workload", "family" or "marginal"; Name identifies it.
	Scope      string  `json:"scope"`
	Name       string  `json:"name"`
	Queries    int     `json:"queries"`
	Value      float64 `json:"value"`
	Confidence float64 `json:"confidence"`
	Method     string  `json:"method"`
}

// Solver is one private optimisation method.
type Solver interface {
	// Name is the solver's CLI name (dpfw, dpam, smd, mwem, project).
	Name() string
	// Plan computes the run's privacy charges and parameters from the public
	// shape. It must not depend on any private quantity. Shape.N may be 0
	// (the release plans before it opens the data); the total cost of the
	// charges must not depend on N, though how a solver splits it may (n is
	// public under replace-one neighbours).
	Plan(s *Shape) (*Plan, error)
	// Solve runs the solver. It charges the plan to p.Ledger before its
	// first private step and returns a distribution over the universe.
	Solve(ctx context.Context, p *Problem) (*Result, error)
}

// ErrUnsupported reports a problem a solver cannot handle (e.g. a
// neighbouring relation it has no accounting for).
var ErrUnsupported = errors.New("not supported by this solver")

// registry maps names to constructors of default-configured solvers.
var registry = map[string]func(Setting) Solver{}

func register(name string, f func(Setting) Solver) { registry[name] = f }

// New returns the named solver with its default settings for setting.
func New(name string, setting Setting) (Solver, error) {
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown solver %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return f(setting), nil
}

// Names lists the registered solvers.
func Names() []string {
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// charge records the plan's charges in the ledger (refusing, before any
// private step, if they do not fit).
func (p *Problem) charge(plan *Plan) error {
	if p.noPrivacy {
		return nil
	}
	if p.Ledger == nil {
		return errors.New("solvers: no privacy ledger")
	}
	return p.Ledger.Charge(plan.Charges...)
}

// checkProblem validates the parts of a problem every solver relies on.
func checkProblem(p *Problem) error {
	if p.Op == nil || p.Workload == nil {
		return errors.New("solvers: problem without a workload operator")
	}
	return checkFactoredProblem(p) // the rest, read through the workload (Op.M() = Workload.M())
}

// checkDistribution verifies that d is a probability vector: no NaN or Inf,
// no negative entry, sum 1 within 1e-9.
func checkDistribution(d []float64) error {
	s := 0.0
	for i, v := range d {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("solvers: internal error: D[%d] = %v", i, v)
		}
		s += v
	}
	if math.Abs(s-1) > 1e-9 {
		return fmt.Errorf("solvers: internal error: D sums to %v", s)
	}
	return nil
}

// stepper is the state of an iterative solver's run: step takes iteration
// t and returns the selected vertex and the trace's error (NaN if not
// computed); bound is the private objective estimate after t iterations
// (for Progress); output is the final distribution.
type stepper interface {
	step(t int) (selected int, maxErr float64)
	bound(t int) float64
	output() []float64
}

// runSteps runs T iterations of r, checking for cancellation, recording the
// trace and reporting progress, and returns the result.
func runSteps(ctx context.Context, p *Problem, plan *Plan, T int, r stepper) (*Result, error) {
	res := &Result{Plan: plan, Trace: make([]Step, 0, T)}
	start := time.Now()
	for t := range T {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sel, maxErr := r.step(t)
		el := time.Since(start)
		res.Trace = append(res.Trace, Step{Iter: t, Selected: sel, Objective: math.NaN(), MaxError: maxErr, Elapsed: el})
		if p.Progress != nil {
			p.Progress(Progress{Iter: t + 1, Total: T, Objective: r.bound(t + 1), Elapsed: el})
		}
	}
	res.D = r.output()
	if err := checkDistribution(res.D); err != nil {
		return nil, err
	}
	return res, nil
}
