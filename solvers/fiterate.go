package solvers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// The seeds' selection-based solvers (MWEM, DPFW, SMD) on the factored
// model. Their iterates are log-linear over the queries they have selected:
// DPFW's D_t = softmax(q_t/α) with q_t a combination of signed vertices,
// SMD's x^t = softmax(a) with a a sum of drawn vertices, and MWEM's fit a
// model whose potentials live on the measured cells. A workload query j of
// a marginal family is one cell of its marginal's attribute set, so the
// iterate is θ = Σ_S θ_S(x_S) over the sets S touched so far: a junction
// tree on those sets holds it, and its cost follows the selected sets, not
// the universe.
//
// Privacy (the cap filter): a query whose attribute set would take the
// junction tree over the model cap (Shape.MaxModelBytes), or whose marginal
// spans cliques beyond the model's elimination cap (*model.MarginalsError),
// is left out of that round's private selection: the selection runs over
// the other queries' scores only. Which queries are left out depends on the
// sets selected in earlier rounds (public: outputs of the earlier private
// selections), the domain and the caps, never on the data, so each
// selection is the exponential mechanism (or report-noisy-max) over a
// public candidate set, with the same sensitivity and cost as over all of
// them.

// factoredFamilies refuses workloads with families other than marginals on
// the factored model.
func factoredFamilies(w *query.Workload, solver string) error {
	for _, fam := range w.Families() {
		if fam.Kind != query.Marginals {
			return fmt.Errorf("%s on the factored model: workload family %s is not a marginal family; ranges, prefixes and predicates need --model explicit: %w", solver, fam.Description, ErrUnsupported)
		}
	}
	return nil
}

// fWork is the workload as the factored seed solvers see it: its distinct
// marginal attribute sets, the model's answers ⟨q_j, D⟩ to every query
// (batched Marginals into buffers owned here) and the cap filter.
type fWork struct {
	sizes []int
	wl    *query.Workload
	margs []query.Marginal
	sets  [][]int // distinct attribute sets, in first-seen order
	setOf []int   // marginal i → its distinct set
	first []int   // distinct set → its first marginal
	outs  [][]float64
	ans   []float64 // ⟨q_j, D⟩, len m
	avail []bool    // distinct set answered by the last answer call

	// The cap filter.
	capB       uint64
	selectable []bool     // distinct set: in this round's selection
	trees      *treeSizes // tree bytes with each distinct set added to the touched ones
	scratch    [][]int
	runs       []int // marginals of the last pick's selectable sets
}

func newFWork(sh *Shape) *fWork {
	wl := sh.Workload
	f := &fWork{sizes: wl.Domain().Sizes(), wl: wl, margs: wl.Marginals(), ans: make([]float64, wl.M()), capB: sh.maxModelBytes()}
	f.setOf = make([]int, len(f.margs))
	for i, mg := range f.margs {
		d := -1
		for k, s := range f.sets {
			if slices.Equal(s, mg.Attrs) {
				d = k
				break
			}
		}
		if d < 0 {
			d = len(f.sets)
			f.sets = append(f.sets, mg.Attrs)
			f.first = append(f.first, i)
			f.outs = append(f.outs, f.ans[mg.Offset:mg.Offset+mg.Cells])
		}
		f.setOf[i] = d
	}
	nd := len(f.sets)
	f.avail = make([]bool, nd)
	f.selectable = make([]bool, nd)
	f.trees = newTreeSizes(f.sizes, nd)
	f.runs = make([]int, 0, len(f.margs))
	return f
}

// query returns the distinct set and the cell of workload query j, and its
// weight (q_j is weight × the indicator of that cell).
func (f *fWork) query(j int) (d, cell int, weight float64) {
	i := f.wl.MarginalOf(j)
	mg := f.margs[i]
	return f.setOf[i], j - mg.Offset, mg.Weight
}

