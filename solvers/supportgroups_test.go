package solvers

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// newSupportGroups returns the groups of the table on set, or nil when
// every value of every attribute of set is supported.
func newSupportGroups(sizes, set []int, support [][]bool) *supportGroups {
	return newAttrDigits(sizes, support, nil).groups(set)
}

func TestSupportGroupsExample(t *testing.T) {
	// Attribute 0: values 0 and 2 supported, 1 and 3 rare (digit 2);
	// attribute 1: every value supported.
	sizes := []int{4, 2}
	support := [][]bool{{true, false, true, false}, {true, true}}
	g := newSupportGroups(sizes, []int{0, 1}, support)
	if g == nil || g.n != 6 {
		t.Fatalf("newSupportGroups = %+v, want 6 groups", g)
	}
	got := g.cellGroups()
	want := []int32{0, 1, 4, 5, 2, 3, 4, 5}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("cellGroups() = %v, want %v", got, want)
		}
	}
	if g := newSupportGroups(sizes, []int{1}, support); g != nil {
		t.Errorf("newSupportGroups on a fully supported set = %+v, want nil", g)
	}
}

func TestResolvedRuns(t *testing.T) {
	mass := []float64{0.3, 0.01, 0.02, 0.2, 0.01, 0.005, 0.3, 0.01, 0.04, 0.03, 0.07}
	rare := func(v int) bool { return mass[v] < 0.05 }
	resolved := func(total float64, _ int) bool { return total >= 0.025 }
	tests := []struct {
		ordered int
		want    []int
	}{
		// Runs {1, 2} (0.03) and {7, 8, 9} (0.08) pass; {4, 5} (0.015)
		// does not.
		{11, []int{-1, 0, 0, -1, -1, -1, -1, 1, 1, 1, -1}},
		// Codes from 9 on are outside the order: the run {7, 8} ends there.
		{9, []int{-1, 0, 0, -1, -1, -1, -1, 1, 1, -1, -1}},
		{0, []int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
	}
	for _, tt := range tests {
		if got := resolvedRuns(mass, rare, tt.ordered, resolved); !slices.Equal(got, tt.want) {
			t.Errorf("resolvedRuns(ordered %d) = %v, want %v", tt.ordered, got, tt.want)
		}
	}
}

func TestAttrDigitsRuns(t *testing.T) {
	// Values 0 and 3 supported; the run {1, 2} has its own digit, 4 and 5
	// share the pool's.
	support := [][]bool{{true, false, false, true, false, false}}
	ad := newAttrDigits([]int{6}, support, [][]int{{-1, 0, 0, -1, -1, -1}})
	if want := []int32{0, 2, 2, 1, 3, 3}; !slices.Equal(ad.digits[0], want) || ad.radix[0] != 4 {
		t.Errorf("digits = %v (radix %d), want %v (radix 4)", ad.digits[0], ad.radix[0], want)
	}
	ad = newAttrDigits([]int{6}, support, nil)
	if want := []int32{0, 2, 2, 1, 2, 2}; !slices.Equal(ad.digits[0], want) || ad.radix[0] != 3 {
		t.Errorf("digits without runs = %v (radix %d), want %v (radix 3)", ad.digits[0], ad.radix[0], want)
	}
}

// TestSupportGroupsRandom checks the groups against each cell's digits
// decoded one by one, and the grouped L1 and sums against sums over
// cellGroups, on random sizes, sets and supports.
func TestSupportGroupsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 300 {
		d := 1 + rng.IntN(5)
		sizes := make([]int, d)
		support := make([][]bool, d)
		for a := range d {
			sizes[a] = 1 + rng.IntN(6)
			support[a] = make([]bool, sizes[a])
			for v := range support[a] {
				support[a][v] = rng.IntN(3) > 0
			}
		}
		var set []int
		for a := range d {
			if rng.IntN(2) == 0 {
				set = append(set, a)
			}
		}
		if len(set) == 0 {
			set = []int{rng.IntN(d)}
		}
		g := newSupportGroups(sizes, set, support)
		cells, all := 1, true
		for _, a := range set {
			cells *= sizes[a]
			for _, ok := range support[a] {
				all = all && ok
			}
		}
		if all {
			if g != nil {
				t.Fatalf("trial %d: newSupportGroups(%v, %v) = %+v, want nil", trial, sizes, set, g)
			}
			continue
		}
		gm := g.cellGroups()
		for c := range cells {
			// The digits of cell c, the last attribute fastest.
			x, want, mul := c, 0, 1
			for j := len(set) - 1; j >= 0; j-- {
				a := set[j]
				v := x % sizes[a]
				x /= sizes[a]
				in, digit := 0, 0
				for u, ok := range support[a] {
					if ok {
						if u == v {
							digit = in
						}
						in++
					}
				}
				radix := in
				if in < sizes[a] {
					radix++
					if !support[a][v] {
						digit = in
					}
				}
				want += digit * mul
				mul *= radix
			}
			if int(gm[c]) != want {
				t.Fatalf("trial %d: sizes %v set %v support %v: cell %d in group %d, want %d", trial, sizes, set, support, c, gm[c], want)
			}
			if mul != g.n {
				t.Fatalf("trial %d: %d groups, want %d", trial, g.n, mul)
			}
		}
		tab := make([]int64, cells)
		m := make([]float64, cells)
		for c := range cells {
			tab[c] = int64(rng.IntN(20))
			m[c] = rng.Float64() / float64(cells)
		}
		const nHat = 37.5
		diff, sum := make([]float64, g.n), make([]float64, g.n)
		for c, k := range gm {
			diff[k] += float64(tab[c]) - nHat*m[c]
			sum[k] += m[c]
		}
		wantL1 := 0.0
		for _, v := range diff {
			wantL1 += math.Abs(v)
		}
		got, _ := g.l1(tab, m, nHat, nil)
		if math.Abs(got-wantL1) > 1e-9*wantL1 {
			t.Fatalf("trial %d: l1 = %v, want %v", trial, got, wantL1)
		}
		sums := g.sums(m, nil)
		for k := range sum {
			if math.Abs(sums[k]-sum[k]) > 1e-12 {
				t.Fatalf("trial %d: sums()[%d] = %v, want %v", trial, k, sums[k], sum[k])
			}
		}
	}
}

