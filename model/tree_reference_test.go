package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// newTreeReference is NewTree as it was before its elimination walked
// bitsets and its spanning tree used Prim's algorithm (kept to check that
// the faster one builds the same trees).
func newTreeReference(sizes []int, sets [][]int) (*Tree, error) {
	n := len(sizes)
	for a, s := range sizes {
		if s < 1 {
			return nil, fmt.Errorf("model: attribute %d has size %d, want at least 1", a, s)
		}
	}
	adj := make([][]bool, n)
	for a := range adj {
		adj[a] = make([]bool, n)
	}
	for i, set := range sets {
		for k, a := range set {
			if a < 0 || a >= n {
				return nil, fmt.Errorf("model: set %d %v: attribute %d out of range [0, %d)", i, set, a, n)
			}
			if k > 0 && a <= set[k-1] {
				return nil, fmt.Errorf("model: set %d %v is not strictly increasing", i, set)
			}
			for _, b := range set[:k] {
				adj[a][b], adj[b][a] = true, true
			}
		}
	}

	// Greedy elimination.
	elim := make([]bool, n)
	var raw [][]int // the clique of each eliminated vertex
	nb := make([]int, 0, n)
	for range n {
		best, bestW, bestFill := -1, 0.0, 0
		for v := range n {
			if elim[v] {
				continue
			}
			w := float64(sizes[v])
			nb = nb[:0]
			for u := range n {
				if u != v && !elim[u] && adj[v][u] {
					w *= float64(sizes[u])
					nb = append(nb, u)
				}
			}
			if best >= 0 && w > bestW {
				continue
			}
			fill := 0
			for i, a := range nb {
				for _, b := range nb[i+1:] {
					if !adj[a][b] {
						fill++
					}
				}
			}
			if best < 0 || w < bestW || fill < bestFill {
				best, bestW, bestFill = v, w, fill
			}
		}
		v := best
		c := []int{v}
		for u := range n {
			if u != v && !elim[u] && adj[v][u] {
				c = append(c, u)
			}
		}
		for i, a := range c[1:] {
			for _, b := range c[i+2:] {
				adj[a][b], adj[b][a] = true, true
			}
		}
		elim[v] = true
		slices.Sort(c)
		raw = append(raw, c)
	}

	// Maximal cliques, in elimination order.
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
	for _, c := range cl {
		if cells := cellsOf(sizes, c); cells > maxCells {
			return nil, &TooLargeError{What: fmt.Sprintf("clique on attributes %v", c), Cells: cells, Cap: maxCells}
		}
	}

	// Maximum-weight spanning tree (Kruskal) on all pairs of cliques.
	k := len(cl)
	type edge struct {
		i, j  int
		count int
		cells float64
	}
	var edges []edge
	for i := range k {
		for j := i + 1; j < k; j++ {
			s := intersect(cl[i], cl[j])
			edges = append(edges, edge{i, j, len(s), cellsOf(sizes, s)})
		}
	}
	sort.SliceStable(edges, func(x, y int) bool {
		a, b := edges[x], edges[y]
		if a.count != b.count {
			return a.count > b.count
		}
		if a.cells != b.cells {
			return a.cells > b.cells
		}
		if a.i != b.i {
			return a.i < b.i
		}
		return a.j < b.j
	})
	uf := make([]int, k)
	for i := range uf {
		uf[i] = i
	}
	find := func(x int) int {
		for uf[x] != x {
			uf[x] = uf[uf[x]]
			x = uf[x]
		}
		return x
	}
	nbr := make([][]int, k)
	for _, e := range edges {
		ri, rj := find(e.i), find(e.j)
		if ri == rj {
			continue
		}
		uf[ri] = rj
		nbr[e.i] = append(nbr[e.i], e.j)
		nbr[e.j] = append(nbr[e.j], e.i)
	}
	for i := range nbr {
		slices.Sort(nbr[i])
	}

	// Root: most cells; preorder numbering.
	root := 0
	for i := range cl {
		if cellsOf(sizes, cl[i]) > cellsOf(sizes, cl[root]) {
			root = i
		}
	}
	order := make([]int, 0, k)
	oldParent := make([]int, k)
	seen := make([]bool, k)
	var dfs func(v, p int)
	dfs = func(v, p int) {
		seen[v] = true
		oldParent[v] = p
		order = append(order, v)
		for _, u := range nbr[v] {
			if !seen[u] {
				dfs(u, v)
			}
		}
	}
	dfs(root, -1)
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
	return t, nil
}

// TestNewTreeMatchesReference: on 400 random graphs (3 to 90 attributes,
// sparse to dense), NewTree builds the same tree as the reference: the same
// cliques in the same order with the same parents and separators.
func TestNewTreeMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 400 {
		n := 3 + r.IntN(88)
		sizes := make([]int, n)
		for i := range sizes {
			sizes[i] = 2 + r.IntN(6)
		}
		var sets [][]int
		for range r.IntN(2 * n) {
			k := 2 + r.IntN(2)
			s := map[int]bool{}
			for len(s) < k {
				s[r.IntN(n)] = true
			}
			var set []int
			for a := range s {
				set = append(set, a)
			}
			slices.Sort(set)
			sets = append(sets, set)
		}
		got, err1 := NewTree(sizes, sets)
		want, err2 := newTreeReference(sizes, sets)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("trial %d: errors %v and %v", trial, err1, err2)
		}
		if err1 != nil {
			continue
		}
		g, w := fmt.Sprint(got.Cliques()), fmt.Sprint(want.Cliques())
		if g != w {
			t.Fatalf("trial %d: cliques %s, want %s", trial, g, w)
		}
		for c := range got.Cliques() {
			if got.Parent(c) != want.Parent(c) || !slices.Equal(got.Separator(c), want.Separator(c)) {
				t.Fatalf("trial %d: clique %d: parent %d sep %v, want %d %v", trial, c, got.Parent(c), got.Separator(c), want.Parent(c), want.Separator(c))
			}
		}
	}
}
