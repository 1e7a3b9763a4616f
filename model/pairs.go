package model

import (
	"cmp"
	"maps"
	"slices"
)

// The marginals of pairs and triples that no clique covers, by carrying
// one attribute (then a pair) through the clique tree.
//
// For an attribute a, the cliques holding it form a connected subtree T_a.
// Leaving T_a across a separator S, the joint table P(a, x_S) is the sum of
// a T_a clique's belief; in a clique C reached through S (a not in C, so a
// and C's other attributes are independent given x_S), P(a, x_C) =
// P(x_C)·P(a | x_S), and P(a | x_S) = P(a, x_S)/Σ_a P(a, x_S). One pass over
// the tree away from T_a, |a|·cells(C) per clique, so gives P(a, b) for
// every attribute b of every clique it reaches: the pairs of a share the
// work that variable elimination would repeat for each of them. Summed onto
// {a, b, c} instead, the same table gives the triple of a with any pair
// {b, c} of C. The pass visits only the cliques on the paths from T_a to
// the cliques of its targets.

// A triple none of whose pairs a clique covers is carried in two stages
// when one of its attributes, b, lies between the other two (every path
// from T_a to T_c passes through T_b): the pass of a reaches T_b at one
// clique E, whose table P(a, x_E) sums onto the messages P(a, b, x_S)
// toward c; from there the pair {a, b} is carried as a was, P(a, b, x_D) =
// P(x_D)·P(a, b | x_S), to the first clique holding c. When instead the
// three subtrees meet at a clique m that holds none of the three, b is
// carried alone from T_b to m, where P(a, b, x_m) = P(x_m)·P(a | x_Sa)·
// P(b | x_Sb) (the conditionals of the two incoming messages) sums onto the
// messages toward c, carried on as in the chain.

// pairOut is one output of a carry step: a target's table, or the message
// to a neighbouring clique (a table over the separator and the carried
// attributes).
type pairOut struct {
	p      proj // the step's table → the output's attributes
	set    int  // the target's index among the call's sets, or -1 for a message
	off, n int  // a message's cells in the arena
}

// pairStep is one clique of a carry plan. A seed step (a clique of T_a)
// sums its belief onto its messages; any other step turns its incoming
// message P(A, x_S) (A the carried attributes) into P(A | x_S) in place,
// then builds P(A, x_C) block by block over C ∪ A and sums each block onto
// its outputs.
type pairStep struct {
	c       int
	seed    bool
	in, inN int  // the incoming message in the arena (table over S ∪ A)
	sep     int  // separator scratch in the arena (sepN cells)
	sepN    int  //
	inSep   proj // S ∪ A → S
	fromC   proj // C ∪ A → C
	fromIn  proj // C ∪ A → S ∪ A
	cells   int  // cells of C ∪ A (of C for a seed)
	outputs []pairOut
	// A branch's meeting step: the first incoming message is already a
	// conditional (inCond), and a second one, P(b, x_S2) over S2 ∪ {b},
	// is turned into P(b | x_S2) and multiplied in too.
	inCond      bool
	in2, in2N   int
	sep2, sep2N int
	in2Sep      proj // S2 ∪ {b} → S2
	fromIn2     proj // C ∪ A → S2 ∪ {b}
}

// pairPlan carries attribute a to the cliques of its targets.
type pairPlan struct {
	a      int
	sets   []int // the targets' set indices
	steps  []pairStep
	arenaN int // messages and separator scratch, then a product block
	cost   int // cells touched
}

// Kinds of carry targets.
const (
	carryPair    = iota // {a, b}: b's first clique on the way
	carryCovered        // {a, b, c}: {b, c} is in clique cl
	carryChain          // {a, b, c}: T_b lies between T_a and T_c
	carryBranch         // {a, b, c}: T_a, T_b and T_c meet at clique cl
)

// pairTarget is a set to answer by carrying attribute a (see the kinds);
// set is its index among the call's sets.
type pairTarget struct {
	kind, b, c, cl, set int
}