// answer writes the model's answers to every query into f.ans and marks the
// sets it could answer in f.avail (a set whose marginal spans cliques
// beyond the elimination cap is not answered; its answers are stale).
func (f *fWork) answer(m *model.Model) error {
	for d := range f.avail {
		f.avail[d] = true
	}
	if err := m.Marginals(f.sets, f.outs); err != nil {
		var me *model.MarginalsError
		if !errors.As(err, &me) {
			return err
		}
		for _, d := range me.Index {
			f.avail[d] = false
		}
	}
	// Repeated sets first (they copy the first one's unweighted table),
	// then every first table times its weight.
	for i, mg := range f.margs {
		d := f.setOf[i]
		if f.first[d] == i || !f.avail[d] {
			continue
		}
		dst := f.ans[mg.Offset : mg.Offset+mg.Cells]
		for c, v := range f.outs[d] {
			dst[c] = mg.Weight * v
		}
	}
	for d, i := range f.first {
		if w := f.margs[i].Weight; w != 1 && f.avail[d] {
			for c := range f.outs[d] {
				f.outs[d][c] *= w
			}
		}
	}
	return nil
}

// noteTouched adds a set to the touched sets' interaction graph.
func (f *fWork) noteTouched(set []int) { f.trees.note(set) }

// filter marks the sets whose queries may be selected this round: answered
// by the last answer call, and covered by tree or, added to the touched
// sets, keeping the junction tree under the cap. A junction tree depends on
// its sets only through their interaction graph, so each set's size check
// is cached until a touched set adds an edge. It reads only public
// quantities (see the Privacy paragraph above) and returns the number of
// selectable sets.
func (f *fWork) filter(tree *model.Tree, touched [][]int) int {
	n := 0
	for d, set := range f.sets {
		ok := f.avail[d]
		if ok && tree.Covering(set) < 0 {
			var b uint64
			b, f.scratch = f.trees.bytesWith(d, set, touched, f.scratch)
			ok = b <= f.capB
		}
		f.selectable[d] = ok
		if ok {
			n++
		}
	}
	return n
}

// fSelector is a solver's selection rule: a private selection, or an
// argmax without privacy (a pointer to the run, so that passing it
// allocates nothing).
type fSelector interface {
	choose(scores []float64) int
}

// pick runs sel (a private selection, or an argmax) over the scores of the
// selectable queries. score holds nb blocks of m scores (query j of block b
// at b·m + j: DPFW's and SMD's signed vertices, MWEM's one block). When
// every set is selectable sel sees score itself; otherwise the selectable
// queries' scores, in order, are packed into dst (which may be score: the
// packing moves entries only towards the front). It returns the selected
// index into score, or -1 if no query is selectable.
func (f *fWork) pick(score, dst []float64, nb int, sel fSelector) int {
	all := true
	f.runs = f.runs[:0]
	for i := range f.margs {
		if f.selectable[f.setOf[i]] {
			f.runs = append(f.runs, i)
		} else {
			all = false
		}
	}
	if all {
		return sel.choose(score)
	}
	if len(f.runs) == 0 {
		return -1
	}
	m := len(f.ans)
	k := 0
	for b := range nb {
		for _, i := range f.runs {
			mg := f.margs[i]
			k += copy(dst[k:], score[b*m+mg.Offset:b*m+mg.Offset+mg.Cells])
		}
	}
	s := sel.choose(dst[:k])
	for b := range nb {
		for _, i := range f.runs {
			mg := f.margs[i]
			if s < mg.Cells {
				return b*m + mg.Offset + s
			}
			s -= mg.Cells
		}
	}
	panic("solvers: pick: selection out of range")
}

// errNoSelectable is the error of a round in which no query fits the cap.
func (f *fWork) errNoSelectable(solver string) error {
	return fmt.Errorf("solvers: %s: no workload query's set fits the model cap of %s; raise --max-model-size: %w", solver, universe.FormatBytes(new(big.Int).SetUint64(f.capB)), ErrModelTooLarge)
}

// fIterate is a log-linear iterate θ = c·Σ_S φ_S on the factored model,
// for DPFW and SMD: one table φ_S per touched workload set S (a query j of
// set S adds to one cell of φ_S), a lazy scale c (so that DPFW's (1 − γ)
// shrink is O(1)), and a model on the junction tree of the touched sets,
// rebuilt (and warm-started exactly from the tables) when a new set is not
// covered.
type fIterate struct {
	*fWork
	settings *model.Settings
	touched  [][]int
	slot     []int // distinct set → index into touched and phi, -1
	phi      [][]float64
	c        float64
	tree     *model.Tree
	mod      *model.Model
	rebuilds int
}

