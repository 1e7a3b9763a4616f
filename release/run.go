package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/ledger"
	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/sqlsrc"
	"github.com/dpsynth/synth/universe"
)

// Run performs a release. Everything that can be checked without the data
// — settings, domain, workload, the model and its memory, the budget, the
// output folder — is checked before the data is opened; the privacy charges
// are checked against the budget before a record is read. On any error or
// cancellation nothing is left in the output folder.
//
// The release is a sequence of small stages over one runner: plan (public
// inputs only), open the output folder, read the data, solve, write the
// synthetic rows, score them, write the reports and the manifest.
func Run(ctx context.Context, cfg *Config, hooks *Hooks) (*Outcome, error) {
	r := &runner{ctx: ctx, cfg: cfg, hooks: hooks, start: time.Now()}
	if r.hooks == nil {
		r.hooks = &Hooks{}
	}
	r.log = r.hooks.Log
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	defer r.close()
	stages := []struct {
		name string
		run  func() error
	}{{"plan", r.plan}, {"lifetime budget", r.reserve}, {"randomness", r.randomness}, {"output folder", r.openOut}, {"read", r.read},
		{"solve", r.solve}, {"manifest", r.manifest}, {"write rows", r.writeRows}, {"report", r.report}, {"commit", r.commit}}
	for _, st := range stages {
		t0 := time.Now()
		stop := r.heartbeat(st.name, t0)
		if stageHook != nil {
			stageHook(st.name)
		}
		err := st.run()
		stop()
		if err != nil {
			return nil, err
		}
		r.stages = append(r.stages, eval.Stage{Name: st.name, Seconds: time.Since(t0).Seconds()})
		if d := time.Since(t0); r.hooks.ProgressLog && d >= progressLogEvery {
			// Batch logs hear of every long phase, not only the solver's.
			r.log.Info("stage done", "stage", st.name, "seconds", d.Seconds(), "elapsed", time.Since(r.start).Round(time.Second).String())
		} else {
			r.log.Debug("stage done", "stage", st.name, "seconds", d.Seconds())
		}
	}
	return r.outcome(), nil
}

// runner holds a release's state from stage to stage.
type runner struct {
	ctx   context.Context
	cfg   *Config
	hooks *Hooks
	log   *slog.Logger
	start time.Time

	// Public.
	dom        *universe.Domain
	wl         *query.Workload
	wlDesc     string
	solverName string
	stages     []eval.Stage // the stages done, with their wall times
	setting    solvers.Setting
	solver     solvers.Solver
	ledger     *privacy.Ledger
	shape      solvers.Shape
	plan0      *solvers.Plan
	plan1      *solvers.Plan // the plan with n where n is public
	est        *Estimate
	rnd        *privacy.Rand
	od         *OutDir
	// The table's lifetime budget and this release's entry in it.
	lifetime    *ledger.Ledger
	reservation *ledger.Reservation
	readStarted bool

	// Private.
	counts, holdout *universe.Counts // nil when a source serves only marginal tables
	// allCounts are every row as read, before the privacy unit's bound (nil
	// without a unit): the internal report's truth.
	allCounts *universe.Counts
	allN      int64
	unbounded solvers.Data // a database source without the bound (internal report)
	data      solvers.Data // the marginal tables: counts, or a database
	closeData func() error
	internal  []string // messages for the operator only
	warnings  []string
	n         int64
	op        *query.Operator // explicit model only
	truth     []float64
	res       *solvers.Result

	// Output.
	rows       int64
	synthAns   []float64
	distAns    []float64
	synthOne   *OneWay
	manJSON    []byte
	man        *Manifest
	metrics    *eval.Metrics
	kept       *eval.Metrics // with a unit: against the kept rows
	keptL1     float64
	reportJSON []byte
	reportHTML []byte

	// Progress of the stages, read by the heartbeat.
	lastProgress atomic.Pointer[solvers.Progress]
	rowsWritten  atomic.Int64
	writeStart   atomic.Pointer[time.Time]
}

func (r *runner) close() {
	r.settleReservation()
	if r.closeData != nil {
		r.closeData()
	}
	if r.od != nil {
		r.od.Abort()
	}
	if r.op != nil {
		r.op.Close()
	}
	if r.res != nil && r.res.Model != nil {
		r.res.Model.Close()
	}
}