// carrier splits a cross-clique pair into the attribute to carry, the one
// with fewer values (the lower on ties), and its partner.
func (t *Tree) carrier(set []int) (a, b int) {
	if t.sizes[set[1]] < t.sizes[set[0]] {
		return set[1], set[0]
	}
	return set[0], set[1]
}

// carriedTarget returns, for a set that no clique covers, the attribute to
// carry and the target that answers the set by the carry, or ok false when
// it cannot (a set of more than three attributes). A pair carries its
// smaller attribute. A triple with a covered pair carries the attribute
// outside a covered pair, the one with the fewest values (the lowest on
// ties), to the first clique covering the pair; a triple with an attribute
// b between the other two carries the smaller of those (the lower on ties)
// through T_b; any other triple carries its smallest attribute to the
// clique where the three subtrees meet, and its second smallest from T_b
// to the same clique (ties: the lower attribute first).
func (t *Tree) carriedTarget(set []int) (a int, tg pairTarget, ok bool) {
	switch len(set) {
	case 2:
		a, b := t.carrier(set)
		return a, pairTarget{kind: carryPair, b: b}, true
	case 3:
		a = -1
		for k := range 3 {
			x, rest := set[k], others(set, k)
			cl := t.Covering(rest[:])
			if cl >= 0 && (a < 0 || t.sizes[x] < t.sizes[a]) {
				a, tg = x, pairTarget{kind: carryCovered, b: rest[0], c: rest[1], cl: cl}
			}
		}
		if a >= 0 {
			return a, tg, true
		}
		for k := range 3 {
			b, ends := set[k], others(set, k)
			if !t.onPath(t.first[ends[0]], t.first[ends[1]], b) {
				continue
			}
			a, c := ends[0], ends[1]
			if t.sizes[c] < t.sizes[a] {
				a, c = c, a
			}
			return a, pairTarget{kind: carryChain, b: b, c: c}, true
		}
		// The subtrees meet at a clique holding none of them: carry the
		// two smallest attributes (the lower on ties) to it.
		order := []int{set[0], set[1], set[2]}
		slices.SortStableFunc(order, func(x, y int) int { return t.sizes[x] - t.sizes[y] })
		m := t.median(t.first[order[0]], t.first[order[1]], t.first[order[2]])
		return order[0], pairTarget{kind: carryBranch, b: order[1], c: order[2], cl: m}, true
	}
	return 0, pairTarget{}, false
}

// carryCost estimates the cells a carry of a touches to answer target tg
// alone: two passes over C ∪ {a} for every clique C on the path from T_a
// to the target's clique (T_b's first for a chain, the meeting clique for
// a branch); for a covered triple, its output's pass over its clique ∪
// {a}; for a chain triple two passes over D ∪ {a, b} for every clique D on
// the path from T_b to the end attribute's first clique; for a branch, the
// passes of b to the meeting clique m, three over m ∪ {a, b}, and those of
// {a, b} from m to c's first clique. Targets sharing the pass of a cost
// less in a batch; the estimate does not count on it.
func (t *Tree) carryCost(a int, tg pairTarget) (cost, largest float64) {
	A, AB := []int{a}, []int{a, tg.b}
	var p pathSum
	switch tg.kind {
	case carryPair:
		p.add(t, t.first[tg.b], t.first[a], A, a)
	case carryCovered:
		p.add(t, tg.cl, t.first[a], A, a)
		p.cost += t.cellsWith(tg.cl, A)
	case carryChain:
		p.add(t, t.first[tg.b], t.first[a], A, a)
		p.add(t, t.first[tg.c], t.first[tg.b], AB, tg.b)
	default:
		p.add(t, tg.cl, t.first[a], A, a)
		p.add(t, t.first[tg.b], tg.cl, []int{tg.b}, tg.b)
		p.add(t, t.first[tg.c], tg.cl, AB, a)
		p.cost += 3 * t.cellsWith(tg.cl, AB)
	}
	return p.cost, p.largest
}

// pathSum adds up the passes of a carry along tree paths.
type pathSum struct{ cost, largest float64 }

// add counts two passes over C ∪ A for every clique C on the tree path
// from u to v that does not hold attribute skip, and the largest such
// table.
func (p *pathSum) add(t *Tree, u, v int, A []int, skip int) {
	for _, c := range t.path(u, v) {
		if !t.member[c][skip] {
			n := t.cellsWith(c, A)
			p.cost += 2 * n
			p.largest = max(p.largest, n)
		}
	}
}

