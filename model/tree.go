package model

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
)

// maxCells is the largest number of cells a clique may have: 2^53, the
// largest integer a float64 (and so a cell count computed in float64)
// holds exactly.
const maxCells = 1 << 53

// TooLargeError reports a table that would exceed a cap: a clique of more
// than 2^53 cells in NewTree, or an intermediate table of a cross-clique
// Marginal above Settings.MaxElimCells.
type TooLargeError struct {
	What  string  // the table, e.g. "clique on attributes [0 3 5]"
	Cells float64 // cells it would need
	Cap   float64 // the cap it exceeds
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("model: %s needs %.4g cells, over the cap of %.4g cells", e.What, e.Cells, e.Cap)
}

// Tree is the junction tree of a model: maximal cliques of a triangulation
// of the interaction graph, joined in a tree whose separators are the
// cliques' intersections. Cliques are numbered in depth-first preorder from
// the root (clique 0), so every clique's parent has a smaller index. A Tree
// is immutable and safe for concurrent use.
type Tree struct {
	sizes   []int
	cliques [][]int  // increasing attribute positions
	member  [][]bool // member[c][a]: attribute a is in clique c
	cells   []int    // cells per clique
	parent  []int    // parent clique, -1 for the root
	child   [][]int  // children in increasing order
	sep     [][]int  // sep[c] = cliques[c] ∩ cliques[parent[c]] (nil for the root)
	sepCell []int    // cells of sep[c] (1 for the root)
	strides [][]int  // strides[c][k]: stride of cliques[c][k] in clique c's table
	total   float64  // Σ cells
	first   []int    // first[a]: the first clique (in preorder) holding attribute a
}

// NewTree plans a junction tree for a model whose log-potentials live on
// sets (attribute positions into sizes, each set strictly increasing); each
// set ends up inside one clique, and attributes in no set get a singleton
// clique. The graph joining the attributes of each set is triangulated by a
// greedy elimination order: eliminate the vertex whose neighbourhood (with
// itself) has the fewest cells, ties broken by the fewest fill edges, then
// the lowest index. The maximal cliques are joined by a maximum-weight
// spanning tree whose edge weight is the number of shared attributes (ties:
// more separator cells, then lower clique indices), which guarantees the
// running intersection property; cliques of separate components are joined
// by empty separators. The root is the clique with the most cells (lowest
// index on ties).
//
// NewTree allocates nothing proportional to clique cells. It returns an
// error for sizes below 1, sets out of range or not increasing, and a
// *TooLargeError for a clique of more than 2^53 cells.
func NewTree(sizes []int, sets [][]int) (*Tree, error) {
	for a, s := range sizes {
		if s < 1 {
			return nil, fmt.Errorf("model: attribute %d has size %d, want at least 1", a, s)
		}
	}
	g, err := interactionGraph(len(sizes), sets)
	if err != nil {
		return nil, err
	}
	cl := maximalCliques(g.eliminate(sizes))
	for _, c := range cl {
		if cells := cellsOf(sizes, c); cells > maxCells {
			return nil, &TooLargeError{What: fmt.Sprintf("clique on attributes %v", c), Cells: cells, Cap: maxCells}
		}
	}
	nbr := spanningTree(sizes, cl)
	order, oldParent := preorder(sizes, cl, nbr)
	return assembleTree(sizes, cl, order, oldParent), nil
}

// graph is the attributes' interaction graph, one bitset row per
// attribute, with the set of attributes not yet eliminated.
type graph struct {
	n, words  int
	adj, live []uint64
}

// interactionGraph links every two attributes that share one of sets.
func interactionGraph(n int, sets [][]int) (*graph, error) {
	words := (n + 63) / 64
	g := &graph{n: n, words: words, adj: make([]uint64, n*words), live: make([]uint64, words)}
	for i, set := range sets {
		for k, a := range set {
			if a < 0 || a >= n {
				return nil, fmt.Errorf("model: set %d %v: attribute %d out of range [0, %d)", i, set, a, n)
			}
			if k > 0 && a <= set[k-1] {
				return nil, fmt.Errorf("model: set %d %v is not strictly increasing", i, set)
			}
			for _, b := range set[:k] {
				g.link(a, b)
			}
		}
	}
	for v := range n {
		g.live[v/64] |= 1 << (v % 64)
	}
	return g, nil
}

func (g *graph) has(a, b int) bool { return g.adj[a*g.words+b/64]&(1<<(b%64)) != 0 }

