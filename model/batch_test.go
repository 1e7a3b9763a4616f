package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// batchSets returns every single attribute, pair and triple of n
// attributes, plus every clique of tr: covered and cross-clique sets.
func batchSets(tr *Tree) [][]int {
	n := len(tr.Sizes())
	var sets [][]int
	for a := range n {
		sets = append(sets, []int{a})
		for b := a + 1; b < n; b++ {
			sets = append(sets, []int{a, b})
			for c := b + 1; c < n; c++ {
				sets = append(sets, []int{a, b, c})
			}
		}
	}
	for _, cl := range tr.Cliques() {
		sets = append(sets, slices.Clone(cl))
	}
	return append(sets, []int{})
}

func newOuts(tr *Tree, sets [][]int) [][]float64 {
	outs := make([][]float64, len(sets))
	for i, s := range sets {
		outs[i] = make([]float64, int(cellsOf(tr.Sizes(), s)))
	}
	return outs
}

// checkMarginals compares Marginals with Marginal (bit for bit) and with
// brute force (within tol).
func checkMarginals(t *testing.T, m *Model, sets [][]int, outs [][]float64) {
	t.Helper()
	if err := m.Marginals(sets, outs); err != nil {
		t.Fatalf("Marginals: %v", err)
	}
	b := bruteForce(m)
	for i, s := range sets {
		want := make([]float64, len(outs[i]))
		if err := m.Marginal(s, want); err != nil {
			t.Fatalf("Marginal(%v): %v", s, err)
		}
		if !slices.Equal(outs[i], want) {
			t.Errorf("Marginals set %v = %v, want Marginal's %v", s, outs[i], want)
		}
		if d := maxAbsDiff(outs[i], b.marginal(s)); d > tol {
			t.Errorf("Marginals set %v: max abs diff %g from brute force", s, d)
		}
	}
}

func TestMarginalsMatchMarginalAndBruteForce(t *testing.T) {
	for _, sh := range shapes() {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", sh.name, workers), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(len(sh.name)), 9))
				m := randomModel(t, sh, r, 5, &Settings{Workers: workers})
				defer m.Close()
				sets := batchSets(m.Tree())
				outs := newOuts(m.Tree(), sets)
				checkMarginals(t, m, sets, outs)
				// The same sets after a change of θ: the cached plan
				// answers the new model.
				randomTheta(m, r)
				m.Calibrate()
				checkMarginals(t, m, sets, outs)
			})
		}
	}
}