// median returns the clique on all three tree paths between cliques u, v
// and w: the first clique of the path from w to u on the path from u to v.
func (t *Tree) median(u, v, w int) int {
	on := make(map[int]bool)
	for _, c := range t.path(u, v) {
		on[c] = true
	}
	for _, c := range t.path(w, u) {
		if on[c] {
			return c
		}
	}
	panic("model: no median in a tree")
}

// cellsWith is the number of cells of clique c ∪ A.
func (t *Tree) cellsWith(c int, A []int) float64 {
	n := float64(t.cells[c])
	for _, x := range A {
		if !t.member[c][x] {
			n *= float64(t.sizes[x])
		}
	}
	return n
}

// crossPlan chooses how to answer a set that no clique covers: by a carry
// (ok, with the attribute a carried and the target tg) for a pair, or for
// a triple the carry can answer whose carry alone (Tree.carryCost) passes
// over no table larger than Settings.MaxElimCells, the cap on variable
// elimination's tables, and costs no more than its variable elimination
// (or that elimination would exceed the cap); else variable elimination, whose
// plan it returns (marking in needCond the conditionals the plan reads).
// The choice depends only on the set and the tree, so Marginal and
// Marginals make the same one.
func (m *Model) crossPlan(set []int, needCond []bool) (a int, tg pairTarget, ok bool, sp setPlan) {
	a, tg, ok = m.t.carriedTarget(set)
	if ok && tg.kind == carryPair {
		return a, tg, true, setPlan{}
	}
	need := make([]bool, len(m.t.cliques))
	sp = m.planSet(set, need)
	if ok {
		cost, largest := m.t.carryCost(a, tg)
		if largest <= float64(m.maxElim) && (sp.err != nil || cost <= float64(sp.cost)) {
			return a, tg, true, setPlan{}
		}
	}
	for c, need := range need {
		if need {
			needCond[c] = true
		}
	}
	return 0, pairTarget{}, false, sp
}

// others returns the triple set without its k-th attribute.
func others(set []int, k int) [2]int {
	switch k {
	case 0:
		return [2]int{set[1], set[2]}
	case 1:
		return [2]int{set[0], set[2]}
	}
	return [2]int{set[0], set[1]}
}

// onPath reports whether a clique on the tree path from clique u to clique
// v holds attribute b. (Cliques are in preorder: of two different
// cliques, the later is not an ancestor of the earlier.)
func (t *Tree) onPath(u, v, b int) bool {
	for u != v {
		if u < v {
			u, v = v, u
		}
		if t.member[u][b] {
			return true
		}
		u = t.parent[u]
	}
	return t.member[u][b]
}

// carryPlanner builds a pairPlan. The arena holds the first stage's
// messages and scratch (and the second stages' seed messages) from 0 to
// top; after them, one region that every second stage reuses (they run
// one after the other), max2 cells.
type carryPlanner struct {
	m      *Model
	pp     pairPlan
	top    int
	top2   int // the current second stage's cells
	max2   int
	failed []int // set indices left to variable elimination
}

// visit is a clique reached by a carry, with its incoming message.
type visit struct{ c, from, msg, msgN int }

// alloc takes n cells of the first stage's region.
func (cp *carryPlanner) alloc(n int) int { off := cp.top; cp.top += n; return off }

// alloc2 takes n cells of the second stages' region (planned after the
// first stage, when top is final).
func (cp *carryPlanner) alloc2(n int) int { off := cp.top + cp.top2; cp.top2 += n; return off }