func newFIterate(sh *Shape) (*fIterate, error) {
	it := &fIterate{fWork: newFWork(sh), settings: &model.Settings{}, c: 1}
	it.slot = make([]int, len(it.sets))
	for d := range it.slot {
		it.slot[d] = -1
	}
	t, err := model.NewTree(it.sizes, nil)
	if err != nil {
		return nil, err
	}
	it.tree = t
	it.mod = model.New(t, it.settings)
	return it, nil
}

// close releases the model (unless taken).
func (it *fIterate) close() {
	if it.mod != nil {
		it.mod.Close()
		it.mod = nil
	}
}

// take hands the model to the caller.
func (it *fIterate) take() *model.Model {
	m := it.mod
	it.mod = nil
	return m
}

// touch gives set d a θ table, rebuilding the tree if no clique covers it.
// It refuses a tree over the cap (the filter keeps selections under it;
// DPFW's paper setting starts from a random vertex).
func (it *fIterate) touch(d int) error {
	if it.slot[d] >= 0 {
		return nil
	}
	set := it.sets[d]
	it.slot[d] = len(it.touched)
	it.touched = append(it.touched, set)
	it.phi = append(it.phi, make([]float64, len(it.outs[d])))
	it.noteTouched(set)
	if it.tree.Covering(set) >= 0 {
		return nil
	}
	t, err := model.NewTree(it.sizes, it.touched)
	if err != nil {
		return err
	}
	if t.Bytes() > it.capB {
		return it.errNoSelectable("factored iterate")
	}
	it.tree = t
	it.mod.Close()
	it.mod = model.New(t, it.settings)
	it.rebuilds++
	return nil
}

// add adds v to θ at cell of set d (touched).
func (it *fIterate) add(d, cell int, v float64) {
	it.phi[it.slot[d]][cell] += v / it.c
}

// addQuery adds v·q_j to θ, touching j's set.
func (it *fIterate) addQuery(j int, v float64) error {
	d, cell, w := it.query(j)
	if err := it.touch(d); err != nil {
		return err
	}
	it.add(d, cell, v*w)
	return nil
}

// scale multiplies θ by f > 0 (O(1) unless the lazy scale must be folded).
func (it *fIterate) scale(f float64) {
	it.c *= f
	if it.c < fwMinScale {
		for _, p := range it.phi {
			for i := range p {
				p[i] *= it.c
			}
		}
		it.c = 1
	}
}

// reset sets θ = 0 (keeping the tables and the tree).
func (it *fIterate) reset() {
	for _, p := range it.phi {
		clear(p)
	}
	it.c = 1
}

// sync writes θ into the model and calibrates it.
func (it *fIterate) sync() {
	for c := range it.tree.Cliques() {
		clear(it.mod.Theta(c))
	}
	if len(it.touched) > 0 {
		it.mod.AddThetas(it.touched, it.c, it.phi)
	}
	it.mod.Calibrate()
}

// fStepper is a factored seed solver's run: step runs iteration t and
// returns the selection and the internal max error of the iterate it
// scored (NaN if not known); output returns the final model.
type fStepper interface {
	step(t int) (selected int, maxErr float64, err error)
	bound(t int) float64
	output() (*model.Model, error)
}

// runFactoredSteps runs T iterations of r on the factored model, checking
// for cancellation, recording the trace and reporting progress.
func runFactoredSteps(ctx context.Context, p *Problem, plan *Plan, T int, r fStepper) (*Result, error) {
	res := &Result{Plan: plan, Trace: make([]Step, 0, T)}
	start := time.Now()
	for t := range T {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sel, maxErr, err := r.step(t)
		if err != nil {
			return nil, err
		}
		el := time.Since(start)
		res.Trace = append(res.Trace, Step{Iter: t, Selected: sel, Objective: math.NaN(), MaxError: maxErr, Elapsed: el})
		if p.Progress != nil {
			p.Progress(Progress{Iter: t + 1, Total: T, Objective: r.bound(t + 1), Elapsed: el})
		}
	}
	m, err := r.output()
	if err != nil {
		return nil, err
	}
	res.Model = m
	res.Cliques = m.Tree().Cliques()
	if mx, ok := r.(interface{ mixture() *Mixture }); ok {
		res.Mixture = mx.mixture()
	}
	plan.Params["model_bytes_final"] = float64(m.Tree().Bytes())
	return res, nil
}