func (g *graph) link(a, b int) {
	g.adj[a*g.words+b/64] |= 1 << (b % 64)
	g.adj[b*g.words+a/64] |= 1 << (a % 64)
}

// neighbours appends v's live neighbours to out, in increasing order.
func (g *graph) neighbours(v int, out []int) []int {
	for k := range g.words {
		x := g.adj[v*g.words+k] & g.live[k]
		for x != 0 {
			out = append(out, k*64+bits.TrailingZeros64(x))
			x &= x - 1
		}
	}
	return out
}

// eliminate eliminates every vertex greedily, the one whose live
// neighbourhood has the fewest cells first, then the least fill-in, and
// returns the clique (sorted) of each eliminated vertex, in order.
// Neighbours are visited in increasing order, so the products are computed
// in a fixed order.
func (g *graph) eliminate(sizes []int) [][]int {
	var raw [][]int
	nb := make([]int, 0, g.n)
	for range g.n {
		best, bestW, bestFill := -1, 0.0, 0
		for v := range g.n {
			if g.live[v/64]&(1<<(v%64)) == 0 {
				continue
			}
			w := float64(sizes[v])
			nb = g.neighbours(v, nb[:0])
			for _, u := range nb {
				w *= float64(sizes[u])
			}
			if best >= 0 && w > bestW {
				continue
			}
			fill := 0
			for i, a := range nb {
				for _, b := range nb[i+1:] {
					if !g.has(a, b) {
						fill++
					}
				}
			}
			if best < 0 || w < bestW || fill < bestFill {
				best, bestW, bestFill = v, w, fill
			}
		}
		v := best
		c := g.neighbours(v, []int{v})
		for i, a := range c[1:] {
			for _, b := range c[i+2:] {
				g.link(a, b)
			}
		}
		g.live[v/64] &^= 1 << (v % 64)
		slices.Sort(c)
		raw = append(raw, c)
	}
	return raw
}

// maximalCliques returns the cliques of raw that no other contains (of
// equal cliques, the first), in raw's order.
func maximalCliques(raw [][]int) [][]int {
	var cl [][]int
	for i, c := range raw {
		maximal := true
		for j, d := range raw {
			if i == j || len(d) < len(c) || (len(d) == len(c) && j > i) {
				continue
			}
			if subset(c, d) {
				maximal = false
				break
			}
		}
		if maximal {
			cl = append(cl, c)
		}
	}
	return cl
}

// spanningTree returns the neighbours (sorted) of each clique in the
// maximum-weight spanning tree on all pairs of cliques. Edge a precedes b:
// more shared attributes, then more separator cells, then the lower pair. A
// strict total order, so the maximum spanning tree is unique: Prim's
// algorithm on the complete graph of cliques finds it in O(k²) without
// sorting the k² pairs.
func spanningTree(sizes []int, cl [][]int) [][]int {
	k := len(cl)
	type edge struct {
		i, j  int
		count int
		cells float64
	}
	precedes := func(a, b edge) bool {
		switch {
		case a.count != b.count:
			return a.count > b.count
		case a.cells != b.cells:
			return a.cells > b.cells
		case a.i != b.i:
			return a.i < b.i
		}
		return a.j < b.j
	}
	pair := func(a, b int) edge {
		a, b = min(a, b), max(a, b)
		count, cells := overlap(sizes, cl[a], cl[b])
		return edge{a, b, count, cells}
	}
	nbr := make([][]int, k)
	if k > 1 {
		inTree := make([]bool, k)
		best := make([]edge, k) // the best edge from each clique outside to the tree
		inTree[0] = true
		for v := 1; v < k; v++ {
			best[v] = pair(0, v)
		}
		for range k - 1 {
			v := -1
			for u := 1; u < k; u++ {
				if !inTree[u] && (v < 0 || precedes(best[u], best[v])) {
					v = u
				}
			}
			e := best[v]
			nbr[e.i] = append(nbr[e.i], e.j)
			nbr[e.j] = append(nbr[e.j], e.i)
			inTree[v] = true
			for u := 1; u < k; u++ {
				if !inTree[u] {
					if c := pair(v, u); precedes(c, best[u]) {
						best[u] = c
					}
				}
			}
		}
	}
	for i := range nbr {
		slices.Sort(nbr[i])
	}
	return nbr
}