// planPairs compiles the carry of attribute a to targets (none of which a
// clique covers) and returns the plan and the set indices of the targets
// it leaves to variable elimination: chain and branch triples whose
// second-stage messages would exceed Settings.MaxElimCells.
func (m *Model) planPairs(a int, targets []pairTarget) (pairPlan, []int) {
	t := m.t
	k := len(t.cliques)
	inA := make([]bool, k)
	marked := make([]bool, k)
	for c := range k {
		inA[c] = t.member[c][a]
		marked[c] = inA[c]
	}
	want := make(map[int]int, len(targets))   // a pair's b → set index
	covered := make(map[int][]pairTarget)     // a covered triple's clique → its targets
	chains := make(map[int][]pairTarget)      // a chain triple's middle b → its targets
	branches := make(map[[2]int][]pairTarget) // a branch's (b, meeting clique) → its targets
	for _, tg := range targets {
		switch tg.kind {
		case carryPair:
			want[tg.b] = tg.set
			marked[t.first[tg.b]] = true
		case carryCovered:
			covered[tg.cl] = append(covered[tg.cl], tg)
			marked[tg.cl] = true
		case carryChain:
			chains[tg.b] = append(chains[tg.b], tg)
			marked[t.first[tg.b]] = true
		default:
			key := [2]int{tg.b, tg.cl}
			branches[key] = append(branches[key], tg)
			marked[tg.cl] = true
		}
	}
	cp := &carryPlanner{m: m, pp: pairPlan{a: a}}
	for _, tg := range targets {
		cp.pp.sets = append(cp.pp.sets, tg.set)
	}
	adj := t.steinerAdj(marked)
	A := []int{a}
	seen := slices.Clone(inA)
	var queue []visit
	for c := range k {
		if inA[c] {
			queue = cp.seedStep(c, A, adj, seen, queue, cp.alloc)
		}
	}
	type stage2 struct {
		e       int // the clique E
		msgs    []visit
		targets []pairTarget
	}
	var second []stage2
	meet := make(map[int]visit) // the first stage's visit of each clique
	for q := 0; q < len(queue); q++ {
		v := queue[q]
		meet[v.c] = v
		st, sep := cp.carryStep(v, A, cp.alloc)
		u := union(t.cliques[v.c], A)
		for _, b := range t.cliques[v.c] {
			if set, ok := want[b]; ok && !slices.Contains(sep, b) {
				st.outputs = append(st.outputs, pairOut{p: newProj(t.sizes, u, union(A, []int{b})), set: set})
			}
		}
		for _, tg := range covered[v.c] {
			st.outputs = append(st.outputs, pairOut{p: newProj(t.sizes, u, union(A, []int{tg.b, tg.c})), set: tg.set})
		}
		// Second stages seeded here: the middle attributes that first
		// appear in this clique.
		for _, b := range t.cliques[v.c] {
			if tgs, ok := chains[b]; ok && !slices.Contains(sep, b) {
				if msgs, kept := cp.chainSeed(&st, v.c, union(A, []int{b}), tgs); len(kept) > 0 {
					second = append(second, stage2{e: v.c, msgs: msgs, targets: kept})
				}
			}
		}
		queue = cp.messages(&st, v.c, u, A, adj, seen, queue, cp.alloc)
		cp.pp.cost += 2*v.msgN + st.cells*(2+len(st.outputs))
		cp.pp.steps = append(cp.pp.steps, st)
	}
	for _, s2 := range second {
		cp.top2 = 0
		cp.stage2(s2.e, s2.msgs, s2.targets)
	}
	keys := slices.Collect(maps.Keys(branches))
	slices.SortFunc(keys, func(x, y [2]int) int { return cmp.Or(x[0]-y[0], x[1]-y[1]) })
	for _, key := range keys {
		cp.branch(key[1], key[0], meet[key[1]], branches[key])
	}
	cp.pp.arenaN = cp.top + cp.max2 + elimBlock
	cp.pp.sets = slices.DeleteFunc(cp.pp.sets, func(s int) bool { return slices.Contains(cp.failed, s) })
	return cp.pp, cp.failed
}

// seedStep adds the step of a clique c holding A: its belief summed onto
// the messages to its neighbours in adj not yet seen (queued, in cells
// from alloc).
func (cp *carryPlanner) seedStep(c int, A []int, adj [][]int, seen []bool, queue []visit, alloc func(int) int) []visit {
	t := cp.m.t
	st := pairStep{c: c, seed: true, cells: t.cells[c]}
	queue = cp.messages(&st, c, t.cliques[c], A, adj, seen, queue, alloc)
	if len(st.outputs) > 0 {
		cp.pp.cost += st.cells * len(st.outputs)
		cp.pp.steps = append(cp.pp.steps, st)
	}
	return queue
}