// plan checks the settings and the public inputs, chooses the model,
// estimates the memory and checks the plan against the budget: no private
// input is read.
func (r *runner) plan() error {
	cfg := r.cfg
	if err := cfg.check(); err != nil {
		return err
	}
	budget := privacy.Budget{Eps: cfg.Epsilon, Delta: cfg.Delta}
	if err := budget.Validate(); err != nil {
		return &ConfigError{Msg: err.Error()}
	}
	dom, err := universe.LoadDomain(cfg.Domain)
	if err != nil {
		return err
	}
	if dom, err = cfg.Inputs.domain(dom); err != nil {
		return err
	}
	r.dom = dom
	if _, ok := dom.Index(cfg.PrivacyUnit); ok && cfg.PrivacyUnit != "" {
		return configErrorf("--privacy-unit %s is an attribute of the domain: a unit's identifier is read, never released; leave it out of the domain (or give --exclude-columns %s)", cfg.PrivacyUnit, cfg.PrivacyUnit)
	}
	if r.wl, r.wlDesc, err = loadWorkload(cfg.workloadSpec(), dom); err != nil {
		return err
	}
	r.solverName = cfg.Solver
	if r.solverName == "" {
		r.solverName = "project"
	}
	if r.setting, err = solvers.ParseSetting(cfg.Setting); err != nil {
		return &ConfigError{Msg: err.Error()}
	}
	if r.solver, err = solvers.New(r.solverName, r.setting); err != nil {
		return &ConfigError{Msg: err.Error()}
	}
	if r.ledger, err = privacy.NewLedger(budget, &privacy.LedgerSettings{Conversion: cfg.Conversion, Neighbours: cfg.neighbourText()}); err != nil {
		return &ConfigError{Msg: err.Error()}
	}
	acct, err := cfg.accounting()
	if err != nil {
		return err
	}
	r.shape = solvers.Shape{Budget: budget, Conversion: cfg.Conversion, Accounting: acct, Neighbours: cfg.Neighbours, UnitRows: cfg.unitRows(),
		Workload: r.wl, MaxModelBytes: cfg.MaxModelBytes}
	if r.est, err = Route(cfg, dom, r.wl, r.solverName); err != nil {
		return err
	}
	r.shape.Model = r.est.Model
	r.plan0, err = r.solver.Plan(&r.shape)
	if err != nil {
		// A pure budget (δ = 0) that the solver's mechanisms cannot meet is
		// the ledger's refusal (exit 77), whatever else the solver says.
		if budget.Delta == 0 {
			if refusal := pureRefusal(r.solver, &r.shape, r.ledger); refusal != nil {
				return refusal
			}
		}
		if errors.Is(err, solvers.ErrUnsupported) {
			return &ConfigError{Msg: err.Error()}
		}
		return err
	}
	r.est.addPlan(r.plan0)
	if err := r.est.check(cfg); err != nil {
		return err
	}
	if err := r.ledger.Check(r.plan0.Charges...); err != nil {
		return err
	}
	r.warnings = append(r.warnings, BudgetWarnings(cfg.Epsilon, cfg.Delta)...)
	r.log.Debug("budget checked", "model", r.est.Model.String(), "peak_memory", fmtBytes(r.est.PeakBytes), "epsilon", cfg.Epsilon, "delta", cfg.Delta,
		"solver", r.solverName, "setting", r.setting.String(), "charges", len(r.plan0.Charges))
	return nil
}

func (r *runner) randomness() error {
	if r.cfg.Seed != nil {
		r.rnd = privacy.NewSeeded(*r.cfg.Seed)
		r.log.Debug("seeded run: " + r.rnd.Describe())
		return nil
	}
	var err error
	r.rnd, err = privacy.NewSecure()
	return err
}

func (r *runner) openOut() error {
	od, err := CreateOutDir(r.ctx, r.cfg.Out, &OutDirSettings{Force: r.cfg.Force, Files: r.cfg.Output.Files()})
	if err != nil {
		return err
	}
	r.od = od
	if st := od.Stale(); len(st) > 0 {
		r.log.Warn("removed temporary files left in the output folder by an interrupted release", "files", strings.Join(st, ", "))
	}
	return nil
}

// read reads the private data: a file into counts (and the holdout), or a
// database or count file as marginal tables.
func (r *runner) read() error {
	cfg := r.cfg
	r.readStarted = true
	switch {
	case cfg.Source != "":
		return r.readSource()
	case cfg.MarginalCounts != "":
		return r.readMarginalCounts()
	}
	r.log.Debug("reading data", "file", cfg.Data)
	opts := cfg.Inputs.options(cfg.DataFormat, cfg.CountColumn, cfg.Policy)
	r.unitOptions(&opts)
	counts, stats, err := ingest.ReadFile(r.ctx, cfg.Data, r.dom, opts)
	if err != nil {
		return err
	}
	r.unitStats(stats)
	if counts.Total() == 0 {
		return &DataError{File: cfg.Data, Msg: "no records to release (every count is zero)"}
	}
	// Repair counts are exact statistics of the private data: they go to
	// the operator (stderr) and the internal report, never to a public file.
	for _, msg := range repairMessages(stats.Repairs) {
		r.tellInternal(msg)
	}
	r.counts = counts
	if cfg.Holdout > 0 {
		if r.counts, r.holdout, err = splitHoldout(counts, cfg.Holdout, r.rnd); err != nil {
			return err
		}
		if r.counts.Total() == 0 {
			return &DataError{File: cfg.Data, Msg: fmt.Sprintf("no records left to release after holding out %.0f%%", 100*cfg.Holdout)}
		}
		r.log.Debug("held out records", "holdout", r.holdout.Total(), "release", r.counts.Total())
	}
	r.data = r.counts
	r.n = r.counts.Total()
	r.log.Debug("data read", "records", counts.Total(), "distinct_cells", stats.Distinct)
	return nil
}