// preorder roots the tree at the clique with the most cells and returns
// the cliques in preorder with each one's parent (-1 at the root).
func preorder(sizes []int, cl, nbr [][]int) (order, parent []int) {
	k := len(cl)
	root := 0
	for i := range cl {
		if cellsOf(sizes, cl[i]) > cellsOf(sizes, cl[root]) {
			root = i
		}
	}
	order = make([]int, 0, k)
	parent = make([]int, k)
	seen := make([]bool, k)
	var dfs func(v, p int)
	dfs = func(v, p int) {
		seen[v] = true
		parent[v] = p
		order = append(order, v)
		for _, u := range nbr[v] {
			if !seen[u] {
				dfs(u, v)
			}
		}
	}
	dfs(root, -1)
	return order, parent
}

// assembleTree numbers the cliques in preorder and fills the tree's
// tables: members, cells, strides, parents, children and separators, and
// each attribute's first clique.
func assembleTree(sizes []int, cl [][]int, order, oldParent []int) *Tree {
	n, k := len(sizes), len(cl)
	newIdx := make([]int, k)
	for i, v := range order {
		newIdx[v] = i
	}
	t := &Tree{
		sizes:   slices.Clone(sizes),
		cliques: make([][]int, k),
		member:  make([][]bool, k),
		cells:   make([]int, k),
		parent:  make([]int, k),
		child:   make([][]int, k),
		sep:     make([][]int, k),
		sepCell: make([]int, k),
		strides: make([][]int, k),
		first:   make([]int, n),
	}
	for i, v := range order {
		c := cl[v]
		t.cliques[i] = c
		t.cells[i] = int(cellsOf(sizes, c))
		t.total += float64(t.cells[i])
		t.member[i] = make([]bool, n)
		for _, a := range c {
			t.member[i][a] = true
		}
		t.strides[i] = make([]int, len(c))
		st := 1
		for q := len(c) - 1; q >= 0; q-- {
			t.strides[i][q] = st
			st *= sizes[c[q]]
		}
		t.parent[i] = -1
		t.sepCell[i] = 1
		if p := oldParent[v]; p >= 0 {
			t.parent[i] = newIdx[p]
			t.child[newIdx[p]] = append(t.child[newIdx[p]], i)
			t.sep[i] = intersect(c, cl[p])
			t.sepCell[i] = int(cellsOf(sizes, t.sep[i]))
		}
	}
	for a := range t.first {
		t.first[a] = -1
		for c := range k {
			if t.member[c][a] {
				t.first[a] = c
				break
			}
		}
	}
	return t
}

// cellsOf is the product of the sizes of set's attributes, in float64 (it
// saturates to +Inf rather than overflow).
func cellsOf(sizes, set []int) float64 {
	p := 1.0
	for _, a := range set {
		p *= float64(sizes[a])
	}
	return p
}

// overlap returns the size and the cells of the intersection of the
// increasing sets a and b, without building it.
func overlap(sizes, a, b []int) (int, float64) {
	n, cells := 0, 1.0
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			n++
			cells *= float64(sizes[x])
		}
	}
	return n, cells
}

// subset reports whether increasing a is a subset of increasing b.
func subset(a, b []int) bool {
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
	}
	return true
}

// intersect returns the intersection of increasing a and b.
func intersect(a, b []int) []int {
	var s []int
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			s = append(s, x)
		}
	}
	return s
}

// Sizes returns the attribute sizes (do not modify).
func (t *Tree) Sizes() []int { return t.sizes }

// Cliques returns the cliques, each an increasing list of attribute
// positions, in preorder from the root (do not modify).
func (t *Tree) Cliques() [][]int { return t.cliques }

// Cells returns the number of cells of clique c.
func (t *Tree) Cells(c int) int { return t.cells[c] }

// TotalCells returns the sum of the cliques' cells.
func (t *Tree) TotalCells() float64 { return t.total }

// Parent returns the parent of clique c in the clique tree, -1 for the root.
func (t *Tree) Parent(c int) int { return t.parent[c] }

// Separator returns clique c's separator with its parent (nil for the
// root; do not modify).
func (t *Tree) Separator(c int) []int { return t.sep[c] }

// Covering returns the index of the smallest clique (fewest cells, lowest
// index on ties) that contains every attribute of set, or -1 if none does
// or set holds an attribute out of range.
func (t *Tree) Covering(set []int) int {
	best := -1
	for c, mem := range t.member {
		ok := true
		for _, a := range set {
			if a < 0 || a >= len(mem) || !mem[a] {
				ok = false
				break
			}
		}
		if ok && (best < 0 || t.cells[c] < t.cells[best]) {
			best = c
		}
	}
	return best
}