// carryStep returns the step of clique v.c carrying A from its incoming
// message (outputs to add), with its scratch from alloc, and the
// separator it was entered by.
func (cp *carryPlanner) carryStep(v visit, A []int, alloc func(int) int) (pairStep, []int) {
	t := cp.m.t
	sizes := t.sizes
	c := v.c
	sep := intersect(t.cliques[c], t.cliques[v.from])
	inAttrs := union(sep, A)
	u := union(t.cliques[c], A)
	st := pairStep{c: c, in: v.msg, inN: v.msgN, inSep: newProj(sizes, inAttrs, sep),
		fromC: newProj(sizes, u, t.cliques[c]), fromIn: newProj(sizes, u, inAttrs), cells: int(cellsOf(sizes, u))}
	st.sepN = int(cellsOf(sizes, sep))
	st.sep = alloc(st.sepN)
	return st, sep
}

// messages adds to st (the step of clique c, carrying A, whose table is
// over u) the messages to c's neighbours in adj not yet seen, in cells
// from alloc, and queues them.
func (cp *carryPlanner) messages(st *pairStep, c int, u, A []int, adj [][]int, seen []bool, queue []visit, alloc func(int) int) []visit {
	t := cp.m.t
	for _, n := range adj[c] {
		if seen[n] {
			continue
		}
		seen[n] = true
		attrs := union(intersect(t.cliques[c], t.cliques[n]), A)
		n2 := int(cellsOf(t.sizes, attrs))
		off := alloc(n2)
		st.outputs = append(st.outputs, pairOut{p: newProj(t.sizes, u, attrs), set: -1, off: off, n: n2})
		queue = append(queue, visit{c: n, from: c, msg: off, msgN: n2})
	}
	return queue
}

// chainSeed adds to st (the step of clique e, where the middle attribute
// of targets first appears) the messages P(A2, x_S) toward the targets'
// end attributes, A2 = {a, b}, in the first stage's region, and returns
// them with the targets kept: a target one of whose second-stage messages
// would exceed Settings.MaxElimCells is left to variable elimination.
func (cp *carryPlanner) chainSeed(st *pairStep, e int, A2 []int, targets []pairTarget) ([]visit, []pairTarget) {
	t := cp.m.t
	kept := cp.underCap(e, A2, targets)
	if len(kept) == 0 {
		return nil, nil
	}
	seen := make([]bool, len(t.cliques))
	seen[e] = true
	u := union(t.cliques[e], A2) // e holds b: e ∪ {a}
	return cp.messages(st, e, u, A2, cp.stage2Adj(e, kept), seen, nil, cp.alloc), kept
}

// underCap returns the targets whose second-stage messages, carrying A2
// from clique e to the first clique holding the target's end attribute,
// stay under Settings.MaxElimCells (the same choice for any list of
// targets); it leaves the others to variable elimination.
func (cp *carryPlanner) underCap(e int, A2 []int, targets []pairTarget) []pairTarget {
	t := cp.m.t
	kept := targets[:0:0]
	for _, tg := range targets {
		path, fits := t.path(e, t.first[tg.c]), true
		for k := 1; k < len(path) && fits; k++ {
			fits = cellsOf(t.sizes, union(intersect(t.cliques[path[k-1]], t.cliques[path[k]]), A2)) <= float64(cp.m.maxElim)
		}
		if fits {
			kept = append(kept, tg)
		} else {
			cp.failed = append(cp.failed, tg.set)
		}
	}
	return kept
}

