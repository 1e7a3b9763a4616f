package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// shape is a named graph on attributes with its attribute sets.
type shape struct {
	name  string
	n     int
	sets  [][]int
	maxSz int // largest attribute size (keeps brute force small)
}

func shapes() []shape {
	cycle := func(n int) [][]int {
		var s [][]int
		for i := range n {
			a, b := i, (i+1)%n
			s = append(s, []int{min(a, b), max(a, b)})
		}
		return s
	}
	var grid [][]int
	for r := range 3 {
		for c := range 3 {
			v := 3*r + c
			if c < 2 {
				grid = append(grid, []int{v, v + 1})
			}
			if r < 2 {
				grid = append(grid, []int{v, v + 3})
			}
		}
	}
	return []shape{
		{"chain", 5, [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}, 5},
		{"star", 5, [][]int{{0, 1}, {0, 2}, {0, 3}, {0, 4}}, 5},
		{"cycle4", 4, cycle(4), 5},
		{"cycle5", 5, cycle(5), 5},
		{"cycle6", 6, cycle(6), 4},
		{"grid3x3", 9, grid, 3},
		{"complete4", 4, [][]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}, 5},
		{"complete4-triples", 4, [][]int{{0, 1, 2}, {1, 2, 3}, {0, 2, 3}}, 5},
		{"disconnected", 6, [][]int{{0, 1}, {1, 2}, {3, 5}}, 5},
		{"singletons", 4, nil, 5},
		{"triples", 6, [][]int{{0, 1, 2}, {2, 3, 4}, {1, 4, 5}, {0, 5}}, 3},
	}
}

// randomModel builds a model of shape sh with random sizes in [2, maxSz]
// and random θ of magnitude up to scale on every set and clique.
func randomModel(t testing.TB, sh shape, r *rand.Rand, scale float64, s *Settings) *Model {
	t.Helper()
	sizes := make([]int, sh.n)
	for i := range sizes {
		sizes[i] = 2 + r.IntN(sh.maxSz-1)
	}
	tr, err := NewTree(sizes, sh.sets)
	if err != nil {
		t.Fatalf("NewTree(%v, %v): %v", sizes, sh.sets, err)
	}
	m := New(tr, s)
	for _, set := range sh.sets {
		g := make([]float64, int(cellsOf(sizes, set)))
		for i := range g {
			g[i] = r.NormFloat64()
		}
		m.AddTheta(set, scale*r.Float64(), g)
	}
	for c := range tr.Cliques() {
		th := m.Theta(c)
		for i := range th {
			th[i] += scale / 10 * (2*r.Float64() - 1)
		}
	}
	// single attributes
	for a := range sizes {
		g := make([]float64, sizes[a])
		for i := range g {
			g[i] = r.NormFloat64()
		}
		m.AddTheta([]int{a}, scale/5, g)
	}
	m.Calibrate()
	return m
}

// brute is the model's distribution computed over the whole universe.
type brute struct {
	sizes []int
	p     []float64 // D over the universe (mixed radix, last fastest)
	logZ  float64
}

func bruteForce(m *Model) *brute {
	t := m.t
	sizes := t.sizes
	k := 1
	for _, s := range sizes {
		k *= s
	}
	lp := make([]float64, k)
	x := make([]int, len(sizes))
	for i := range k {
		rem := i
		for a := len(sizes) - 1; a >= 0; a-- {
			x[a] = rem % sizes[a]
			rem /= sizes[a]
		}
		s := 0.0
		for c, cl := range t.cliques {
			idx := 0
			for _, a := range cl {
				idx = idx*sizes[a] + x[a]
			}
			s += m.theta[c][idx]
		}
		lp[i] = s
	}
	mx := slices.Max(lp)
	z := 0.0
	for _, v := range lp {
		z += math.Exp(v - mx)
	}
	b := &brute{sizes: sizes, p: make([]float64, k), logZ: mx + math.Log(z)}
	for i, v := range lp {
		b.p[i] = math.Exp(v - b.logZ)
	}
	return b
}

func (b *brute) marginal(set []int) []float64 {
	cells := 1
	for _, a := range set {
		cells *= b.sizes[a]
	}
	out := make([]float64, cells)
	x := make([]int, len(b.sizes))
	for i, v := range b.p {
		rem := i
		for a := len(b.sizes) - 1; a >= 0; a-- {
			x[a] = rem % b.sizes[a]
			rem /= b.sizes[a]
		}
		idx := 0
		for _, a := range set {
			idx = idx*b.sizes[a] + x[a]
		}
		out[idx] += v
	}
	return out
}

func maxAbsDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// randomSubset returns a random nonempty increasing subset of set.
func randomSubset(r *rand.Rand, set []int) []int {
	for {
		var s []int
		for _, a := range set {
			if r.IntN(2) == 0 {
				s = append(s, a)
			}
		}
		if len(s) > 0 {
			return s
		}
	}
}

const tol = 1e-10

func TestMarginalsMatchBruteForce(t *testing.T) {
	for _, sh := range shapes() {
		for _, scale := range []float64{1, 50} {
			for _, workers := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/scale=%v/workers=%d", sh.name, scale, workers), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(len(sh.name)), uint64(scale)))
					m := randomModel(t, sh, r, scale, &Settings{Workers: workers})
					defer m.Close()
					b := bruteForce(m)
					if d := math.Abs(m.LogZ() - b.logZ); d > tol*max(1, math.Abs(b.logZ)) {
						t.Errorf("LogZ() = %v, want %v", m.LogZ(), b.logZ)
					}
					tr := m.Tree()
					for c, cl := range tr.Cliques() {
						if d := maxAbsDiff(m.Belief(c), b.marginal(cl)); d > tol {
							t.Errorf("Belief(%d) on %v: max abs diff %g from brute force", c, cl, d)
						}
						sub := randomSubset(r, cl)
						got := make([]float64, int(cellsOf(tr.Sizes(), sub)))
						if err := m.Marginal(sub, got); err != nil {
							t.Fatal(err)
						}
						if d := maxAbsDiff(got, b.marginal(sub)); d > tol {
							t.Errorf("Marginal(%v) (in clique %v): max abs diff %g", sub, cl, d)
						}
					}
					for a := range tr.Sizes() {
						got := make([]float64, tr.Sizes()[a])
						if err := m.Marginal([]int{a}, got); err != nil {
							t.Fatal(err)
						}
						if d := maxAbsDiff(got, b.marginal([]int{a})); d > tol {
							t.Errorf("Marginal([%d]): max abs diff %g", a, d)
						}
					}
					// Cross-clique sets: every pair and a few triples that no clique covers.
					n := len(tr.Sizes())
					var sets [][]int
					for a := range n {
						for c := a + 1; c < n; c++ {
							sets = append(sets, []int{a, c})
						}
					}
					for range 5 {
						s := randomSubset(r, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}[:n])
						sets = append(sets, s)
					}
					cross := 0
					for _, set := range sets {
						if tr.Covering(set) < 0 {
							cross++
						}
						got := make([]float64, int(cellsOf(tr.Sizes(), set)))
						if err := m.Marginal(set, got); err != nil {
							t.Fatalf("Marginal(%v): %v", set, err)
						}
						if d := maxAbsDiff(got, b.marginal(set)); d > tol {
							t.Errorf("Marginal(%v) (covering clique %d): max abs diff %g", set, tr.Covering(set), d)
						}
					}
					if sh.name != "complete4" && sh.name != "complete4-triples" && cross == 0 {
						t.Errorf("no cross-clique set tested")
					}
				})
			}
		}
	}
}

func TestLargeThetaStable(t *testing.T) {
	// |θ| up to 1e3 and beyond: beliefs stay finite and match brute force
	// (computed with a per-universe shift).
	for _, scale := range []float64{1e3, 1e5} {
		sh := shapes()[5] // grid
		r := rand.New(rand.NewPCG(7, uint64(scale)))
		m := randomModel(t, sh, r, scale, &Settings{Workers: 2})
		b := bruteForce(m)
		if d := math.Abs(m.LogZ() - b.logZ); d > 1e-12*math.Abs(b.logZ) {
			t.Errorf("scale %g: LogZ() = %v, want %v", scale, m.LogZ(), b.logZ)
		}
		for c, cl := range m.Tree().Cliques() {
			bel := m.Belief(c)
			for _, v := range bel {
				if math.IsNaN(v) || v < 0 {
					t.Fatalf("scale %g: Belief(%d) holds %v", scale, c, v)
				}
			}
			if d := maxAbsDiff(bel, b.marginal(cl)); d > tol {
				t.Errorf("scale %g: Belief(%d): max abs diff %g", scale, c, d)
			}
		}
		m.Close()
	}
}