// cliqueLevels groups the cliques but the root by height (leaves first, for
// the upward pass) and by depth (the root's children first, for the
// downward pass).
func (t *Tree) cliqueLevels() (up, down []cliqueLevel) {
	k := len(t.cliques)
	height := make([]int, k)
	depth := make([]int, k)
	for c := k - 1; c > 0; c-- { // children have larger indices
		height[t.parent[c]] = max(height[t.parent[c]], height[c]+1)
	}
	for c := 1; c < k; c++ {
		depth[c] = depth[t.parent[c]] + 1
	}
	group := func(key []int) []cliqueLevel {
		var ls []cliqueLevel
		for c := 1; c < k; c++ {
			for len(ls) <= key[c] {
				ls = append(ls, cliqueLevel{off: []int{0}})
			}
			l := &ls[key[c]]
			l.cl = append(l.cl, c)
			l.off = append(l.off, l.off[len(l.off)-1]+t.cells[c])
			l.maxCell = max(l.maxCell, t.cells[c])
		}
		out := ls[:0]
		for _, l := range ls {
			if len(l.cl) > 0 {
				out = append(out, l)
			}
		}
		return out
	}
	up = group(height)
	down = group(depth)
	if len(down) > 0 && len(down[0].cl) == 0 {
		down = down[1:]
	}
	return up, down
}

// Bytes returns every byte that New, Calibrate and an in-clique Marginal
// allocate for this tree with GOMAXPROCS workers (see BytesFor).
func (t *Tree) Bytes() uint64 { return t.BytesFor(runtime.GOMAXPROCS(0)) }

// BytesFor returns every byte that New, Calibrate and an in-clique
// Marginal allocate for this tree with the given number of workers
// (0: GOMAXPROCS): the potentials and beliefs (two float64 per clique
// cell), a scratch table as large as the largest clique with children, the
// upward messages and their shifts (two float64 per
// separator cell),
// the scratch tables and the workers' partial sums, rounded up as the Go
// allocator does, plus a fixed allowance for the small bookkeeping. It
// saturates at the largest uint64.
func (t *Tree) BytesFor(workers int) uint64 {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	l := t.layout(workers)
	b := 0.0
	b += 2 * allocBytes(8*l.cliqueCells)
	b += allocBytes(8*float64(l.maxInner)) + allocBytes(8*float64(l.maxSep))
	b += float64(workers-1) * (allocBytes(8*float64(min(l.maxInner, minParallel))) + allocBytes(8*float64(min(l.maxSep, minParallel))))
	b += 2 * allocBytes(8*l.sepCells) // upward messages and their shifts
	b += float64(workers-1) * allocBytes(8*float64(l.part))
	b += float64(workers) * allocBytes(8*float64(len(t.sizes)+1))
	b += allocBytes(8 * float64(l.projInts))
	b += 16384 + 1024*float64(workers) + 512*float64(len(t.cliques))
	if b >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(b)
}

// layout is the sizes of the Model's buffers.
type layout struct {
	cliqueCells float64 // Σ clique cells
	sepCells    float64 // Σ separator cells
	maxSep      int     // largest separator (≥ 1)
	maxInner    int     // cells of the largest clique with children
	part        int     // length of each extra worker's partial-sum buffer
	projInts    float64 // ints of the precomputed projections
}

func (t *Tree) layout(workers int) layout {
	var l layout
	l.maxSep = 1
	maxCell := 1
	for c := range t.cliques {
		l.cliqueCells += float64(t.cells[c])
		maxCell = max(maxCell, t.cells[c])
		if len(t.child[c]) > 0 {
			l.maxInner = max(l.maxInner, t.cells[c])
		}
		if t.parent[c] >= 0 {
			l.sepCells += float64(t.sepCell[c])
			l.maxSep = max(l.maxSep, t.sepCell[c])
			// two projections (child side, parent side), dims and strides
			l.projInts += 2 * float64(len(t.cliques[c])+len(t.cliques[t.parent[c]])+2)
		}
	}
	l.projInts += 2 * float64(len(t.sizes)+1) // the scratch projection
	if workers > 1 {
		l.part = min(maxCell, max(l.maxSep, partMin))
	}
	return l
}

// partMin is the least length of a worker's partial-sum buffer: in-clique
// marginals up to this many cells sum in parallel.
const partMin = 1 << 12

// allocBytes rounds an allocation of b bytes up as the Go allocator does
// (size classes below 32 KiB, whole 8 KiB pages above), generously.
func allocBytes(b float64) float64 {
	if b == 0 {
		return 0
	}
	if b <= 32768 {
		return b*1.125 + 16
	}
	return math.Ceil(b/8192) * 8192
}