// TestRoundsGroupedOnSupports checks, on a fixture whose supports leave
// rare values out (adult-reduced at ε = 0.5), that a candidate with rare
// values is scored and measured on its groups: its score is its weight
// times the grouped L1 distance less √(2/π)·σ per group, and its
// measurement's group sums are the true ones plus noise. Noise: each of
// the measurement's G groups is checked at 6σ, a false failure with
// probability below G·2·10^-9.
func TestRoundsGroupedOnSupports(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	p, _, fit, r := startRounds(t, fx, &Project{}, AddRemove, 0.5)
	if _, err := r.score(context.Background(), fit); err != nil {
		t.Fatal(err)
	}
	sel := -1
	for i := range r.fp.cands {
		if g := r.scan.groupsOf(i); g != nil && r.active[i] != nil && !r.onSample(i) {
			sel = i
			break
		}
	}
	if sel < 0 {
		t.Fatal("no candidate is grouped: the test needs supports that leave values out")
	}
	g := r.scan.groupsOf(sel)
	r.evaluate(fit.cur, []int{sel})
	if r.evalErr != nil {
		t.Fatal(r.evalErr)
	}
	gm := g.cellGroups()
	diff, truth := make([]float64, g.n), make([]float64, g.n)
	for k, v := range r.tabs[sel] {
		diff[gm[k]] += float64(v) - r.nHat*r.bufs[sel][k]
		truth[gm[k]] += float64(v)
	}
	l1 := 0.0
	for _, v := range diff {
		l1 += math.Abs(v)
	}
	want := r.fp.weights[sel] * (l1 - math.Sqrt(2/math.Pi)*r.scan.sigma*float64(g.n))
	if got := r.scoresAll[sel]; math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("score of grouped candidate %v = %v, want %v", r.fp.cands[sel], got, want)
	}
	gv := newGroupVars(r.sizes)
	m, err := (&Project{}).measureRound(p, r.scan, gv, sel, nil, r.tabs[sel], r.sigma, r.nHat)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.y) != g.n || len(m.cells) != len(gm) || !slices.Equal(m.orig, r.fp.cands[sel]) {
		t.Fatalf("measureRound(%v) = %d groups over %d cells of %v, want %d over %d", r.fp.cands[sel], len(m.y), len(m.cells), m.orig, g.n, len(gm))
	}
	// The grouping variables' table is the groups' table renumbered: one
	// group of it per group, the same cells in each.
	to := make([]int32, g.n)
	for q := range to {
		to[q] = -1
	}
	for k, q := range gm {
		if to[q] < 0 {
			to[q] = m.cells[k]
		} else if to[q] != m.cells[k] {
			t.Fatalf("measureRound(%v): cell %d in group %d, want %d (its group's)", r.fp.cands[sel], k, m.cells[k], to[q])
		}
	}
	seen := make([]bool, g.n)
	for q, v := range to {
		if v < 0 || seen[v] {
			t.Fatalf("measureRound(%v): group %d is %d of the new table, want a one-to-one map (%v)", r.fp.cands[sel], q, v, to)
		}
		seen[v] = true
		if d := math.Abs(m.y[v]*r.nHat - truth[q]); d > 6*r.sigma {
			t.Errorf("measureRound(%v): group %d = %v records, want %v ± 6σ (σ = %v)", r.fp.cands[sel], q, m.y[v]*r.nHat, truth[q], r.sigma)
		}
	}
	cells := 1
	for k, a := range m.set {
		if k > 0 && a <= m.set[k-1] || a >= len(gv.sizes) {
			t.Fatalf("measureRound(%v): set %v is not increasing in the model's %d variables", r.fp.cands[sel], m.set, len(gv.sizes))
		}
		cells *= gv.sizes[a]
	}
	if cells != g.n {
		t.Errorf("measureRound(%v): set %v has %d cells, want %d groups", r.fp.cands[sel], m.set, cells, g.n)
	}
}