func TestMarginalsParallelLarge(t *testing.T) {
	// Cliques above minParallel cells: large in-clique sums, conditionals
	// and sets split over two workers.
	sizes := []int{50, 50, 30, 4, 6}
	tr, err := NewTree(sizes, [][]int{{0, 1, 2}, {1, 2, 3}, {3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		m := New(tr, &Settings{Workers: workers})
		randomTheta(m, rand.New(rand.NewPCG(5, 5)))
		m.Calibrate()
		sets := [][]int{{0, 1, 2}, {0, 1}, {1, 2}, {0}, {4}, {1, 2, 3}, {0, 3}, {0, 2, 3}, {0, 4}, {0, 1, 4}, {2, 3, 4}}
		outs := newOuts(tr, sets)
		if err := m.Marginals(sets, outs); err != nil {
			t.Fatal(err)
		}
		for i, s := range sets {
			want := make([]float64, len(outs[i]))
			if err := m.Marginal(s, want); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(outs[i], want) {
				t.Errorf("workers %d: Marginals set %v differs from Marginal by %g", workers, s, maxAbsDiff(outs[i], want))
			}
		}
		m.Close()
	}
}

func TestMarginalsSkipAndTooLarge(t *testing.T) {
	tr, err := NewTree([]int{10, 10, 10, 10, 10}, [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	m := New(tr, &Settings{MaxElimCells: 999})
	defer m.Close()
	// {0, 2, 4} eliminates 1 with a 1,000-cell table; the pair {0, 3} is
	// carried through the chain with no such table.
	sets := [][]int{{0, 1}, {0, 2, 4}, {1, 2}, {0, 2}, {0, 3}}
	if got := m.Unanswerable(sets); !slices.Equal(got, []int{1}) {
		t.Errorf("Unanswerable = %v, want [1]", got)
	}
	outs := newOuts(tr, sets)
	outs[3] = nil // skipped
	err = m.Marginals(sets, outs)
	var me *MarginalsError
	if !errors.As(err, &me) || !slices.Equal(me.Index, []int{1}) {
		t.Fatalf("Marginals = %v, want a *MarginalsError on set 1", err)
	}
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Cells != 1000 || tl.Cap != 999 {
		t.Errorf("Marginals error %v does not hold a *TooLargeError of 1000 cells over 999", err)
	}
	for i, v := range outs[0] {
		if math.Abs(v-0.01) > 1e-15 {
			t.Fatalf("uniform Marginals set [0 1] [%d] = %v, want 0.01", i, v)
		}
	}
	for _, k := range []int{2, 4} {
		want := 1 / float64(len(outs[k]))
		for i, v := range outs[k] {
			if math.Abs(v-want) > 1e-15 {
				t.Fatalf("uniform Marginals set %v [%d] = %v, want %v", sets[k], i, v, want)
			}
		}
	}
	// Skipping the failing set: no error.
	outs[1] = nil
	if err := m.Marginals(sets, outs); err != nil {
		t.Errorf("Marginals without the failing set = %v, want nil", err)
	}
}

func TestMarginalsAllocs(t *testing.T) {
	for _, workers := range []int{1, 2} {
		r := rand.New(rand.NewPCG(3, 3))
		m := randomModel(t, shapes()[10], r, 3, &Settings{Workers: workers})
		sets := batchSets(m.Tree())
		outs := newOuts(m.Tree(), sets)
		meas := m.Tree().Cliques()
		mouts := newOuts(m.Tree(), meas)
		_ = m.Marginals(sets, outs)
		allocs := testing.AllocsPerRun(10, func() {
			m.Calibrate()
			_ = m.Marginals(sets, outs)
			_ = m.Marginals(meas, mouts) // a second list stays cached
		})
		if allocs != 0 {
			t.Errorf("workers %d: Marginals allocates %v times per call, want 0", workers, allocs)
		}
		m.Close()
	}
}

func TestMarginalsPanics(t *testing.T) {
	tr, err := NewTree([]int{2, 2, 3}, [][]int{{0, 1}, {1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	m := New(tr, nil)
	defer m.Close()
	for name, f := range map[string]func(){
		"outs length":   func() { _ = m.Marginals([][]int{{0}}, nil) },
		"output length": func() { _ = m.Marginals([][]int{{0}}, [][]float64{make([]float64, 3)}) },
		"set order":     func() { _ = m.Marginals([][]int{{1, 0}}, [][]float64{make([]float64, 4)}) },
		"set range":     func() { _ = m.Marginals([][]int{{3}}, [][]float64{make([]float64, 2)}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestAddThetasMatchesAddTheta(t *testing.T) {
	for _, sh := range shapes() {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", sh.name, workers), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(len(sh.name)), 11))
				a := randomModel(t, sh, r, 2, &Settings{Workers: workers})
				defer a.Close()
				b := New(a.Tree(), &Settings{Workers: workers})
				defer b.Close()
				b.CopyFrom(a)
				tr := a.Tree()
				// Every clique, a subset of each, and every single attribute:
				// several sets per clique.
				var sets [][]int
				for _, cl := range tr.Cliques() {
					sets = append(sets, slices.Clone(cl), randomSubset(r, cl))
				}
				for x := range tr.Sizes() {
					sets = append(sets, []int{x})
				}
				gs := newOuts(tr, sets)
				for _, g := range gs {
					for i := range g {
						g[i] = r.NormFloat64()
					}
				}
				for range 2 {
					for i, s := range sets {
						a.AddTheta(s, -0.3, gs[i])
					}
					b.AddThetas(sets, -0.3, gs)
				}
				for c := range tr.Cliques() {
					if !slices.Equal(a.Theta(c), b.Theta(c)) {
						t.Errorf("clique %d: AddThetas θ differs from AddTheta's by %g", c, maxAbsDiff(a.Theta(c), b.Theta(c)))
					}
				}
			})
		}
	}
}

func TestAddThetasParallelLargeAndAllocs(t *testing.T) {
	sizes := []int{50, 50, 30, 4, 6}
	tr, err := NewTree(sizes, [][]int{{0, 1, 2}, {1, 2, 3}, {3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	sets := [][]int{{0, 1, 2}, {1, 2, 3}, {3, 4}, {1, 2}, {4}}
	gs := newOuts(tr, sets)
	r := rand.New(rand.NewPCG(8, 8))
	for _, g := range gs {
		for i := range g {
			g[i] = r.NormFloat64()
		}
	}
	a, b := New(tr, &Settings{Workers: 2}), New(tr, &Settings{Workers: 2})
	defer a.Close()
	defer b.Close()
	for i, s := range sets {
		a.AddTheta(s, 0.7, gs[i])
	}
	b.AddThetas(sets, 0.7, gs)
	for c := range tr.Cliques() {
		if !slices.Equal(a.Theta(c), b.Theta(c)) {
			t.Errorf("clique %d: AddThetas θ differs from AddTheta's", c)
		}
	}
	if allocs := testing.AllocsPerRun(10, func() { b.AddThetas(sets, 0.1, gs) }); allocs != 0 {
		t.Errorf("AddThetas allocates %v times per call, want 0", allocs)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("AddThetas on an uncovered set: no panic")
			}
		}()
		b.AddThetas([][]int{{0, 4}}, 1, [][]float64{make([]float64, 300)})
	}()
}

func TestSplitSmallLoops(t *testing.T) {
	// minSplit lowered to 1: Calibrate levels, Marginals and AddThetas of
	// small models are split over two workers through the scaled range,
	// with the same bits as one worker.
	defer func(v, b int) { minSplit, minBatchSplit = v, b }(minSplit, minBatchSplit)
	for _, sh := range shapes() {
		r := rand.New(rand.NewPCG(uint64(len(sh.name)), 13))
		one := randomModel(t, sh, r, 3, &Settings{Workers: 1})
		two := New(one.Tree(), &Settings{Workers: 2})
		tr := one.Tree()
		sets := batchSets(tr)
		var th [][]int
		for _, cl := range tr.Cliques() {
			th = append(th, slices.Clone(cl))
		}
		gs := newOuts(tr, th)
		for _, g := range gs {
			for i := range g {
				g[i] = r.NormFloat64()
			}
		}
		outs1, outs2 := newOuts(tr, sets), newOuts(tr, sets)
		for _, ms := range []int{1 << 30, 1} {
			minSplit, minBatchSplit = ms, ms
			two.CopyFrom(one)
			two.AddThetas(th, 0.5, gs)
			two.Calibrate()
			if ms == 1<<30 {
				if err := two.Marginals(sets, outs1); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := two.Marginals(sets, outs2); err != nil {
				t.Fatal(err)
			}
		}
		for i := range sets {
			if !slices.Equal(outs1[i], outs2[i]) {
				t.Errorf("%s: set %v split over two workers differs by %g", sh.name, sets[i], maxAbsDiff(outs1[i], outs2[i]))
			}
		}
		one.Close()
		two.Close()
	}
}

// runCrossWhole is runCross without blocks: whole-table passes, then the
// sum in four running sums and the division.
func (m *Model) runCrossWhole(sp *setPlan, out []float64, cond [][]float64, arena []float64, dig []int) {
	whole := func(dst []float64, ops []mulOp) {
		for i := range dst {
			dst[i] = 1
		}
		for j := range ops {
			op := &ops[j]
			op.p.mulFrom(dst, m.table(op.src, cond, arena), 0, op.p.cells, dig)
		}
	}
	for i := range sp.steps {
		st := &sp.steps[i]
		prod := make([]float64, st.prodN)
		whole(prod, st.muls)
		nt := arena[st.out : st.out+st.outN]
		clear(nt)
		st.sum.sumTo(nt, prod, 0, st.sum.cells, dig)
	}
	whole(out, sp.final)
	var s [4]float64
	n4 := len(out) &^ 3
	for i, v := range out {
		if i < n4 {
			s[i&3] += v
		} else {
			s[0] += v
		}
	}
	if t := (s[0] + s[1]) + (s[2] + s[3]); t > 0 {
		for i := range out {
			out[i] /= t
		}
	}
}

func TestRunCrossBlocksSameBits(t *testing.T) {
	// Tables of thousands of cells: products and outputs span several
	// blocks, with odd sizes so that blocks end mid-row; the last case sums
	// out an innermost attribute of 97 cells from a 61,110-cell product.
	for _, tc := range []struct {
		sizes []int
		tree  [][]int
		sets  [][]int
	}{
		{[]int{21, 30, 25, 41, 3, 17}, [][]int{{0, 1}, {1, 2, 4}, {2, 3}, {3, 5}, {0, 4}},
			[][]int{{0, 3}, {0, 2, 3}, {1, 3, 5}, {0, 5}, {0, 1, 5}, {2, 5}, {0, 3, 4, 5}}},
		{[]int{21, 30, 97}, [][]int{{0, 2}, {1, 2}}, [][]int{{0, 1}}},
	} {
		checkRunCrossBlocks(t, tc.sizes, tc.tree, tc.sets)
	}
}

func checkRunCrossBlocks(t *testing.T, sizes []int, treeSets, sets [][]int) {
	tr, err := NewTree(sizes, treeSets)
	if err != nil {
		t.Fatal(err)
	}
	m := New(tr, &Settings{Workers: 1})
	defer m.Close()
	randomTheta(m, rand.New(rand.NewPCG(4, 4)))
	m.Calibrate()
	need := make([]bool, len(tr.Cliques()))
	cond := make([][]float64, len(tr.Cliques()))
	dig := make([]int, len(sizes)+1)
	for _, set := range sets {
		if tr.Covering(set) >= 0 {
			t.Fatalf("set %v is covered", set)
		}
		sp := m.planSet(set, need)
		if sp.err != nil {
			t.Fatal(sp.err)
		}
		for c, ok := range need {
			if ok && cond[c] == nil {
				cond[c] = make([]float64, tr.Cells(c))
				m.condTo(c, cond[c], make([]float64, tr.sepCell[c]), dig)
			}
		}
		n := int(cellsOf(sizes, set))
		got, want := make([]float64, n), make([]float64, n)
		m.runCross(&sp, got, cond, make([]float64, sp.arenaN), dig)
		m.runCrossWhole(&sp, want, cond, make([]float64, sp.arenaN), dig)
		if !slices.Equal(got, want) {
			t.Errorf("set %v (%d cells): blocked runCross differs from whole passes by %g", set, n, maxAbsDiff(got, want))
		}
	}
}

// TestCarriedTriplesUnderCap: two triples carried through the same middle
// attribute ({0, 2, 4} and {0, 2, 5}, none of whose pairs a clique covers),
// the second's path crossing a separator whose message would exceed
// MaxElimCells: the first stays carried, the second goes to variable
// elimination, and Marginals answers both as Marginal does, bit for bit,
// alone or together, and as brute force.
func TestCarriedTriplesUnderCap(t *testing.T) {
	sizes := []int{2, 3, 3, 3, 2, 4, 10, 10}
	tr, err := NewTree(sizes, [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {3, 6, 7}, {5, 6, 7}})
	if err != nil {
		t.Fatal(err)
	}
	m := New(tr, &Settings{MaxElimCells: 500, Workers: 1})
	defer m.Close()
	randomTheta(m, rand.New(rand.NewPCG(7, 7)))
	m.Calibrate()
	for _, set := range [][]int{{0, 2, 4}, {0, 2, 5}} {
		a, tg, ok := tr.carriedTarget(set)
		if !ok || tg.kind != carryChain || a != 0 || tg.b != 2 {
			t.Fatalf("carriedTarget(%v) = %d, %+v, %v; want a chain carrying 0 through 2", set, a, tg, ok)
		}
	}
	pp, failed := m.planPairs(0, []pairTarget{{kind: carryChain, b: 2, c: 4, set: 0}, {kind: carryChain, b: 2, c: 5, set: 1}})
	if !slices.Equal(failed, []int{1}) || !slices.Equal(pp.sets, []int{0}) {
		t.Errorf("planPairs: sets %v, failed %v; want [0] carried and [1] failed", pp.sets, failed)
	}
	b := bruteForce(m)
	for _, sets := range [][][]int{{{0, 2, 4}}, {{0, 2, 5}}, {{0, 2, 4}, {0, 2, 5}}} {
		outs := newOuts(tr, sets)
		errAll := m.Marginals(sets, outs)
		for i, s := range sets {
			want := make([]float64, len(outs[i]))
			errOne := m.Marginal(s, want)
			if (errOne != nil) != (errAll != nil && slices.Contains(errAll.(*MarginalsError).Index, i)) {
				t.Fatalf("set %v: Marginal error %v, Marginals error %v", s, errOne, errAll)
			}
			if errOne != nil {
				continue
			}
			if !slices.Equal(outs[i], want) {
				t.Errorf("Marginals set %v = %v, want Marginal's %v", s, outs[i], want)
			}
			if d := maxAbsDiff(want, b.marginal(s)); d > tol {
				t.Errorf("Marginal(%v): max abs diff %g from brute force", s, d)
			}
		}
	}
}

// TestCarryKinds: each kind of carry target (pair, covered triple, chain,
// branch) planned and run on its own matches brute force, on a tree where
// each kind arises: a star of cliques around {3, 4, 5} with a chain
// hanging off it.
func TestCarryKinds(t *testing.T) {
	sizes := []int{2, 3, 4, 3, 2, 3, 2, 3}
	tr, err := NewTree(sizes, [][]int{{3, 4, 5}, {0, 3}, {1, 4}, {2, 5}, {2, 6}, {6, 7}})
	if err != nil {
		t.Fatal(err)
	}
	m := New(tr, &Settings{Workers: 1})
	defer m.Close()
	randomTheta(m, rand.New(rand.NewPCG(8, 8)))
	m.Calibrate()
	b := bruteForce(m)
	for _, tc := range []struct {
		set  []int
		kind int
	}{
		{[]int{0, 1}, carryPair},
		{[]int{0, 4, 5}, carryCovered},
		{[]int{0, 2, 7}, carryChain},
		{[]int{0, 1, 2}, carryBranch},
		{[]int{0, 1, 7}, carryBranch},
	} {
		a, tg, ok := tr.carriedTarget(tc.set)
		if !ok || tg.kind != tc.kind {
			t.Errorf("carriedTarget(%v) = %d, %+v, %v; want kind %d", tc.set, a, tg, ok, tc.kind)
			continue
		}
		pp, failed := m.planPairs(a, []pairTarget{tg})
		if len(failed) > 0 {
			t.Fatalf("planPairs(%v) left %v", tc.set, failed)
		}
		out := make([]float64, int(cellsOf(sizes, tc.set)))
		m.runPairs(&pp, [][]float64{out}, make([]float64, pp.arenaN), make([]int, len(sizes)+1))
		if d := maxAbsDiff(out, b.marginal(tc.set)); d > tol {
			t.Errorf("carry of %v (kind %d): max abs diff %g from brute force", tc.set, tc.kind, d)
		}
	}
}

// TestMarginalsInterrupted: with Settings.Done closed, Marginals stops and
// returns ErrInterrupted; with it open, it answers as without it.
func TestMarginalsInterrupted(t *testing.T) {
	sizes := []int{3, 4, 2, 5, 3, 2}
	tr, err := NewTree(sizes, [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}})
	if err != nil {
		t.Fatal(err)
	}
	sets := batchSets(tr)
	for _, workers := range []int{1, 2} {
		done := make(chan struct{})
		m := New(tr, &Settings{Workers: workers, Done: done})
		randomTheta(m, rand.New(rand.NewPCG(9, 9)))
		m.Calibrate()
		checkMarginals(t, m, sets, newOuts(tr, sets))
		close(done)
		if err := m.Marginals(sets, newOuts(tr, sets)); !errors.Is(err, ErrInterrupted) {
			t.Errorf("workers %d: Marginals after Done = %v, want ErrInterrupted", workers, err)
		}
		m.Close()
	}
}

// TestCarryGroupsPartial checks CarryGroups on every shape: each carried
// set is in its group, the costs are positive with the pass no more than
// the whole, and asking Marginals for one set of a group at a time (the
// lazy selection's pattern, with the conditionals computed once per
// calibration) gives every set the bits of the whole call.
func TestCarryGroupsPartial(t *testing.T) {
	carried := 0
	for _, sh := range shapes() {
		t.Run(sh.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(len(sh.name)), 11))
			m := randomModel(t, sh, r, 3, &Settings{Workers: 2})
			defer m.Close()
			sets := batchSets(m.Tree())
			whole := newOuts(m.Tree(), sets)
			if err := m.Marginals(sets, whole); err != nil {
				t.Fatal(err)
			}
			of, groups := m.CarryGroups(sets)
			if len(of) != len(sets) {
				t.Fatalf("CarryGroups: %d groups of sets for %d sets", len(of), len(sets))
			}
			for i, g := range of {
				if g < 0 {
					continue
				}
				carried++
				cg := groups[g]
				if !slices.Contains(cg.Sets, i) {
					t.Errorf("set %v: group %d's sets %v do not hold it", sets[i], g, cg.Sets)
				}
				if !(cg.Pass > 0 && cg.Pass <= cg.Whole) {
					t.Errorf("group %d: pass %v, whole %v, want 0 < pass ≤ whole", g, cg.Pass, cg.Whole)
				}
				outs := make([][]float64, len(sets))
				outs[i] = make([]float64, len(whole[i]))
				if err := m.Marginals(sets, outs); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(outs[i], whole[i]) {
					t.Errorf("set %v alone = %v, want the whole call's %v", sets[i], outs[i], whole[i])
				}
			}
		})
	}
	if carried == 0 {
		t.Error("no shape has a carried set: the test checks nothing")
	}
}

// TestMarginalCosts: on a chain of cliques, a covered set costs nothing, a
// set beyond the elimination cap costs +Inf, a carried pair its share of
// its carry group's whole cost, and an eliminated set a positive cost.
func TestMarginalCosts(t *testing.T) {
	tr, err := NewTree([]int{10, 10, 10, 10, 10}, [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	m := New(tr, &Settings{MaxElimCells: 999})
	defer m.Close()
	sets := [][]int{{0, 1}, {0, 2, 4}, {1, 2}, {0, 2}, {0, 3}, {0, 4}}
	costs := m.MarginalCosts(sets)
	of, groups := m.CarryGroups(sets)
	for i, s := range sets {
		var want float64
		switch {
		case i == 1:
			want = math.Inf(1)
		case tr.Covering(s) >= 0:
			want = 0
		case of[i] >= 0:
			g := groups[of[i]]
			want = g.Whole / float64(len(g.Sets))
		default:
			if costs[i] <= 0 {
				t.Errorf("MarginalCosts(%v) = %v, want a positive cost", s, costs[i])
			}
			continue
		}
		if costs[i] != want {
			t.Errorf("MarginalCosts(%v) = %v, want %v", s, costs[i], want)
		}
	}
	if of[4] < 0 {
		t.Errorf("the pair {0, 3} is not carried: the test no longer covers carries")
	}
	if got := m.MarginalCosts(nil); len(got) != 0 {
		t.Errorf("MarginalCosts(nil) = %v, want none", got)
	}
}
