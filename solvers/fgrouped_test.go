package solvers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpsynth/synth/model"
)

// groupedFixture is a small domain with one-way measurements and grouped
// measurements of triples and pairs: on the supports' digits (shared per
// attribute, as attrDigits) and on coarse digits of one attribute (a
// second grouping of its values), in a random order of attributes.
type groupedFixture struct {
	sizes  []int
	oneWay []fmeas
	sets   [][]int
	groups []*supportGroups
	grpd   []fmeas // each set's measurement on its groups (gm, gy)
}

func newGroupedFixture(seed uint64) *groupedFixture {
	rnd := rand.New(rand.NewPCG(seed, 7))
	fx := &groupedFixture{sizes: []int{5, 3, 7, 4, 6}}
	support := make([][]bool, len(fx.sizes))
	for a, n := range fx.sizes {
		support[a] = make([]bool, n)
		for v := range n {
			support[a][v] = a == 1 || rnd.IntN(3) > 0 // attribute 1 whole
		}
		y := make([]float64, n)
		for v := range y {
			y[v] = (0.5 + rnd.Float64()) / float64(n)
		}
		fx.oneWay = append(fx.oneWay, toMeas([]int{a}, y, 0.05, 1))
	}
	ad := newAttrDigits(fx.sizes, support, nil)
	coarse := []int32{0, 0, 1, 2, 2, 2} // attribute 4's coarse groups
	for _, set := range [][]int{{0, 2, 4}, {1, 3, 4}, {0, 3}, {2, 3, 4}} {
		fx.sets = append(fx.sets, set)
		fx.groups = append(fx.groups, ad.groups(set))
	}
	// A coarse pair: attribute 4 on its coarse digits, 2 on its values.
	ident := make([]int32, fx.sizes[2])
	for v := range ident {
		ident[v] = int32(v)
	}
	fx.sets = append(fx.sets, []int{2, 4})
	fx.groups = append(fx.groups, newGroups([][]int32{ident, coarse}, []int{fx.sizes[2], 3}))
	for i, g := range fx.groups {
		gy := make([]float64, g.n)
		for k := range gy {
			gy[k] = (0.2 + rnd.Float64()) / float64(g.n)
		}
		m := toMeas(fx.sets[i], make([]float64, g.cells()), 0.02, 1)
		m.gm, m.gy, m.gr = g.cellGroups(), gy, make([]float64, g.n)
		fx.grpd = append(fx.grpd, m)
	}
	return fx
}

// groupedFits returns two fits of fx's measurements: plain on the
// domain's attributes (measurements on groups of cells) and grouped on
// grouping variables, with the trees of both.
func groupedFits(t *testing.T, fx *groupedFixture) (plain, grouped *factoredFit, gv *groupVars, tp, tg *model.Tree) {
	t.Helper()
	plain = newFactoredFit(&model.Settings{})
	t.Cleanup(plain.close)
	sets := [][]int{{0}, {1}, {2}, {3}, {4}}
	sets = append(sets, fx.sets...)
	tp, err := model.NewTree(fx.sizes, sets)
	if err != nil {
		t.Fatal(err)
	}
	plain.add(tp, append(slices.Clone(fx.oneWay), fx.grpd...)...)

	grouped = newFactoredFit(&model.Settings{})
	t.Cleanup(grouped.close)
	gv = newGroupVars(fx.sizes)
	ms := slices.Clone(fx.oneWay)
	msets := slices.Clone(sets[:5])
	for i, m := range fx.grpd {
		gm := gv.measurement(fx.sets[i], fx.groups[i], slices.Clone(m.gm), fmeas{y: m.gy, w: m.w, sigma: m.sigma})
		ms = append(ms, gm)
		msets = append(msets, gm.set)
	}
	if tg, err = model.NewTree(gv.sizes, append(msets, gv.links...)); err != nil {
		t.Fatal(err)
	}
	grouped.linkSets, grouped.linkTheta = gv.links, gv.theta
	grouped.add(tg, ms...)
	return plain, grouped, gv, tp, tg
}

// sameMarginals checks that two models have the same marginals, to 1e-9,
// on the measured sets and on triples that none of them holds.
func sameMarginals(t *testing.T, what string, sizes []int, plain, grouped *model.Model) {
	t.Helper()
	for _, set := range [][]int{{0, 1, 2}, {0, 2, 4}, {1, 3, 4}, {0, 3, 4}, {2, 4}, {4}} {
		cells := 1
		for _, a := range set {
			cells *= sizes[a]
		}
		p, g := make([]float64, cells), make([]float64, cells)
		if err := plain.Marginal(set, p); err != nil {
			t.Fatal(err)
		}
		if err := grouped.Marginal(set, g); err != nil {
			t.Fatal(err)
		}
		for i := range p {
			if math.Abs(p[i]-g[i]) > 1e-9 {
				t.Errorf("%s: marginal %v cell %d = %v grouped, %v plain", what, set, i, g[i], p[i])
				break
			}
		}
	}
}