// BenchmarkSupportGroupsL1 scores a 3-way table of 3,200 cells on its
// groups, as candScan does for every grouped candidate at every fit; the
// scratch is reused, so it allocates nothing.
func BenchmarkSupportGroupsL1(b *testing.B) {
	sizes := []int{100, 16, 2}
	support := make([][]bool, len(sizes))
	for a, n := range sizes {
		support[a] = make([]bool, n)
		for v := range n {
			support[a][v] = v%3 != 1
		}
	}
	g := newSupportGroups(sizes, []int{0, 1, 2}, support)
	cells := 100 * 16 * 2
	tab, m := make([]int64, cells), make([]float64, cells)
	for k := range cells {
		tab[k], m[k] = int64(k%7), float64(k%5)/float64(cells)
	}
	d := make([]float64, 0, g.n)
	b.ReportAllocs()
	for b.Loop() {
		_, d = g.l1(tab, m, 1000, d)
	}
}

// TestRoundsScoresOnGroupingVariables checks that a grouped candidate's
// score on its grouping variables (groupedCand, once the fit runs on the
// grouped tree) is its score from the full table summed onto its groups,
// to 1e-9 of the L1 distance, for every such candidate after each of the
// fits on the grouped tree, and that a selection's move (selected.moved)
// from its groups' table before the fit is the one from a full table
// with those sums (titanic at ε = 0.5, the first 40 fits).
func TestRoundsScoresOnGroupingVariables(t *testing.T) {
	fx := loadFixture(t, "titanic", nil, 3)
	ctx := context.Background()
	p, _, fit, r := startRounds(t, fx, &Project{}, AddRemove, 0.5)
	checked, movedOnGroups := 0, 0
	for fits := 0; fits < 40; fits++ {
		final, err := r.score(ctx, fit)
		if err != nil {
			t.Fatal(err)
		}
		if r.scan.gform {
			var idx []int
			for i := range r.fp.cands {
				if r.scan.onGroups(i) && r.active[i] != nil {
					idx = append(idx, i)
				}
			}
			r.evaluate(fit.cur, idx)
			if r.evalErr != nil {
				t.Fatal(r.evalErr)
			}
			for _, i := range idx {
				full := make([]float64, len(r.tabs[i]))
				if err := fit.cur.Marginal(r.fp.cands[i], full); err != nil {
					t.Fatal(err)
				}
				g := r.scan.groupsOf(i)
				l1, _ := g.l1(r.tabs[i], full, r.nHat, nil)
				want := r.fp.weights[i] * (l1 - math.Sqrt(2/math.Pi)*r.scan.sigma*float64(g.n))
				if got := r.scoresAll[i]; math.Abs(got-want) > 1e-9*l1*r.fp.weights[i] {
					t.Errorf("fit %d: score of %v on its grouping variables %v = %v, want %v (full table)", fits, r.fp.cands[i], r.qsets[i], got, want)
				}
				checked++
			}
		}
		batch, tree, last, err := r.selectBatch(p, fit, final)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.fitBatch(ctx, fit, tree, batch, last); err != nil {
			t.Fatal(err)
		}
		for _, b := range batch {
			// The move of a selection scored on its groups is the one of
			// its full table before the fit, summed onto the groups.
			mv, al, _, err := b.moved(fit.cur, r.fp.cands[b.index], r.nHat)
			if err != nil {
				t.Fatal(err)
			}
			if b.onGroups {
				full := b
				full.onGroups = false
				full.before = make([]float64, len(b.meas.cells))
				// A full table with the groups' sums: each group's mass in
				// its first cell.
				seen := make([]bool, len(b.before))
				for k, g := range b.meas.cells {
					if !seen[g] {
						full.before[k], seen[g] = b.before[g], true
					}
				}
				mv2, al2, _, err := full.moved(fit.cur, r.fp.cands[b.index], r.nHat)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(mv-mv2) > 1e-9*(1+mv) || math.Abs(al-al2) > 1e-9*(1+al) {
					t.Errorf("fit %d: moved(%v) on groups = %v, %v, want %v, %v", fits, r.fp.cands[b.index], mv, al, mv2, al2)
				}
				movedOnGroups++
			}
		}
		if last {
			break
		}
	}
	if movedOnGroups == 0 {
		t.Error("no selection was scored on its groups: moved on groups is untested")
	}
	if checked == 0 {
		t.Fatal("no fit ran on the grouped tree: the test needs grouped measurements")
	}
	t.Logf("%d scores checked", checked)
}