// readSource counts in a database: the marginal tables the project solver
// asks for, or the histogram for the solvers that need it (needsHistogram;
// on the explicit model at most one row per universe cell, which the memory
// estimate covers).
func (r *runner) readSource() error {
	cfg := r.cfg
	r.log.Debug("opening the data source", "source", sqlsrc.RedactDSN(cfg.Source))
	src, err := sqlsrc.Open(r.ctx, cfg.Source, r.dom, &sqlsrc.Options{Table: cfg.Table, Query: cfg.Query, Policy: cfg.Policy, Unit: r.sqlUnit(), ShowValues: cfg.Inputs.ShowValues})
	if err != nil {
		return err
	}
	r.closeData = src.Close
	rep, err := src.Check(r.ctx)
	if err != nil {
		return err
	}
	for _, c := range rep.Columns {
		if c.Repaired > 0 {
			r.internalf("%d values of %q repaired by the policy (--clamp / --unknown-to-other; internal, not DP, not written to the manifest)", c.Repaired, c.Column)
		}
	}
	if rep.Rows == 0 {
		return &DataError{File: sqlsrc.RedactDSN(cfg.Source), Msg: "no records to release (the table or query is empty)"}
	}
	r.n = rep.Rows
	if r.needsHistogram() {
		if r.counts, err = src.Histogram(r.ctx); err != nil {
			return err
		}
		r.data = r.counts
	} else {
		r.data = newCachedData(src)
	}
	if err := r.sqlUnitStats(src, rep.Rows); err != nil {
		return err
	}
	r.log.Debug("data counted in the source", "records", r.n)
	return nil
}

// needsHistogram reports whether the solver needs the whole histogram: the
// solvers other than project (whose iterations read every record's cell),
// and project when the workload has families other than marginals (their
// answers come from the records). On the explicit model the histogram has at
// most one row per universe cell.
func (r *runner) needsHistogram() bool {
	if r.solverName != "project" {
		return true
	}
	for _, f := range r.wl.Families() {
		if f.Kind != query.Marginals {
			return true
		}
	}
	return false
}

// readMarginalCounts reads a file of marginal count tables.
func (r *runner) readMarginalCounts() error {
	mc, err := sqlsrc.ReadMarginalCounts(r.cfg.MarginalCounts, r.dom)
	if err != nil {
		return err
	}
	if r.solverName != "project" {
		return configErrorf("--marginal-counts: %s needs the records or the full histogram; the project solver (the default) runs on marginal counts", r.solverName)
	}
	if mc.N() == 0 {
		return &DataError{File: r.cfg.MarginalCounts, Msg: "no records to release (every count is zero)"}
	}
	r.data, r.n = newCachedData(mc), mc.N()
	return nil
}

// cachedData remembers the tables a source served, so that the solver's
// candidates, the workload's true answers and the one-way tables cost one
// round of queries.
type cachedData struct {
	src    solvers.Data
	tables map[string][]int64
}

func newCachedData(src solvers.Data) *cachedData {
	return &cachedData{src: src, tables: map[string][]int64{}}
}