// branch adds the steps of the branch targets meeting at clique m with
// middle attribute b: b carried alone from T_b to m, the meeting step at m
// (its first incoming message, that of a, is a's visit of m in the first
// stage, already a conditional when it runs), and the second stage of
// {a, b} from m to the targets' end attributes, all in the second stages'
// region.
func (cp *carryPlanner) branch(m, b int, xv visit, targets []pairTarget) {
	t := cp.m.t
	sizes := t.sizes
	a := cp.pp.a
	A2 := union([]int{a}, []int{b})
	kept := cp.underCap(m, A2, targets)
	if len(kept) == 0 {
		return
	}
	cp.top2 = 0
	// b from the last clique holding it on the path to m, to m.
	path := t.path(t.first[b], m)
	src := path[0]
	for _, c := range path {
		if t.member[c][b] {
			src = c
		}
	}
	B := []int{b}
	marked := make([]bool, len(t.cliques))
	marked[src], marked[m] = true, true
	adjB := t.steinerAdj(marked)
	seen := make([]bool, len(t.cliques))
	seen[src] = true
	queue := cp.seedStep(src, B, adjB, seen, nil, cp.alloc2)
	var msg visit // the message into m
	for q := 0; ; q++ {
		v := queue[q]
		if v.c == m {
			msg = v
			break
		}
		st, _ := cp.carryStep(v, B, cp.alloc2)
		queue = cp.messages(&st, v.c, union(t.cliques[v.c], B), B, adjB, seen, queue, cp.alloc2)
		cp.pp.cost += 2*v.msgN + st.cells*(2+len(st.outputs))
		cp.pp.steps = append(cp.pp.steps, st)
	}
	// The meeting step: P(x_m)·P(a | x_Sa)·P(b | x_Sb) over m ∪ {a, b}.
	u := union(t.cliques[m], A2)
	sa := intersect(t.cliques[m], t.cliques[xv.from])
	sb := intersect(t.cliques[m], t.cliques[msg.from])
	st := pairStep{c: m, in: xv.msg, inN: xv.msgN, inCond: true,
		fromC: newProj(sizes, u, t.cliques[m]), fromIn: newProj(sizes, u, union(sa, []int{a})), cells: int(cellsOf(sizes, u)),
		in2: msg.msg, in2N: msg.msgN, in2Sep: newProj(sizes, union(sb, B), sb), fromIn2: newProj(sizes, u, union(sb, B))}
	st.sep2N = int(cellsOf(sizes, sb))
	st.sep2 = cp.alloc2(st.sep2N)
	seen = make([]bool, len(t.cliques))
	seen[m] = true
	msgs := cp.messages(&st, m, u, A2, cp.stage2Adj(m, kept), seen, nil, cp.alloc2)
	cp.pp.cost += 2*msg.msgN + st.cells*(3+len(st.outputs))
	cp.pp.steps = append(cp.pp.steps, st)
	cp.stage2(m, msgs, kept)
}

// path returns the cliques of the tree path from u to v, in order.
func (t *Tree) path(u, v int) []int {
	var up, down []int
	for u != v {
		if u > v {
			up = append(up, u)
			u = t.parent[u]
		} else {
			down = append(down, v)
			v = t.parent[v]
		}
	}
	up = append(up, u)
	slices.Reverse(down)
	return append(up, down...)
}

// stage2Adj is the subtree of a second stage: from clique e to the first
// cliques holding the targets' end attributes.
func (cp *carryPlanner) stage2Adj(e int, targets []pairTarget) [][]int {
	t := cp.m.t
	marked := make([]bool, len(t.cliques))
	marked[e] = true
	for _, tg := range targets {
		marked[t.first[tg.c]] = true
	}
	return t.steinerAdj(marked)
}

// stage2 adds the steps of a second stage: {a, b} carried from clique e
// by the messages msgs to the first cliques holding the targets' end
// attributes, in the second stages' region (after the cp.top2 cells the
// stage has taken already).
func (cp *carryPlanner) stage2(e int, msgs []visit, targets []pairTarget) {
	t := cp.m.t
	A2 := union([]int{cp.pp.a}, []int{targets[0].b})
	ends := make(map[int]int, len(targets))
	for _, tg := range targets {
		ends[tg.c] = tg.set
	}
	adj := cp.stage2Adj(e, targets)
	seen := make([]bool, len(t.cliques))
	seen[e] = true
	for _, v := range msgs {
		seen[v.c] = true
	}
	queue := slices.Clone(msgs)
	for q := 0; q < len(queue); q++ {
		v := queue[q]
		st, sep := cp.carryStep(v, A2, cp.alloc2)
		u := union(t.cliques[v.c], A2)
		for _, c := range t.cliques[v.c] {
			if set, ok := ends[c]; ok && !slices.Contains(sep, c) {
				st.outputs = append(st.outputs, pairOut{p: newProj(t.sizes, u, union(A2, []int{c})), set: set})
			}
		}
		queue = cp.messages(&st, v.c, u, A2, adj, seen, queue, cp.alloc2)
		cp.pp.cost += 2*v.msgN + st.cells*(2+len(st.outputs))
		cp.pp.steps = append(cp.pp.steps, st)
	}
	cp.max2 = max(cp.max2, cp.top2)
}