// TestGroupedFitSameModel checks that the fit on grouping variables
// (groupVars) is the fit on the domain's attributes: the same loss at
// every step, through two changes of form (setForm: to the domain's
// tree and back), the same marginals of the domain's sets on the grouped
// tree, and on the domain's tree at the end, to 1e-9, on three random
// fixtures. Both fits take the same steps in exact arithmetic; rounding
// differs, and over 40 steps it stays far below the tolerance.
func TestGroupedFitSameModel(t *testing.T) {
	const toDomainAt, toGroupedAt, compareAt = 15, 25, 10 // the form changes twice
	for seed := range uint64(3) {
		fx := newGroupedFixture(seed)
		plain, grouped, gv, tp, tg := groupedFits(t, fx)
		if d := math.Abs(plain.loss - grouped.loss); d > 1e-12*plain.loss {
			t.Fatalf("seed %d: loss at the start = %v grouped, %v plain", seed, grouped.loss, plain.loss)
		}
		for it := range 40 {
			switch it {
			case compareAt:
				sameMarginals(t, fmt.Sprintf("seed %d step %d, grouped form", seed, it), fx.sizes, plain.cur, grouped.cur)
			case toDomainAt:
				grouped.setForm(false, gv)
				grouped.add(tp)
			case toGroupedAt:
				grouped.setForm(true, gv)
				grouped.add(tg)
			}
			if it == toDomainAt || it == toGroupedAt {
				plain.add(tp) // the same first step
				if d := math.Abs(plain.loss - grouped.loss); d > 1e-9*plain.loss {
					t.Fatalf("seed %d step %d: loss after a change of form = %v, want %v", seed, it, grouped.loss, plain.loss)
				}
			}
			okP, okG := plain.stepOnce(), grouped.stepOnce()
			if okP != okG || math.Abs(plain.loss-grouped.loss) > 1e-9*plain.loss {
				t.Fatalf("seed %d step %d: grouped step %v loss %v, plain step %v loss %v", seed, it, okG, grouped.loss, okP, plain.loss)
			}
		}
		grouped.setForm(false, gv)
		grouped.add(tp)
		plain.add(tp)
		if d := math.Abs(plain.loss - grouped.loss); d > 1e-9*plain.loss {
			t.Errorf("seed %d: loss on the domain's tree = %v, want %v", seed, grouped.loss, plain.loss)
		}
		if len(grouped.linkSets) > 0 || grouped.tree != tp {
			t.Errorf("seed %d: the domain's form keeps %d links, tree %p, want none on %p", seed, len(grouped.linkSets), grouped.tree, tp)
		}
		for j := range grouped.meas {
			if !slices.Equal(grouped.sets[j], plain.sets[j]) {
				t.Fatalf("seed %d: set %d on the domain = %v, want %v", seed, j, grouped.sets[j], plain.sets[j])
			}
		}
		sameMarginals(t, fmt.Sprintf("seed %d, domain's form", seed), fx.sizes, plain.cur, grouped.cur)
	}
}

// TestGroupVarsLinks checks the links: a grouping that keeps every value
// alone in order is the attribute itself, a grouping is added once per
// attribute and digits array, and its link's potential is 0 exactly where
// a value's digit is the group.
func TestGroupVarsLinks(t *testing.T) {
	gv := newGroupVars([]int{3, 4})
	ident := []int32{0, 1, 2}
	if v := gv.varOf(0, ident, 3); v != 0 || gv.grouped() {
		t.Fatalf("varOf(0, identity) = %d (grouped %v), want 0 and no grouping variable", v, gv.grouped())
	}
	dg := []int32{1, 0, 1, 0}
	v := gv.varOf(1, dg, 2)
	if v != 2 || gv.varOf(1, dg, 2) != 2 || !slices.Equal(gv.sizes, []int{3, 4, 2}) {
		t.Fatalf("varOf(1, %v) = %d, sizes %v, want 2 and sizes [3 4 2]", dg, v, gv.sizes)
	}
	if w := gv.varOf(1, slices.Clone(dg), 2); w != 3 {
		t.Errorf("varOf(1, another array) = %d, want a new variable 3", w)
	}
	want := []float64{linkOff, 0, 0, linkOff, linkOff, 0, 0, linkOff}
	if !slices.Equal(gv.links[0], []int{1, 2}) || !slices.Equal(gv.theta[0], want) {
		t.Errorf("link = %v %v, want [1 2] %v", gv.links[0], gv.theta[0], want)
	}
}