func (c *cachedData) Marginals(ctx context.Context, sets [][]int) ([][]int64, error) {
	var missing [][]int
	for _, s := range sets {
		if _, ok := c.tables[fmt.Sprint(s)]; !ok {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		tabs, err := c.src.Marginals(ctx, missing)
		if err != nil {
			return nil, err
		}
		for i, s := range missing {
			c.tables[fmt.Sprint(s)] = tabs[i]
		}
	}
	out := make([][]int64, len(sets))
	for i, s := range sets {
		out[i] = c.tables[fmt.Sprint(s)]
	}
	return out, nil
}

func (r *runner) internalf(format string, args ...any) {
	r.tellInternal(fmt.Sprintf(format, args...))
}

// tellInternal sends a statistic of the private data to the operator only
// (Hooks.Internal, or the log) and keeps it for the internal report.
func (r *runner) tellInternal(msg string) {
	r.internal = append(r.internal, msg)
	if r.hooks.Internal != nil {
		r.hooks.Internal(msg)
	} else {
		r.log.Warn(msg)
	}
}

// solve plans again with n where it is public (the cost must not change)
// and runs the solver.
func (r *runner) solve() error {
	r.shape.N = int(r.n)
	planShape := r.shape
	if r.cfg.Neighbours == solvers.AddRemove {
		// n is private: the plan never sees it (the solver gets it in the
		// Problem, for its private steps only).
		planShape.N = 0
	}
	plan, err := r.solver.Plan(&planShape)
	if err != nil {
		return err
	}
	if !sameCost(r.plan0, plan) {
		return fmt.Errorf("release: internal error: the plan's cost changed once n was known (ρ %v vs %v)", r.plan0.Total(), plan.Total())
	}
	r.plan1 = plan
	if err := r.checkRecordMemory(); err != nil {
		return err
	}
	// The workload's answers on the data, for the report and for solvers
	// that read them. A solve that reads every workload table from the data
	// source gets a source that keeps them, and the answers are taken from
	// those tables after it (no second count: on full ADULT that count,
	// beside the solve, cost its first stage a fifth of a second); else,
	// when the solve does not read the answers, they are counted beside it
	// (the same memory: they are held during the solve either way).
	data := r.data
	fromTables := plan.ReadsWorkloadTables
	if fromTables && r.counts != nil {
		data = newCachedData(r.counts)
	}
	beside := r.counts != nil && plan.AnswersUnused && !fromTables
	count := func() []float64 { return r.wl.AnswerCounts(r.counts, make([]float64, r.wl.M())) }
	switch {
	case r.counts != nil && !plan.AnswersUnused:
		r.truth = count()
	case r.counts == nil && r.est.Model == solvers.Explicit:
		if r.truth, err = answersFromData(r.ctx, r.wl, r.data, r.n); err != nil {
			return err
		}
	}
	prob := &solvers.Problem{Shape: r.shape, Counts: r.counts, Data: data, Answers: r.truth,
		Rand: r.rnd, Ledger: r.ledger, Progress: r.progress()}
	if r.est.Model == solvers.Explicit {
		if r.op, err = r.wl.Compile(&query.CompileSettings{MemoryCap: r.cfg.memoryCap()}); err != nil {
			return err
		}
		prob.Op = r.op
	}
	var counted chan []float64
	if beside {
		counted = make(chan []float64, 1)
		go func() { counted <- count() }()
	}
	r.log.Debug("solving", "solver", r.solverName, "model", r.est.Model.String(), "iterations", plan.Iterations)
	r.res, err = r.solver.Solve(r.ctx, prob)
	if counted != nil {
		r.truth = <-counted
	}
	if err != nil {
		return err
	}
	if r.truth == nil {
		// The factored solver asked for its tables first; the workload's are
		// among them (cached).
		if r.truth, err = answersFromData(r.ctx, r.wl, data, r.n); err != nil {
			return err
		}
	}
	r.warnings = append(r.warnings, r.res.Plan.Warnings...)
	r.warnings = append(r.warnings, r.sizeWarnings()...)
	r.rows = r.cfg.Rows
	if r.rows == 0 {
		r.rows = r.n
		if r.cfg.Neighbours == solvers.AddRemove {
			r.rows = max(int64(math.Round(r.res.Plan.Params["n_estimate"])), 1)
		}
	}
	if r.est.Model == solvers.Explicit && r.rows > math.MaxUint32 {
		return configErrorf("--rows %d: at most %d rows per release on the explicit model", r.rows, uint64(math.MaxUint32))
	}
	return r.checkRowsMemory()
}

// checkRowsMemory refuses an explicit release whose rows, held while drawn,
// would take its estimate over the memory cap: a --rows too large, or the
// default, the noisy record count n̂, which a small budget can put far
// above n (its comparison with the cap is post-processing). The factored
// model streams its rows.
func (r *runner) checkRowsMemory() error {
	hint := "give fewer --rows"
	if r.cfg.Rows == 0 {
		hint = fmt.Sprintf("the default is the noisy record count n̂ = %d (standard error %.3g), far above what this budget resolves; give --rows",
			r.rows, r.res.Plan.Params["n_estimate_se"])
	}
	return r.est.checkRows(r.cfg, r.rows, hint, true)
}

// checkRecordMemory refuses, before any private step, an smd release whose
// per-record tables would not fit the memory cap beside the estimate: smd
// keeps, for every distinct record, its entry in each marginal set (12
// bytes each, plus 8), and one batch slot per record (8 bytes). The number
// of distinct records is known only once the data is read; the refusal is
// an error, nothing is released.
func (r *runner) checkRecordMemory() error {
	if r.solverName != "smd" || r.counts == nil {
		return nil
	}
	need := float64(r.counts.Distinct())*(12*float64(len(r.wl.Marginals()))+8) + 8*float64(r.n)
	if total := need + float64(r.est.PeakBytes); total > float64(r.cfg.memoryCap()) {
		return &MemoryError{What: fmt.Sprintf("smd's per-record tables (%s distinct records × %d marginal sets) with the rest of the release", universe.FormatCount(big.NewInt(int64(r.counts.Distinct()))), len(r.wl.Marginals())),
			Need: satMul(total, 1), Cap: r.cfg.memoryCap(), Flag: "--memory-cap", Hint: "ask for fewer marginals, coarsen attributes, raise --memory-cap, or use the project solver (it reads only marginal tables)"}
	}
	return nil
}

// progress returns the solver's progress hook: the caller's, and log lines
// with an estimate of the time left when the caller logs.
func (r *runner) progress() func(solvers.Progress) {
	return func(p solvers.Progress) {
		if r.hooks.Progress != nil {
			r.hooks.Progress(p)
		}
		r.lastProgress.Store(&p)
	}
}

// progressLogEvery spaces the progress log lines of long phases.
var progressLogEvery = 10 * time.Second

// stageHook, when set (by tests), runs at the start of every stage.
var stageHook func(stage string)

// heartbeat logs, with Hooks.ProgressLog, a line every progressLogEvery
// while the stage runs, so that a batch log never goes quiet for longer:
// the stage, how long it and the release have run, and what the stage
// knows of its advance (the solver's iteration and an estimate of the time
// left, the rows written). It returns the function that stops it.
func (r *runner) heartbeat(stage string, t0 time.Time) func() {
	if !r.hooks.ProgressLog {
		return func() {}
	}
	return Heartbeat(progressLogEvery, func() {
		args := []any{"stage", stage, "stage_elapsed", time.Since(t0).Round(time.Second).String(),
			"elapsed", time.Since(r.start).Round(time.Second).String()}
		args = append(args, r.advance(stage)...)
		r.log.Info("working", args...)
	})
}

// Heartbeat calls tick every interval, from its own goroutine, until the
// returned stop is called; stop returns once no tick runs any more.
func Heartbeat(every time.Duration, tick func()) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				tick()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// advance is what a stage knows of its progress, as log attributes.
func (r *runner) advance(stage string) []any {
	switch stage {
	case "solve":
		p := r.lastProgress.Load()
		if p == nil {
			return []any{"step", "setting up (no iteration yet)"}
		}
		args := []any{"iteration", p.Iter, "of", p.Total}
		if p.Iter > 0 && p.Total >= p.Iter {
			eta := time.Duration(float64(p.Elapsed) * float64(p.Total-p.Iter) / float64(p.Iter))
			args = append(args, "eta", eta.Round(time.Second).String())
		}
		return args
	case "write rows":
		w := r.rowsWritten.Load()
		args := []any{"rows_written", w, "of", r.rows}
		if el := r.writeStart.Load(); w > 0 && el != nil {
			d := time.Since(*el)
			args = append(args, "eta", time.Duration(float64(d)*float64(r.rows-w)/float64(w)).Round(time.Second).String())
		}
		return args
	}
	return nil
}

// manifest builds the manifest (it goes into the synthetic file's
// metadata, so it comes before the rows).
// timeValues is the value rule of date and timestamp bins, or "" when the
// domain has none.
func (r *runner) timeValues() string {
	for _, a := range r.dom.Attrs() {
		if a.Kind == universe.Date || a.Kind == universe.Timestamp {
			return r.cfg.Values.Time.String()
		}
	}
	return ""
}

func (r *runner) manifest() error {
	cfg := r.cfg
	spent := r.ledger.Spent()
	sampling := cfg.Sampling.String()
	if r.est.Model == solvers.Factored {
		sampling = r.factoredSampling().String() + " (along the junction tree)"
	}
	man := &Manifest{
		Schema:  ManifestSchema,
		Tool:    ToolInfo{Name: "synth", Version: cfg.Version, Commit: cfg.Commit},
		Started: Timestamp(r.start),
		Solver:  SolverInfo{Name: r.solverName, Setting: r.setting.String(), Iterations: r.res.Plan.Iterations, Model: r.est.Model.String()},
		Privacy: PrivacyInfo{
			Neighbouring: cfg.neighbourText(),
			Relation:     cfg.Neighbours.Flag(),
			Unit:         cfg.unitInfo(),
			Accounting:   accounting(r.ledger),
			Budget:       Budget{Epsilon: cfg.Epsilon, Delta: cfg.Delta},
			Total:        Total{Epsilon: spent.Eps, Delta: spent.Delta},
		},
		Output: OutputInfo{
			Rows: r.rows, Sampling: sampling,
			IntegerValues: cfg.Values.Integer.String(), NumericValues: cfg.Values.Numeric.String(),
			TimeValues: r.timeValues(),
			Format:     cfg.Output.Format.String(), Files: cfg.Output.Files(),
		},
		Warnings: r.warnings,
	}
	man.Solver.Cliques = r.cliqueNames()
	if spent.Rho > 0 {
		rho := spent.Rho
		man.Privacy.Total.Rho = &rho
	}
	man.Privacy.Charges = manifestCharges(r.ledger.Charges())
	if r.rnd.Secure() {
		man.Randomness = SecureRandomness()
	} else {
		man.Randomness = SeededRandomness()
	}
	for _, in := range []struct{ role, path, name string }{{"domain", cfg.Domain, cfg.DomainName}, {"workload", cfg.Workload, ""}, {"config", cfg.ConfigFile, ""}} {
		if in.path == "" {
			continue
		}
		h, err := HashFile(in.path)
		if err != nil {
			return err
		}
		if in.name == "" {
			in.name = in.path
		}
		man.Inputs = append(man.Inputs, InputFile{Role: in.role, Path: in.name, SHA256: h})
	}
	man.Finished = Timestamp(time.Now())
	var err error
	if r.manJSON, err = man.JSON(); err != nil {
		return err
	}
	r.man = man
	return nil
}

// factoredSampling is the model's sampling method for --sampling: iid and
// systematic as named; balanced (the default) is Stratified, controlled
// rounding that also keeps the marginals spanning cliques close to the
// model's.
func (r *runner) factoredSampling() model.SampleMethod {
	switch r.cfg.Sampling {
	case IID:
		return model.IID
	case Systematic:
		return model.Systematic
	}
	return model.Stratified
}

// writeRows samples the rows, writes the synthetic file and computes the
// workload's answers on the rows (and on D).
func (r *runner) writeRows() error {
	cfg := r.cfg
	dec, err := NewDecoder(r.dom, &cfg.Values, r.rnd)
	if err != nil {
		return err
	}
	r.synthOne = NewOneWay(r.dom)
	r.log.Debug("writing", "dir", r.od.Dir(), "rows", r.rows)
	if r.est.Model == solvers.Factored {
		tally := r.wl.NewTally()
		err := cfg.Output.WriteSyntheticRows(r.ctx, r.od, r.dom, dec, r.manJSON, func(rw RowWriter) error {
			rw = TeeRows(rw, r.synthOne)
			now := time.Now()
			r.writeStart.Store(&now)
			emit := func(rows []int32) error {
				r.rowsWritten.Add(int64(len(rows)))
				tally.AddRows(rows)
				return rw.WriteRows(r.ctx, rows)
			}
			if mx := r.res.Mixture; mx != nil {
				return sampleMixture(r.ctx, mx, r.rows, r.factoredSampling(), r.rnd, emit)
			}
			return r.res.Model.Sample(r.ctx, r.rows, r.factoredSampling(), r.rnd, 0, emit)
		})
		if err != nil {
			return err
		}
		// The tally's own vector becomes the answers: no second one.
		r.synthAns = tally.TakeAnswers()
		if r.wl.M() <= maxDistributionQueries {
			if mx := r.res.Mixture; mx != nil {
				r.distAns = make([]float64, r.wl.M())
				if mx.Answers(r.distAns) != nil {
					r.distAns = nil
				}
			} else {
				r.distAns = factoredAnswers(r.res.Model, r.wl)
			}
		}
		return nil
	}
	cells, err := Sample(nil, r.res.D, r.rows, cfg.Sampling, r.rnd)
	if err != nil {
		return err
	}
	if cfg.Sampling == Balanced {
		var bs BalanceStats
		if cells, bs, err = Balance(cells, r.res.D, r.rows, r.op, MarginalTouch(r.wl), balanceRounds); err != nil {
			return err
		}
		r.log.Debug("balanced the rows", "rounds", bs.Rounds, "moves", bs.Moves, "rms_before", bs.Before, "rms_after", bs.After)
	}
	r.synthOne.AddCells(cells)
	rowCells := Rows(nil, cells, r.rnd)
	if err := cfg.Output.WriteSynthetic(r.ctx, r.od, r.dom, rowCells, dec, r.manJSON); err != nil {
		return err
	}
	r.synthAns = make([]float64, r.wl.M())
	r.op.Answer(Histogram(cells, make([]float64, r.op.K())), r.synthAns)
	r.distAns = make([]float64, r.wl.M())
	r.op.Answer(r.res.D, r.distAns)
	return nil
}

// report scores the rows (internal report) or states the a-priori bounds
// (public report).
func (r *runner) report() error {
	cfg := r.cfg
	title := cfg.Title
	if title == "" {
		name := cfg.DataName
		switch {
		case name != "":
		case cfg.Source != "" && cfg.Table != "":
			name = cfg.Table
		case cfg.Source != "":
			name = "query"
		case cfg.MarginalCounts != "":
			name = filepath.Base(cfg.MarginalCounts)
		default:
			name = filepath.Base(cfg.Data)
		}
		title = name + ", " + r.wlDesc
	}
	solverLabel := fmt.Sprintf("%s (%s, %s model)", r.solverName, r.setting, r.est.Model)
	var html strings.Builder
	if cfg.PublicReport {
		pr, err := eval.Public(&eval.PublicInput{
			Workload: r.wl, Bounds: publicBounds(r.res.Bounds), Epsilon: cfg.Epsilon, Delta: cfg.Delta,
			Rows: r.rows, Title: title, Solver: solverLabel,
			// Public facts only (plan0 was made before the data).
			Rho: privacyFacts(cfg, r.ledger).Rho, Neighbours: cfg.neighbourText(), Accounting: accounting(r.ledger),
			SolverParams: publicParams(cfg, r.setting.String(), r.plan0, r.plan1),
			Note:         "A-priori bounds from the noise scales only: no statistic of the data appears here.",
		})
		if err != nil {
			return err
		}
		if r.reportJSON, err = pr.JSON(); err != nil {
			return err
		}
		if err := pr.WriteHTML(&html); err != nil {
			return err
		}
		r.reportHTML = []byte(html.String())
		return nil
	}
	truth, truthOne, dataRows, err := r.reportTruth()
	if err != nil {
		return err
	}
	in := &eval.Input{
		Workload: r.wl, True: truth, Synthetic: r.synthAns, Distribution: r.distAns,
		DataRows: dataRows, SyntheticRows: r.rows, Title: title, Solver: solverLabel,
		RunTime: time.Since(r.start), Stages: r.stages, Estimate: r.timeEstimate(),
		Privacy: privacyFacts(cfg, r.ledger), SolverParams: r.withCliques(solverParams(r.setting.String(), r.res.Plan.Params)),
		OneWay: OneWayDists(truthOne, r.synthOne),
	}
	if len(r.internal) > 0 {
		in.Note = "About the private data (internal, not DP): " + strings.Join(r.internal, "; ") + "."
	}
	if r.holdout != nil {
		in.Holdout = r.wl.AnswerCounts(r.holdout, make([]float64, r.wl.M()))
		in.HoldoutRows = r.holdout.Total()
	}
	for _, st := range r.res.Trace {
		obj := st.MaxError
		if math.IsNaN(obj) {
			obj = st.Objective
		}
		if !math.IsNaN(obj) && !math.IsInf(obj, 0) {
			in.Trace = append(in.Trace, eval.TracePoint{Iteration: st.Iter, Objective: obj, Elapsed: st.Elapsed})
		}
	}
	rep, err := eval.Evaluate(in)
	if err != nil {
		return err
	}
	m := rep.Errors.Synthetic
	r.metrics = &m
	r.keptErrors()
	if r.reportJSON, err = rep.JSON(); err != nil {
		return err
	}
	if err := rep.WriteHTML(&html); err != nil {
		return err
	}
	r.reportHTML = []byte(html.String())
	return nil
}

// commit writes the reports and the manifest (last) and commits the folder.
func (r *runner) commit() error {
	mode := os.FileMode(0o600)
	if r.cfg.PublicReport {
		mode = 0o644
	}
	if err := r.od.Write(r.ctx, ReportJSONFile, mode, writeBytes(r.reportJSON)); err != nil {
		return err
	}
	if err := r.od.Write(r.ctx, ReportHTMLFile, mode, writeBytes(r.reportHTML)); err != nil {
		return err
	}
	if err := r.od.Write(r.ctx, ManifestFile, 0o644, writeBytes(r.manJSON)); err != nil {
		return err
	}
	if err := r.od.Commit(r.ctx); err != nil {
		return err
	}
	r.completeReservation()
	return nil
}

func (r *runner) outcome() *Outcome {
	spent := r.ledger.Spent()
	out := &Outcome{
		Dir: r.od.Dir(), Files: r.man.Output.Files, Rows: r.rows, Records: r.recordsRead(),
		RecordsKept: r.keptRows(),
		Solver:      r.solverName, Setting: r.setting.String(), Model: r.est.Model.String(),
		Epsilon: r.cfg.Epsilon, Delta: r.cfg.Delta,
		Spent: spent.Eps, Rho: spent.Rho, Randomness: r.man.Randomness.Source, Errors: r.metrics,
		KeptErrors: r.kept, KeptMarginalL1: r.keptL1,
		Warnings: r.warnings, Seconds: time.Since(r.start).Seconds(),
		RecordsPrivate: r.cfg.Neighbours == solvers.AddRemove,
		Relation:       r.cfg.Neighbours.Flag(), Unit: UnitText(r.cfg.PrivacyUnit, r.cfg.unitRows()),
	}
	if r.holdout != nil {
		out.Holdout = r.holdout.Total()
	}
	return out
}

// cliqueNames names the factored model's cliques' attributes.
func (r *runner) cliqueNames() [][]string {
	var out [][]string
	for _, c := range r.res.Cliques {
		names := make([]string, len(c))
		for i, a := range c {
			names[i] = r.dom.Attr(a).Name
		}
		out = append(out, names)
	}
	return out
}

// withCliques adds the factored model's cliques to the report's solver
// parameters (the manifest has them too).
func (r *runner) withCliques(ps []eval.Param) []eval.Param {
	if len(r.res.Cliques) == 0 {
		return ps
	}
	parts := make([]string, len(r.res.Cliques))
	for i, names := range r.cliqueNames() {
		parts[i] = "{" + strings.Join(names, ", ") + "}"
	}
	return append(ps, eval.Param{Name: "model cliques", Value: strings.Join(parts, " ")})
}

// answersFromData answers a workload of marginal families from the data's
// marginal tables: a source that serves no records, or the tables the
// solve read (kept by a cachedData).
func answersFromData(ctx context.Context, wl *query.Workload, data solvers.Data, n int64) ([]float64, error) {
	for _, f := range wl.Families() {
		if f.Kind != query.Marginals {
			return nil, configErrorf("workload family %s is not a marginal family: it needs the records (a data file), not marginal counts", f.Description)
		}
	}
	sets := make([][]int, len(wl.Marginals()))
	for i, m := range wl.Marginals() {
		sets[i] = m.Attrs
	}
	tabs, err := data.Marginals(ctx, sets)
	if err != nil {
		return nil, err
	}
	return wl.AnswerTables(tabs, n, make([]float64, wl.M())), nil
}

// maxDistributionQueries bounds the workloads whose answers on a factored
// model's distribution (before sampling) the internal report shows: beyond
// it the marginals that span cliques cost seconds of elimination and the
// answers a vector of m floats (full ADULT, all 3-way marginals: m = 2.1·10^7),
// so the report shows the rows' errors only.
const maxDistributionQueries = 1 << 20

// sampleMixture draws n rows from an equal-weight mixture: component t
// gets ⌊(t+1)·n/K + u⌋ − ⌊t·n/K + u⌋ rows (K components, u uniform on
// [0, 1): systematic rounding, so each gets ⌊n/K⌋ or ⌈n/K⌉ and n/K in
// expectation), each drawn along its junction tree. Beyond one component's
// rows, their order follows the components (as Model.Sample's follows the
// tree beyond its window). Post-processing: no budget.
func sampleMixture(ctx context.Context, mx *solvers.Mixture, n int64, method model.SampleMethod, r Rand, emit func([]int32) error) error {
	k := float64(mx.Len())
	u := r.Float64()
	prev := int64(0)
	for t := range mx.Len() {
		next := int64(math.Floor(float64(t+1)*float64(n)/k + u))
		if t == mx.Len()-1 {
			next = n
		}
		if c := next - prev; c > 0 {
			if err := mx.Component(t).Sample(ctx, c, method, r, 0, emit); err != nil {
				return err
			}
		}
		prev = next
	}
	return nil
}

// factoredAnswers answers the workload's marginals from the model (nil if
// some marginal spans cliques beyond the elimination cap).
func factoredAnswers(m *model.Model, wl *query.Workload) []float64 {
	out := make([]float64, wl.M())
	ms := wl.Marginals()
	sets, outs := make([][]int, len(ms)), make([][]float64, len(ms))
	for i, s := range ms {
		sets[i], outs[i] = s.Attrs, out[s.Offset:s.Offset+s.Cells]
	}
	// One batch: the sets share the carries and conditionals, on every
	// core (the same bits as one Marginal per set).
	if err := m.Marginals(sets, outs); err != nil {
		return nil
	}
	for j := range out {
		out[j] *= wl.Weight(j)
	}
	return out
}

// timeInputs are the time model's inputs for this release, with n records
// and where n came from.
func (r *runner) timeInputs(n float64, from string) timeInputs {
	return timeInputs{solver: r.solverName, model: r.est.Model, plan: r.plan0, dom: r.dom, wl: r.wl,
		epsilon: r.cfg.Epsilon, records: n, recordsFrom: from}
}

// timeEstimate is the time model's estimate of this release, made from its
// public plan and the number of records read, for the report to show
// beside the stages' actual times; nil when the model gives none.
func (r *runner) timeEstimate() *eval.TimeEstimate {
	if r.est == nil || r.plan0 == nil {
		return nil
	}
	t := estimateTime(r.timeInputs(float64(r.n), fmt.Sprintf("n = %d records read", r.n)))
	if t.Seconds <= 0 {
		return nil
	}
	e := &eval.TimeEstimate{ReleaseSeconds: t.Seconds, SolveSeconds: t.Solve, Low: t.Low, High: t.High, Method: t.Method}
	for _, s := range t.Stages {
		e.Stages = append(e.Stages, eval.Stage{Name: s.Name, Seconds: s.Seconds})
	}
	return e
}
