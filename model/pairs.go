package model

import "slices"

// The marginals of pairs that no clique covers, by carrying one attribute
// through the clique tree.
//
// For an attribute a, the cliques holding it form a connected subtree T_a.
// Leaving T_a across a separator S, the joint table P(a, x_S) is the sum of
// a T_a clique's belief; in a clique C reached through S (a not in C, so a
// and C's other attributes are independent given x_S), P(a, x_C) =
// P(x_C)·P(a | x_S), and P(a | x_S) = P(a, x_S)/Σ_a P(a, x_S). One pass over
// the tree away from T_a, |a|·cells(C) per clique, so gives P(a, b) for
// every attribute b of every clique it reaches: the pairs of a share the
// work that variable elimination would repeat for each of them. The pass
// visits only the cliques on the paths from T_a to the cliques of its
// targets.

// pairOut is one output of a carry step: a target pair's table, or the
// message to a neighbouring clique (a table over the separator and a).
type pairOut struct {
	p      proj // the step's table → the output's attributes
	set    int  // the target's index among the call's sets, or -1 for a message
	off, n int  // a message's cells in the arena
}

// pairStep is one clique of a carry plan. A seed step (a clique of T_a)
// sums its belief onto its messages; any other step turns its incoming
// message P(a, x_S) into P(a | x_S) in place, then builds P(a, x_C) block by
// block over C ∪ {a} and sums each block onto its outputs.
type pairStep struct {
	c       int
	seed    bool
	in, inN int  // the incoming message in the arena (table over S ∪ {a})
	sep     int  // separator scratch in the arena (sepN cells)
	sepN    int  //
	inSep   proj // S ∪ {a} → S
	fromC   proj // C ∪ {a} → C
	fromIn  proj // C ∪ {a} → S ∪ {a}
	cells   int  // cells of C ∪ {a} (of C for a seed)
	outputs []pairOut
}

// pairPlan carries attribute a to the cliques of its targets.
type pairPlan struct {
	a      int
	sets   []int // the targets' set indices
	steps  []pairStep
	arenaN int // messages and separator scratch, then a product block
	cost   int // cells touched
}

// pairTarget is a pair {a, b} to answer: b and the set's index.
type pairTarget struct{ b, set int }

// carrier splits a cross-clique pair into the attribute to carry, the one
// with fewer values (the lower on ties), and its partner.
func (t *Tree) carrier(set []int) (a, b int) {
	if t.sizes[set[1]] < t.sizes[set[0]] {
		return set[1], set[0]
	}
	return set[0], set[1]
}

// planPairs compiles the carry of attribute a to targets, none of which
// shares a clique with a.
func (m *Model) planPairs(a int, targets []pairTarget) pairPlan {
	t := m.t
	k := len(t.cliques)
	inA := make([]bool, k)
	marked := make([]bool, k)
	for c := range k {
		inA[c] = t.member[c][a]
		marked[c] = inA[c]
	}
	want := make(map[int]int, len(targets)) // b → set index
	for _, tg := range targets {
		want[tg.b] = tg.set
		marked[t.first[tg.b]] = true
	}
	adj := t.steinerAdj(marked)
	pp := pairPlan{a: a}
	for _, tg := range targets {
		pp.sets = append(pp.sets, tg.set)
	}
	sizes := t.sizes
	top := 0
	alloc := func(n int) int { off := top; top += n; return off }
	// Breadth first from T_a: the seeds, then each clique reached once,
	// with its incoming message.
	type visit struct{ c, from, msg, msgN int }
	var queue []visit
	seen := slices.Clone(inA)
	for c := range k {
		if !inA[c] {
			continue
		}
		st := pairStep{c: c, seed: true, cells: t.cells[c]}
		for _, n := range adj[c] {
			if seen[n] {
				continue
			}
			seen[n] = true
			attrs := union(intersect(t.cliques[c], t.cliques[n]), []int{a}) // inside c
			n2 := int(cellsOf(sizes, attrs))
			off := alloc(n2)
			st.outputs = append(st.outputs, pairOut{p: newProj(sizes, t.cliques[c], attrs), set: -1, off: off, n: n2})
			queue = append(queue, visit{c: n, from: c, msg: off, msgN: n2})
		}
		if len(st.outputs) > 0 {
			pp.cost += st.cells * len(st.outputs)
			pp.steps = append(pp.steps, st)
		}
	}
	for q := 0; q < len(queue); q++ {
		v := queue[q]
		c := v.c
		sep := intersect(t.cliques[c], t.cliques[v.from])
		inAttrs := union(sep, []int{a})
		u := union(t.cliques[c], []int{a})
		st := pairStep{c: c, in: v.msg, inN: v.msgN, inSep: newProj(sizes, inAttrs, sep),
			fromC: newProj(sizes, u, t.cliques[c]), fromIn: newProj(sizes, u, inAttrs), cells: int(cellsOf(sizes, u))}
		st.sepN = int(cellsOf(sizes, sep))
		st.sep = alloc(st.sepN)
		for _, b := range t.cliques[c] {
			if set, ok := want[b]; ok && !slices.Contains(sep, b) {
				st.outputs = append(st.outputs, pairOut{p: newProj(sizes, u, union([]int{a}, []int{b})), set: set})
			}
		}
		for _, n := range adj[c] {
			if seen[n] {
				continue
			}
			seen[n] = true
			attrs := union(intersect(t.cliques[c], t.cliques[n]), []int{a})
			n2 := int(cellsOf(sizes, attrs))
			off := alloc(n2)
			st.outputs = append(st.outputs, pairOut{p: newProj(sizes, u, attrs), set: -1, off: off, n: n2})
			queue = append(queue, visit{c: n, from: c, msg: off, msgN: n2})
		}
		pp.cost += 2*v.msgN + st.cells*(2+len(st.outputs))
		pp.steps = append(pp.steps, st)
	}
	pp.arenaN = top + elimBlock
	return pp
}