// checkFactoredProblem validates what the factored seed solvers read (and,
// with the operator, checkProblem).
func checkFactoredProblem(p *Problem) error {
	switch {
	case p.Workload == nil:
		return errors.New("solvers: problem without a workload")
	case p.Rand == nil:
		return errors.New("solvers: problem without a random source")
	case p.N <= 0:
		return errors.New("solvers: problem with no records")
	case len(p.Answers) != p.Workload.M():
		return fmt.Errorf("solvers: %d answers for %d queries", len(p.Answers), p.Workload.M())
	}
	return nil
}

// factoredPlanParams records the factored model's public parameters: the
// cap and how many models of that size the solver holds at once.
func factoredPlanParams(plan *Plan, sh *Shape, copies int) {
	plan.Params["max_model_bytes"] = float64(sh.maxModelBytes())
	plan.Params["model_copies"] = float64(copies)
	plan.Params["m"] = float64(sh.Workload.M())
}

// Mixture is an equal-weight mixture of log-linear models on one junction
// tree: SMD's average x̄ = (x^1 + … + x^{T+1})/(T+1) of its iterates on the
// factored model (an average of log-linear models is not log-linear, so no
// single model holds it). Its components are rebuilt one at a time, from
// the public draws, into one model (Result.Model): the mixture costs one
// model's memory, and drawing ⌊n/Len⌋ or ⌈n/Len⌉ rows from each component
// samples it exactly (each row's component is equally likely).
type Mixture struct {
	it    *fIterate
	model *model.Model
	sel   []int   // the draws (signed vertices)
	step  float64 // each draw adds step·v_j to the log-weights
	cur   int     // draws in the model's current θ
}

// Len is the number of components.
func (x *Mixture) Len() int { return len(x.sel) + 1 }

// Component writes component i (0 ≤ i < Len: the iterate after i draws)
// into Result.Model, calibrates it and returns it. Components cost least in
// increasing order (one draw each); going back rebuilds from the start.
func (x *Mixture) Component(i int) *model.Model {
	if i < 0 || i >= x.Len() {
		panic(fmt.Sprintf("solvers: mixture component %d of %d", i, x.Len()))
	}
	it := x.it
	it.mod = x.model
	defer func() { it.mod = nil }()
	if i < x.cur {
		it.reset()
		x.cur = 0
	}
	for ; x.cur < i; x.cur++ {
		j, sg := query.Signed(x.sel[x.cur], len(it.ans))
		d, cell, w := it.query(j)
		it.add(d, cell, sg*x.step*w) // every drawn set is touched
	}
	it.sync()
	return x.model
}

// Answers writes the mixture's answers to every workload query into out
// (len m): the average of its components' answers. It costs Len model
// answers.
func (x *Mixture) Answers(out []float64) error {
	clear(out)
	it := x.it
	for i := range x.Len() {
		if err := it.answer(x.Component(i)); err != nil {
			return err
		}
		for d := range it.avail {
			if !it.avail[d] {
				return fmt.Errorf("solvers: mixture: the marginal of %v spans cliques beyond the elimination cap", it.sets[d])
			}
		}
		for j, v := range it.ans {
			out[j] += v
		}
	}
	for j := range out {
		out[j] /= float64(x.Len())
	}
	return nil
}

// emBlockedMin is the number of scores from which the seed solvers select
// with privacy.ExponentialMechanismBlocked (the same distribution as
// privacy.ExponentialMechanism, one exponential per score instead of a
// random draw and two logarithms): on full ADULT's 4.2·10^7 signed
// queries the Gumbel draws were 60% of a DPFW step.
const emBlockedMin = 1 << 20

// expSelect is the exponential mechanism of the seed solvers, on either
// model: ExponentialMechanism below emBlockedMin scores, the blocked form
// from there (its scratch kept between calls).
type expSelect struct{ scratch []float64 }

func (e *expSelect) draw(r *privacy.Rand, scores []float64, eps0, sens float64) int {
	if len(scores) < emBlockedMin {
		return privacy.ExponentialMechanism(r, scores, eps0, sens)
	}
	if need := privacy.BlockedScratch(len(scores)); len(e.scratch) < need {
		e.scratch = make([]float64, need)
	}
	return privacy.ExponentialMechanismBlocked(r, scores, eps0, sens, e.scratch)
}