// steinerAdj returns the adjacency lists of the smallest subtree of the
// clique tree holding the marked cliques (Tree.steinerEdges).
func (t *Tree) steinerAdj(marked []bool) [][]int {
	adj := make([][]int, len(t.cliques))
	for c, e := range t.steinerEdges(marked) {
		if e {
			p := t.parent[c]
			adj[c] = append(adj[c], p)
			adj[p] = append(adj[p], c)
		}
	}
	return adj
}

// steinerEdges reports, for each clique c, whether the edge from c to its
// parent is in the smallest subtree of the clique tree holding the marked
// cliques: c's subtree holds some but not all of them.
func (t *Tree) steinerEdges(marked []bool) []bool {
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
	edge := make([]bool, k)
	for c := range k {
		edge[c] = t.parent[c] >= 0 && cnt[c] > 0 && cnt[c] < total
	}
	return edge
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
		msg := arena[st.in : st.in+st.inN]
		if !st.inCond {
			condIn(msg, arena[st.sep:st.sep+st.sepN], &st.inSep, dig)
		}
		var msg2 []float64
		if st.in2N > 0 {
			msg2 = arena[st.in2 : st.in2+st.in2N]
			condIn(msg2, arena[st.sep2:st.sep2+st.sep2N], &st.in2Sep, dig)
		}
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
			if msg2 != nil {
				st.fromIn2.mulFrom(prod, msg2, lo, hi, dig)
			}
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

// condIn turns a message P(A, x_S) into P(A | x_S) in place: divided by
// its sum over A (0 where that is 0, or so small that its reciprocal
// overflows: a subnormal mass, which would turn the message's zeros into
// NaN), with sep (cells of S) as scratch.
func condIn(msg, sep []float64, inSep *proj, dig []int) {
	clear(sep)
	inSep.sumTo(sep, msg, 0, len(msg), dig)
	for j, v := range sep {
		sep[j] = reciprocal(v)
	}
	inSep.mulFrom(msg, sep, 0, len(msg), dig)
}

// reciprocal is 1/v for a mass v whose reciprocal is finite, else 0.
func reciprocal(v float64) float64 {
	if v >= minMass {
		return 1 / v
	}
	return 0
}

// minMass is the smallest mass with a finite reciprocal: the smallest
// normal float64.
const minMass = 0x1p-1022

// pairJob runs a batch's carry plans of b.units, taken one at a time.
type pairJob struct {
	m    *Model
	b    *batch
	outs [][]float64
	q    unitQueue
}

func (j *pairJob) Run(w, lo, hi int) {
	b := j.b
	for i, ok := j.q.take(j.m, b.units); ok; i, ok = j.q.take(j.m, b.units) {
		j.m.runPairs(&b.pairs[i], j.outs, b.pairArena[w], j.m.dig[w])
	}
}

// carriedMarginal computes the marginal of D on a set that no clique
// covers by carrying attribute a to target tg (Model.crossPlan),
// allocating its plan and tables: the same bits as Marginals. It reports
// false, writing nothing, when the plan leaves the set to variable
// elimination.
func (m *Model) carriedMarginal(a int, tg pairTarget, out []float64) bool {
	tg.set = 0
	pp, failed := m.planPairs(a, []pairTarget{tg})
	if len(failed) > 0 {
		return false
	}
	m.runPairs(&pp, [][]float64{out}, make([]float64, pp.arenaN), make([]int, len(m.t.sizes)+1))
	return true
}