func TestTreeProperties(t *testing.T) {
	for _, sh := range shapes() {
		r := rand.New(rand.NewPCG(3, 3))
		sizes := make([]int, sh.n)
		for i := range sizes {
			sizes[i] = 2 + r.IntN(4)
		}
		tr, err := NewTree(sizes, sh.sets)
		if err != nil {
			t.Fatal(err)
		}
		cl := tr.Cliques()
		// Every set is covered, every attribute appears.
		for _, s := range sh.sets {
			if tr.Covering(s) < 0 {
				t.Errorf("%s: set %v not covered by %v", sh.name, s, cl)
			}
		}
		for a := range sizes {
			if tr.Covering([]int{a}) < 0 {
				t.Errorf("%s: attribute %d in no clique", sh.name, a)
			}
		}
		// Preorder, maximal cliques, separators.
		for c := range cl {
			if !slices.IsSorted(cl[c]) {
				t.Errorf("%s: clique %v not increasing", sh.name, cl[c])
			}
			p := tr.Parent(c)
			if (c == 0) != (p < 0) || p >= c {
				t.Errorf("%s: Parent(%d) = %d", sh.name, c, p)
			}
			if p >= 0 && !slices.Equal(tr.Separator(c), intersect(cl[c], cl[p])) {
				t.Errorf("%s: Separator(%d) = %v", sh.name, c, tr.Separator(c))
			}
			for d := range cl {
				if c != d && subset(cl[c], cl[d]) {
					t.Errorf("%s: clique %v inside clique %v", sh.name, cl[c], cl[d])
				}
			}
		}
		// Running intersection: the cliques holding each attribute are connected.
		for a := range sizes {
			roots := 0
			for c := range cl {
				if slices.Contains(cl[c], a) && (tr.Parent(c) < 0 || !slices.Contains(cl[tr.Parent(c)], a)) {
					roots++
				}
			}
			if roots != 1 {
				t.Errorf("%s: attribute %d spans %d disconnected parts of the tree %v", sh.name, a, roots, cl)
			}
		}
		// Determinism.
		tr2, _ := NewTree(sizes, sh.sets)
		if !slices.EqualFunc(tr.Cliques(), tr2.Cliques(), slices.Equal) || !slices.Equal(tr.parent, tr2.parent) {
			t.Errorf("%s: NewTree not deterministic: %v vs %v", sh.name, tr.Cliques(), tr2.Cliques())
		}
	}
}

func TestNewTreeCases(t *testing.T) {
	tests := []struct {
		sizes   []int
		sets    [][]int
		cliques [][]int
	}{
		{[]int{2, 3, 4}, nil, [][]int{{2}, {0}, {1}}},
		{[]int{2, 3, 4}, [][]int{{0, 1}, {1, 2}}, [][]int{{1, 2}, {0, 1}}},
		// the 4-cycle gets one chord
		{[]int{2, 2, 2, 2}, [][]int{{0, 1}, {1, 2}, {2, 3}, {0, 3}}, [][]int{{0, 1, 3}, {1, 2, 3}}},
	}
	for _, tc := range tests {
		tr, err := NewTree(tc.sizes, tc.sets)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Cliques(); !slices.EqualFunc(got, tc.cliques, slices.Equal) {
			t.Errorf("NewTree(%v, %v).Cliques() = %v, want %v", tc.sizes, tc.sets, got, tc.cliques)
		}
	}
}

func TestNewTreeErrors(t *testing.T) {
	var tl *TooLargeError
	if _, err := NewTree([]int{1 << 30, 1 << 30}, [][]int{{0, 1}}); !errors.As(err, &tl) {
		t.Errorf("NewTree of a 2^60-cell clique: err = %v, want *TooLargeError", err)
	} else if tl.Cells != 1<<60 || tl.Cap != 1<<53 {
		t.Errorf("TooLargeError = %+v", tl)
	}
	for _, tc := range []struct {
		sizes []int
		sets  [][]int
	}{
		{[]int{2, 0}, nil},
		{[]int{2, 2}, [][]int{{1, 0}}},
		{[]int{2, 2}, [][]int{{0, 2}}},
		{[]int{2, 2}, [][]int{{0, 0}}},
	} {
		if _, err := NewTree(tc.sizes, tc.sets); err == nil {
			t.Errorf("NewTree(%v, %v): no error", tc.sizes, tc.sets)
		}
	}
}

