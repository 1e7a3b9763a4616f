package query

import (
	"fmt"
	"math/big"
	"runtime"
	"sync"

	"github.com/dpsynth/synth/universe"
)

// CompileSettings tunes Compile. The zero value (or nil) means the
// documented defaults.
type CompileSettings struct {
	// MemoryCap is the largest explicit vector over the universe, in bytes,
	// and also the cap on the operator's scratch tables;
	// 0 means universe.DefaultMemoryCap.
	MemoryCap uint64
	// Workers is the number of goroutines that share each call; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
}

// Operator is a workload compiled for an explicit distribution D over the
// universe (a dense []float64 of length K, in mixed-radix order). It is the
// matrix A (M × K) of the workload, applied without being stored: every
// answer comes from marginal tables computed in one fused pass over D.
//
// An Operator is not safe for concurrent calls: its methods share scratch
// tables. Use one Operator per goroutine (Compile is cheap), or serialise
// calls. Answer, Adjoint and AddQuery allocate nothing.
type Operator struct {
	w    *Workload
	ex   *exec
	team *team
	once sync.Once
}

// Compile returns the operator of the workload over an explicit universe.
// It refuses, with a *universe.TooLargeError, a universe whose float64
// vector exceeds the memory cap, and a workload whose scratch tables do.
func (w *Workload) Compile(s *CompileSettings) (*Operator, error) {
	var set CompileSettings
	if s != nil {
		set = *s
	}
	k, err := w.dom.CheckExplicit(set.MemoryCap)
	if err != nil {
		return nil, err
	}
	workers := set.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p := newPlan(w, workers)
	capBytes := set.MemoryCap
	if capBytes == 0 {
		capBytes = universe.DefaultMemoryCap
	}
	if uint64(p.scratch)*8 > capBytes {
		return nil, fmt.Errorf("the workload's marginal tables need %s of scratch memory, over the cap of %s; "+
			"Hint: fewer or smaller marginals, or a higher memory cap",
			universe.FormatBytes(big.NewInt(int64(p.scratch)*8)), universe.FormatBytes(new(big.Int).SetUint64(capBytes)))
	}
	ex := newExec(p, w, k)
	op := &Operator{w: w, ex: ex}
	if !p.serial {
		op.team = newTeam(p.workers, ex.runPhase)
		// The helpers reference the team and exec, never op: once op is
		// unreachable, stop them.
		runtime.AddCleanup(op, func(t *team) { t.stop() }, op.team)
	}
	return op, nil
}

// Close stops the operator's helper goroutines. It is optional (they stop
// when the Operator is garbage collected); after Close the operator still
// works, on the calling goroutine only.
func (op *Operator) Close() {
	op.once.Do(func() {
		if op.team != nil {
			op.team.stop()
			op.team = nil
		}
	})
}

// Workload returns the compiled workload.
func (op *Operator) Workload() *Workload { return op.w }

// M is the number of queries (rows of A).
func (op *Operator) M() int { return op.ex.m }

// K is the size of the universe (columns of A).
func (op *Operator) K() int { return op.ex.k }

// ScratchBytes is the memory held by the operator's tables, with
// AdjointMapAnswer's once it has run.
func (op *Operator) ScratchBytes() int64 {
	n := len(op.ex.scratch) + len(op.ex.wts)
	if !op.ex.p.stream { // else the tiles are the scratch's
		for _, b := range op.ex.fbuf {
			n += len(b)
		}
	}
	return int64(n) * 8
}

// Range returns the minimum and maximum of q_j over the universe (see
// Workload.Range).
func (op *Operator) Range(j int) (lo, hi float64) { return op.w.Range(j) }

// Answer writes out[j] = ⟨q_j, d⟩ for every query (len(d) = K, len(out) =
// M). All target tables come from one pass over d in tiles, split across
// the workers.
func (op *Operator) Answer(d, out []float64) {
	ex := op.ex
	if len(d) != ex.k || len(out) != ex.m {
		panic(fmt.Sprintf("query: Answer with len(d) = %d, len(out) = %d; want %d and %d", len(d), len(out), ex.k, ex.m))
	}
	ex.d, ex.out = d, out
	defer func() { ex.d, ex.out = nil, nil }()
	if ex.p.serial || op.team == nil {
		ex.answerSerial()
		return
	}
	ex.setWorkers(op.team.n)
	ex.ph = phTiles
	op.team.run()
	ex.ph = phTargets
	ex.claim.Store(0)
	op.team.run()
}

// Adjoint writes out = Aᵀy = Σ_j y_j q_j (len(y) = M, len(out) = K; out is
// overwritten). It runs Answer's plan backwards: the weights gathered on
// the target tables are broadcast back to each tile, which is written once.
func (op *Operator) Adjoint(y, out []float64) {
	ex := op.ex
	if len(y) != ex.m || len(out) != ex.k {
		panic(fmt.Sprintf("query: Adjoint with len(y) = %d, len(out) = %d; want %d and %d", len(y), len(out), ex.m, ex.k))
	}
	ex.y, ex.out = y, out
	defer func() { ex.y, ex.out, ex.rw = nil, nil, nil }()
	if ex.p.serial || op.team == nil {
		ex.adjointSerial()
		return
	}
	ex.setWorkers(op.team.n)
	ex.rw = ex.g[0]
	ex.ph = phRTargets
	ex.claim.Store(0)
	op.team.run()
	ex.ph = phRTiles
	op.team.run()
	ex.revFull()
}

// AddQuery adds s·q_j to x (len K), touching only the support of q_j.
func (op *Operator) AddQuery(j int, s float64, x []float64) {
	ex := op.ex
	if len(x) != ex.k {
		panic(fmt.Sprintf("query: AddQuery into a vector of %d cells for a universe of %d", len(x), ex.k))
	}
	b := &ex.blocks[op.w.blockOf(j)]
	i := j - b.off
	last := -1
	switch b.kind {
	case bMarginal:
		for p := len(b.attrs) - 1; p >= 0; p-- {
			a := b.attrs[p]
			c := i % ex.sizes[a]
			i /= ex.sizes[a]
			ex.one[a] = run{int32(c), int32(c)}
			ex.cons[a] = ex.one[a : a+1]
		}
	case bPrefix:
		a := b.attrs[0]
		ex.one[a] = run{0, int32(i)}
		ex.cons[a] = ex.one[a : a+1]
	case bProduct:
		for p, a := range b.attrs {
			ex.cons[a] = b.runs[p]
		}
	}
	last = b.attrs[len(b.attrs)-1]
	boxWalk(x, s*b.weight, true, ex.sizes, ex.strides, ex.cons, last, 0, 0)
	for _, a := range b.attrs {
		ex.cons[a] = nil
	}
}