// steinerAdj returns the adjacency lists of the smallest subtree of the
// clique tree holding the marked cliques: the edge from c to its parent is
// in it when c's subtree holds some but not all of them.
func (t *Tree) steinerAdj(marked []bool) [][]int {
	k := len(t.cliques)
	total := 0
	cnt := make([]int, k)
	for c := k - 1; c >= 0; c-- {
		if marked[c] {
			cnt[c]++
			total++
		}
		if p := t.parent[c]; p >= 0 {
			cnt[p] += cnt[c]
		}
	}
	adj := make([][]int, k)
	for c := range k {
		if p := t.parent[c]; p >= 0 && cnt[c] > 0 && cnt[c] < total {
			adj[c] = append(adj[c], p)
			adj[p] = append(adj[p], c)
		}
	}
	return adj
}

// runPairs runs plan pp into the outputs outs (indexed by set), with the
// arena (at least pp.arenaN cells) and odometer scratch dig. Each target's
// table is normalised to sum to 1, as runCross's.
func (m *Model) runPairs(pp *pairPlan, outs [][]float64, arena []float64, dig []int) {
	for i := range pp.steps {
		st := &pp.steps[i]
		if st.seed {
			b := m.belief[st.c]
			for _, o := range st.outputs {
				msg := arena[o.off : o.off+o.n]
				clear(msg)
				o.p.sumTo(msg, b, 0, st.cells, dig)
			}
			continue
		}
		// P(a | x_S) in place of P(a, x_S): divided by Σ_a (0 where it is 0).
		msg := arena[st.in : st.in+st.inN]
		sep := arena[st.sep : st.sep+st.sepN]
		clear(sep)
		st.inSep.sumTo(sep, msg, 0, st.inN, dig)
		for j, v := range sep {
			if v > 0 {
				sep[j] = 1 / v
			}
		}
		st.inSep.mulFrom(msg, sep, 0, st.inN, dig)
		for _, o := range st.outputs {
			if o.set >= 0 {
				if outs[o.set] != nil {
					clear(outs[o.set])
				}
			} else {
				clear(arena[o.off : o.off+o.n])
			}
		}
		prodAt := len(arena) - elimBlock
		b := m.belief[st.c]
		for lo := 0; lo < st.cells; lo += elimBlock {
			hi := min(lo+elimBlock, st.cells)
			prod := arena[prodAt : prodAt+hi-lo]
			st.fromC.setFrom(prod, b, lo, hi, dig)
			st.fromIn.mulFrom(prod, msg, lo, hi, dig)
			for _, o := range st.outputs {
				dst := arena[o.off : o.off+o.n]
				if o.set >= 0 {
					if dst = outs[o.set]; dst == nil {
						continue
					}
				}
				o.p.sumTo(dst, prod, lo, hi, dig)
			}
		}
		for _, o := range st.outputs {
			if o.set < 0 || outs[o.set] == nil {
				continue
			}
			out := outs[o.set]
			s := 0.0
			for _, v := range out {
				s += v
			}
			if s > 0 {
				divBy(out, s)
			}
		}
	}
}

// pairJob runs a batch's carry plans whose running cost starts in a
// worker's range.
type pairJob struct {
	m    *Model
	b    *batch
	outs [][]float64
}

func (j *pairJob) Run(w, lo, hi int) {
	b := j.b
	for i := range b.pairs {
		if o := b.pairOff[i]; o >= lo && o < hi && b.pairLive[i] {
			j.m.runPairs(&b.pairs[i], j.outs, b.pairArena[w], j.m.dig[w])
		}
	}
}

// pairMarginal computes the marginal of D on a pair that no clique covers,
// allocating its plan and tables: the same bits as Marginals.
func (m *Model) pairMarginal(set []int, out []float64) {
	a, b := m.t.carrier(set)
	pp := m.planPairs(a, []pairTarget{{b: b, set: 0}})
	m.runPairs(&pp, [][]float64{out}, make([]float64, pp.arenaN), make([]int, len(m.t.sizes)+1))
}