func TestMarginalTooLarge(t *testing.T) {
	// A chain 0-1-2-3-4 of size-10 attributes: the marginal on {0, 2, 4}
	// eliminates 1 and 3 with 1,000-cell tables, and carrying it would pass
	// over tables as large; the pair {0, 3} is carried through the chain
	// (pairs.go), which the cap does not bound.
	tr, err := NewTree([]int{10, 10, 10, 10, 10}, [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	m := New(tr, &Settings{MaxElimCells: 999})
	out := make([]float64, 1000)
	var tl *TooLargeError
	if err := m.Marginal([]int{0, 2, 4}, out); !errors.As(err, &tl) || tl.Cells != 1000 || tl.Cap != 999 {
		t.Fatalf("Marginal([0 2 4]) = %v, want *TooLargeError of 1000 cells over 999", err)
	}
	if err := m.Marginal([]int{0, 3}, out[:100]); err != nil {
		t.Fatalf("Marginal([0 3]) with cap 999: %v", err)
	}
	m2 := New(tr, &Settings{MaxElimCells: 1000})
	if err := m2.Marginal([]int{0, 2, 4}, out); err != nil {
		t.Fatalf("Marginal([0 2 4]) with cap 1000: %v", err)
	}
	for i, v := range out {
		if math.Abs(v-0.001) > 1e-15 {
			t.Fatalf("uniform Marginal([0 2 4])[%d] = %v, want 0.001", i, v)
		}
	}
}

func TestCopyFromAndAllocs(t *testing.T) {
	sh := shapes()[5]
	r := rand.New(rand.NewPCG(1, 2))
	m := randomModel(t, sh, r, 3, &Settings{Workers: 2})
	o := New(m.Tree(), &Settings{Workers: 2})
	o.CopyFrom(m)
	if o.LogZ() != m.LogZ() || maxAbsDiff(o.Belief(0), m.Belief(0)) != 0 {
		t.Errorf("CopyFrom: LogZ %v vs %v", o.LogZ(), m.LogZ())
	}
	sizes := m.Tree().Sizes()
	g := make([]float64, sizes[0]*sizes[1])
	out := make([]float64, sizes[0])
	allocs := testing.AllocsPerRun(20, func() {
		o.CopyFrom(m)
		o.AddTheta([]int{0, 1}, 0.5, g)
		o.Calibrate()
		_ = o.Marginal([]int{0}, out)
	})
	if allocs != 0 {
		t.Errorf("CopyFrom+AddTheta+Calibrate+Marginal allocate %v times, want 0", allocs)
	}
	// CopyThetasFrom leaves the model uncalibrated; calibrated, it is m
	// bit for bit, whatever o held before, on one worker and on two.
	for _, workers := range []int{1, 2} {
		p := New(m.Tree(), &Settings{Workers: workers})
		for i := range g {
			g[i] = float64(i%7) - 3
		}
		p.AddTheta([]int{0, 1}, 1, g) // other potentials and beliefs
		p.Calibrate()
		p.CopyThetasFrom(m)
		if p.calibrated {
			t.Errorf("CopyThetasFrom (%d workers): the model counts as calibrated", workers)
		}
		p.Calibrate()
		for c := range m.Tree().Cliques() {
			if p.LogZ() != m.LogZ() || maxAbsDiff(p.Belief(c), m.Belief(c)) != 0 {
				t.Errorf("CopyThetasFrom+Calibrate (%d workers): clique %d differs (log Z %v, want %v)", workers, c, p.LogZ(), m.LogZ())
			}
		}
	}
	if allocs := testing.AllocsPerRun(20, func() { o.CopyThetasFrom(m) }); allocs != 0 {
		t.Errorf("CopyThetasFrom allocates %v times, want 0", allocs)
	}
}

func TestParallelMatchesSerialAndBruteForce(t *testing.T) {
	// Cliques above minParallel cells take the parallel paths.
	sizes := []int{50, 50, 30, 4}
	sets := [][]int{{0, 1, 2}, {1, 2, 3}}
	tr, err := NewTree(sizes, sets)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	gs := make([][]float64, len(sets))
	for i, s := range sets {
		gs[i] = make([]float64, int(cellsOf(sizes, s)))
		for j := range gs[i] {
			gs[i][j] = 3 * r.NormFloat64()
		}
	}
	var ms []*Model
	for _, w := range []int{1, 2} {
		m := New(tr, &Settings{Workers: w})
		defer m.Close()
		for i, s := range sets {
			m.AddTheta(s, 1, gs[i])
		}
		m.Calibrate()
		ms = append(ms, m)
	}
	b := bruteForce(ms[0])
	for _, set := range [][]int{{0, 1, 2}, {0, 1}, {1, 2}, {0}, {2}, {3}, {1, 2, 3}, {0, 3}, {0, 2, 3}} {
		var outs [][]float64
		for _, m := range ms {
			out := make([]float64, int(cellsOf(sizes, set)))
			if err := m.Marginal(set, out); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, out)
		}
		if d := maxAbsDiff(outs[0], b.marginal(set)); d > tol {
			t.Errorf("workers 1: Marginal(%v): max abs diff %g from brute force", set, d)
		}
		if d := maxAbsDiff(outs[1], b.marginal(set)); d > tol {
			t.Errorf("workers 2: Marginal(%v): max abs diff %g from brute force", set, d)
		}
	}
	if d := math.Abs(ms[0].LogZ() - ms[1].LogZ()); d > 1e-12 {
		t.Errorf("LogZ differs between 1 and 2 workers by %g", d)
	}
}

func TestSizeOneAndUnusedAttributes(t *testing.T) {
	// Size-1 attributes (skipped by the projections) and an attribute in no
	// set (its own singleton clique).
	sizes := []int{1, 3, 1, 2, 4, 3}
	sets := [][]int{{0, 1}, {1, 2, 3}, {3, 4}, {0, 4}}
	tr, err := NewTree(sizes, sets)
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.Covering([]int{5}); c < 0 || !slices.Equal(tr.Cliques()[c], []int{5}) {
		t.Errorf("attribute 5 (in no set) is in clique %v, want a singleton", tr.Cliques())
	}
	m := New(tr, &Settings{Workers: 1})
	r := rand.New(rand.NewPCG(2, 2))
	for c := range tr.Cliques() {
		th := m.Theta(c)
		for i := range th {
			th[i] = 4 * r.NormFloat64()
		}
	}
	m.Calibrate()
	b := bruteForce(m)
	if d := math.Abs(m.LogZ() - b.logZ); d > tol {
		t.Errorf("LogZ() = %v, want %v", m.LogZ(), b.logZ)
	}
	for _, set := range [][]int{{0}, {2}, {0, 2}, {1, 3}, {0, 1, 2, 3}, {1, 4}, {2, 5}, {1, 5}, {0, 1, 2, 3, 4, 5}, {}} {
		got := make([]float64, int(cellsOf(sizes, set)))
		if err := m.Marginal(set, got); err != nil {
			t.Fatalf("Marginal(%v): %v", set, err)
		}
		if d := maxAbsDiff(got, b.marginal(set)); d > tol {
			t.Errorf("Marginal(%v): max abs diff %g", set, d)
		}
	}
}

func TestTreeCells(t *testing.T) {
	tr, err := NewTree([]int{2, 3, 4, 5}, [][]int{{0, 1, 2}, {2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{0, 1, 2}, {2, 3}}
	if !slices.EqualFunc(tr.Cliques(), want, slices.Equal) {
		t.Fatalf("Cliques() = %v, want %v", tr.Cliques(), want)
	}
	if tr.Cells(0) != 24 || tr.Cells(1) != 20 || tr.TotalCells() != 44 {
		t.Errorf("Cells = %d, %d, TotalCells = %v; want 24, 20, 44", tr.Cells(0), tr.Cells(1), tr.TotalCells())
	}
	for _, tc := range []struct {
		set  []int
		want int
	}{{[]int{2}, 1}, {[]int{0, 2}, 0}, {[]int{}, 1}, {[]int{1, 3}, -1}, {[]int{7}, -1}} {
		if got := tr.Covering(tc.set); got != tc.want {
			t.Errorf("Covering(%v) = %d, want %d", tc.set, got, tc.want)
		}
	}
}

func TestTooLargeErrorMessage(t *testing.T) {
	tr, _ := NewTree([]int{10, 10, 10, 10, 10}, [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}})
	m := New(tr, &Settings{MaxElimCells: 50})
	err := m.Marginal([]int{0, 2, 4}, make([]float64, 1000))
	want := "model: marginal on attributes [0 2 4] (eliminating attribute 1 builds a table over [0 1 2]; raise Settings.MaxElimCells or measure a covering set) needs 1000 cells, over the cap of 50 cells"
	if err == nil || err.Error() != want {
		t.Errorf("Marginal error = %v\nwant %s", err, want)
	}
}

func TestPanics(t *testing.T) {
	tr, _ := NewTree([]int{2, 2, 2}, [][]int{{0, 1}, {1, 2}})
	tr2, _ := NewTree([]int{2, 2, 2}, [][]int{{0, 1}, {1, 2}})
	for name, f := range map[string]func(m *Model){
		"AddTheta uncovered":        func(m *Model) { m.AddTheta([]int{0, 2}, 1, make([]float64, 4)) },
		"AddTheta length":           func(m *Model) { m.AddTheta([]int{0, 1}, 1, make([]float64, 3)) },
		"Marginal length":           func(m *Model) { _ = m.Marginal([]int{0}, make([]float64, 3)) },
		"Marginal order":            func(m *Model) { _ = m.Marginal([]int{1, 0}, make([]float64, 4)) },
		"Marginal range":            func(m *Model) { _ = m.Marginal([]int{3}, make([]float64, 2)) },
		"CopyFrom other tree":       func(m *Model) { New(tr2, nil).CopyFrom(m) },
		"CopyThetasFrom other tree": func(m *Model) { New(tr2, nil).CopyThetasFrom(m) },
		"uncalibrated":              func(m *Model) { m.Theta(0); _ = m.LogZ() },
		"NaN θ":                     func(m *Model) { m.Theta(1)[0] = math.NaN(); m.Calibrate() },
		"+Inf θ":                    func(m *Model) { m.Theta(0)[0] = math.Inf(1); m.Calibrate() },
	} {
		func() {
			m := New(tr, nil) // calibrated
			defer m.Close()
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f(m)
		}()
	}
}

func TestCliqueParallelMatchesSerial(t *testing.T) {
	// A star of 8 cliques {0, a, b} of 3,600 cells: one level of 28,800
	// cells, each clique below minParallel, so with 2 workers whole cliques
	// go to the workers. The serial path is checked against brute force in
	// TestMarginalsMatchBruteForce; here both must agree, and every clique
	// must agree on attribute 0.
	sizes := []int{4}
	var sets [][]int
	for i := range 8 {
		sizes = append(sizes, 30, 30)
		sets = append(sets, []int{0, 1 + 2*i, 2 + 2*i})
	}
	tr, err := NewTree(sizes, sets)
	if err != nil {
		t.Fatal(err)
	}
	for _, scale := range []float64{1, 1e3} {
		r := rand.New(rand.NewPCG(8, uint64(scale)))
		var ms []*Model
		for _, w := range []int{1, 2} {
			m := New(tr, &Settings{Workers: w})
			defer m.Close()
			ms = append(ms, m)
		}
		for _, set := range sets {
			g := make([]float64, int(cellsOf(sizes, set)))
			for i := range g {
				g[i] = scale * r.NormFloat64()
			}
			for _, m := range ms {
				m.AddTheta(set, 1, g)
			}
		}
		for _, m := range ms {
			m.Calibrate()
		}
		if d := math.Abs(ms[0].LogZ() - ms[1].LogZ()); d > 1e-12*math.Abs(ms[0].LogZ()) {
			t.Errorf("scale %g: LogZ %v with 1 worker, %v with 2", scale, ms[0].LogZ(), ms[1].LogZ())
		}
		want := make([]float64, 4)
		if err := ms[0].Marginal([]int{0}, want); err != nil {
			t.Fatal(err)
		}
		for c, cl := range tr.Cliques() {
			if d := maxAbsDiff(ms[0].Belief(c), ms[1].Belief(c)); d > 1e-13 {
				t.Errorf("scale %g: Belief(%d) differs by %g between 1 and 2 workers", scale, c, d)
			}
			if !slices.Contains(cl, 0) {
				continue
			}
			got := make([]float64, 4)
			sub := proj{}
			sub.build(sizes, cl, []int{0}, make([]int, 4), make([]int, 4))
			sub.sumTo(got, ms[1].Belief(c), 0, sub.cells, make([]int, 4))
			if d := maxAbsDiff(got, want); d > 1e-12 {
				t.Errorf("scale %g: clique %v gives attribute 0 the marginal %v, clique 0 %v", scale, cl, got, want)
			}
		}
	}
}
