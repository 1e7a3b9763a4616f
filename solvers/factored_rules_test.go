package solvers

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/universe"
)

// TestSmoothSURE: a smooth noisy profile is smoothed and gets closer to the
// truth; a table whose neighbouring codes differ wildly, and a table too
// short to smooth, are left as they are. The noise is drawn from a fixed
// seed, so the test is deterministic.
func TestSmoothSURE(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const sigma = 60.0
	bump := make([]float64, 100)
	for i := range bump {
		bump[i] = 1000 * math.Exp(-float64((i-50)*(i-50))/400)
	}
	spiky := make([]float64, 100)
	for i := range spiky {
		if i%2 == 0 {
			spiky[i] = 2000
		}
	}
	for _, c := range []struct {
		name     string
		truth    []float64
		smoothed bool
	}{
		{"smooth bump", bump, true},
		{"alternating", spiky, false},
		{"two cells", []float64{500, 700}, false},
	} {
		y := make([]float64, len(c.truth))
		for i, v := range c.truth {
			y[i] = v + sigma*r.NormFloat64()
		}
		raw := append([]float64(nil), y...)
		h := smoothSURE(y, sigma, 4)
		if (h > 0) != c.smoothed {
			t.Errorf("%s: smoothSURE chose half-width %d, want smoothing %v", c.name, h, c.smoothed)
		}
		if !c.smoothed {
			if !reflect.DeepEqual(y, raw) {
				t.Errorf("%s: table changed without smoothing", c.name)
			}
			continue
		}
		var before, after float64
		for i, v := range c.truth {
			before += (raw[i] - v) * (raw[i] - v)
			after += (y[i] - v) * (y[i] - v)
		}
		if after >= before {
			t.Errorf("%s: squared error %.0f after smoothing, %.0f before", c.name, after, before)
		}
	}
}

func TestSmoothTriPreservesConstants(t *testing.T) {
	y := []float64{5, 5, 5, 5, 5, 5, 5}
	for h := 1; h <= 3; h++ {
		z, _ := smoothTri(y, h, nil)
		for i, v := range z {
			if math.Abs(v-5) > 1e-12 {
				t.Errorf("smoothTri(constant, %d)[%d] = %v, want 5", h, i, v)
			}
		}
	}
}

func TestMidBudgetRules(t *testing.T) {
	for _, c := range []struct {
		rho          float64
		scale, share float64
	}{
		{5e-4, 1, 0},
		{1e-3, 0.8, 0.02},
		{3e-3, 0.8, 0.02},
		{5e-3, 1, 0},
		{0.05, 1, 0},
	} {
		if got := oneWayScale(c.rho); got != c.scale {
			t.Errorf("oneWayScale(%v) = %v, want %v", c.rho, got, c.scale)
		}
		if got := coarseShare(c.rho); got != c.share {
			t.Errorf("coarseShare(%v) = %v, want %v", c.rho, got, c.share)
		}
	}
	setVariant(t, &experiment{coarse: -1, smoothMax: -1})
	if got := coarseShare(3e-3); got != 0 {
		t.Errorf("coarseShare with the experiment switch off = %v, want 0", got)
	}
	if got := smoothWidth(); got != 0 {
		t.Errorf("smoothWidth with the experiment switch off = %v, want 0", got)
	}
}

func TestIsSubset(t *testing.T) {
	sets := [][]int{{0, 2, 5}, {1, 3}}
	for _, c := range []struct {
		set  []int
		want bool
	}{
		{[]int{0, 5}, true},
		{[]int{2}, true},
		{[]int{1, 3}, true},
		{[]int{0, 1}, false},
		{[]int{0, 2, 4}, false},
		{[]int{0, 2, 5, 6}, false},
	} {
		if got := isSubset(c.set, sets[0]) || isSubset(c.set, sets[1]); got != c.want {
			t.Errorf("isSubset(%v, one of %v) = %v, want %v", c.set, sets, got, c.want)
		}
	}
}

// fitOneWays fits a model to exact one-way shares.
func fitOneWays(t *testing.T, sizes []int, shares [][]float64) *factoredFit {
	t.Helper()
	f := newFactoredFit(&model.Settings{})
	var sets [][]int
	var ms []fmeas
	for a, sh := range shares {
		sets = append(sets, []int{a})
		ms = append(ms, toMeas([]int{a}, sh, 1, 1))
	}
	tree, err := model.NewTree(sizes, sets)
	if err != nil {
		t.Fatal(err)
	}
	f.add(tree, ms...)
	if err := f.run(context.Background(), 5000, 1e-14); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCoarseGroups(t *testing.T) {
	sizes := []int{12, 3, 11}
	big := make([]float64, 12)
	big[0], big[3] = 0.5, 0.3
	for v := range big {
		if v != 0 && v != 3 {
			big[v] = 0.02
		}
	}
	flat := make([]float64, 11)
	for v := range flat {
		flat[v] = 1.0 / 11
	}
	f := fitOneWays(t, sizes, [][]float64{big, {0.2, 0.3, 0.5}, flat})
	defer f.close()
	shares, err := oneWayShares(f.cur, sizes)
	if err != nil {
		t.Fatal(err)
	}
	g := coarseGroups(shares, 0.05, nil)
	want0 := []int32{0, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2}
	if !reflect.DeepEqual(g[0], want0) {
		t.Errorf("groups of the 12-value attribute = %v, want %v", g[0], want0)
	}
	if g[1] != nil {
		t.Errorf("a 3-value attribute got groups %v, want none", g[1])
	}
	if g[2] != nil {
		t.Errorf("an attribute with every value above the share got groups %v, want none", g[2])
	}
	// Ordered: the run of values 1–2 (0.04 in all) stays in the pool, the
	// run 4–11 (0.16) is a group of its own.
	g = coarseGroups(shares, 0.05, []int{12, 0, 0})
	want0 = []int32{0, 2, 2, 1, 3, 3, 3, 3, 3, 3, 3, 3}
	if !reflect.DeepEqual(g[0], want0) {
		t.Errorf("groups of the ordered 12-value attribute = %v, want %v", g[0], want0)
	}
}

func TestCoarsePair(t *testing.T) {
	sizes := []int{12, 3, 11}
	ga := []int32{0, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2}
	cands := [][]int{{0}, {1}, {0, 1}, {1, 2}, {0, 1, 2}}
	ps := coarsePairs(sizes, cands, [][]int32{ga, nil, nil})
	if len(ps) != 1 || ps[0].base != 2 {
		t.Fatalf("coarsePairs = %+v, want the pair {0, 1} alone", ps)
	}
	k := &ps[0]
	if k.groups() != 9 {
		t.Fatalf("groups() = %d, want 3 × 3", k.groups())
	}
	gm := k.cellGroups()
	for va := range 12 {
		for vb := range 3 {
			if got, want := gm[va*3+vb], ga[va]*3+int32(vb); got != want {
				t.Errorf("cell (%d, %d) in group %d, want %d", va, vb, got, want)
			}
		}
	}
	// The grouped L1 distance sums the differences inside each group first.
	tab := make([]int64, 36)
	m := make([]float64, 36)
	tab[1*3+0], tab[2*3+0] = 10, 0 // both in group (2, 0)
	m[1*3+0], m[2*3+0] = 0, 0.1    // n̂ = 100: 0 and 10 counts
	tab[0] = 7                     // group (0, 0): 7 against 0
	got, _ := k.l1(tab, m, 100, nil)
	if math.Abs(got-7) > 1e-12 {
		t.Errorf("l1 = %v, want 7 (the group (2, 0) cancels)", got)
	}
}

// TestFactoredFitGrouped: a grouped measurement makes the fitted model's
// group sums match its targets.
func TestFactoredFitGrouped(t *testing.T) {
	sizes := []int{4, 3}
	joint := []float64{0.10, 0.05, 0.05, 0.02, 0.20, 0.03, 0.05, 0.05, 0.20, 0.10, 0.05, 0.10}
	gm := []int32{0, 1, 1, 2, 3, 3, 2, 3, 3, 2, 3, 3} // value 0 alone, values 1–3 together; b: 0 alone, 1–2 together
	gy := make([]float64, 4)
	for c, p := range joint {
		gy[gm[c]] += p
	}
	one := [][]float64{{0.2, 0.25, 0.3, 0.25}, {0.27, 0.35, 0.38}}
	f := newFactoredFit(&model.Settings{})
	defer f.close()
	tree, err := model.NewTree(sizes, [][]int{{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	ms := []fmeas{toMeas([]int{0}, one[0], 1, 1), toMeas([]int{1}, one[1], 1, 1), toMeas([]int{0, 1}, make([]float64, 12), 1, 1)}
	ms[2].gm, ms[2].gy, ms[2].gr = gm, gy, make([]float64, 4)
	f.add(tree, ms...)
	if err := f.run(context.Background(), 20000, 1e-15); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 12)
	if err := f.cur.Marginal([]int{0, 1}, out); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, 4)
	for c, p := range out {
		got[gm[c]] += p
	}
	for g := range gy {
		if math.Abs(got[g]-gy[g]) > 1e-4 {
			t.Errorf("group %d sum = %.5f, want %.5f", g, got[g], gy[g])
		}
	}
	if f.loss > 1e-6 {
		t.Errorf("loss = %g, want about 0 (consistent targets)", f.loss)
	}
}

// TestFactoredCoarseRounds: in the middle regime a large attribute's
// frequent value that drives a pair's structure is measured through a
// coarse pair, and the rounds' accounting stays exact.
func TestFactoredCoarseRounds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	records := make([][]int, 60000)
	for i := range records {
		codes := make([]int, 4)
		switch u := r.Float64(); {
		case u < 0.5:
			codes[0] = 0
		case u < 0.7:
			codes[0] = 1
		default:
			codes[0] = 2 + r.IntN(38)
		}
		codes[1] = r.IntN(4)
		if codes[0] == 0 && r.Float64() < 0.8 {
			codes[1] = 3 // a's frequent value drives b
		}
		codes[2] = r.IntN(3)
		codes[3] = r.IntN(2)
		if codes[1] == codes[2] && r.Float64() < 0.5 {
			codes[3] = 1
		}
		records[i] = codes
	}
	fx := tinyFixture(t, []int{40, 4, 3, 2}, records, 3)
	var coarseRounds int
	debugRound = func(m string) {
		if strings.Contains(m, "(coarse") {
			coarseRounds++
		}
	}
	defer func() { debugRound = nil }()
	for seed := uint64(1); seed <= 3; seed++ {
		p, _ := factoredProblem(t, fx, 0.5, seed, 40<<10)
		s := &Project{}
		plan, err := s.Plan(&p.Shape)
		if err != nil {
			t.Fatal(err)
		}
		if !plan.factored.adaptive || !midBudget(plan.factored.rho0+plan.factored.rhoLeft) {
			t.Fatalf("plan: adaptive %v, middle regime %v; the test needs both", plan.factored.adaptive, midBudget(plan.factored.rho0+plan.factored.rhoLeft))
		}
		res, err := s.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		res.Model.Close()
		if got := p.Ledger.Charges(); !reflect.DeepEqual(got, plan.Charges) {
			t.Errorf("seed %d: charged %d charges, planned %d", seed, len(got), len(plan.Charges))
		}
		spent, left := res.Plan.Params["rho_rounds_spent"], plan.Charges[len(plan.Charges)-1].Rho
		if !(spent <= left) || spent < 0.99*left {
			t.Errorf("seed %d: rounds spent ρ %v of their charge %v: want all of it and never more", seed, spent, left)
		}
		if err := p.Ledger.Check(privacy.Charge{Label: "more", Cost: privacy.ZCDPCost(1e-6)}); err == nil {
			t.Errorf("seed %d: the ledger has room after the release", seed)
		}
	}
	if coarseRounds == 0 {
		t.Errorf("no round measured a coarse pair in 3 seeds")
	}
}

// TestSmoothCodes: the one-way smoothing averages the codes of ordered
// attributes only, and never the null code.
func TestSmoothCodes(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(`{"attributes": [
		{"name": "age", "type": "integer", "min": 0, "max": 9},
		{"name": "wage", "type": "numeric", "edges": [0, 1, 2, 5], "null": "NA"},
		{"name": "colour", "type": "categorical", "values": ["red", "green", "blue"]},
		{"name": "code", "type": "categorical", "values": ["a", "b"], "null": "NA"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	for a, want := range []int{10, 3, 0, 0} {
		if got := smoothCodes(dom.Attr(a)); got != want {
			t.Errorf("smoothCodes(%s) = %d, want %d", dom.Attr(a).Name, got, want)
		}
	}
	enc, err := universe.ParseDomain([]byte(`{"x": 7}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := smoothCodes(enc.Attr(0)); got != 7 {
		t.Errorf("smoothCodes(encoded x) = %d, want 7", got)
	}
}

// TestTunedRounds: the nominal count rises with the budget, 2, 3 and 4
// rounds per attribute below, in and above the middle regime, and the
// middle regime is where midBudget says.
func TestTunedRounds(t *testing.T) {
	for _, c := range []struct {
		rho  float64
		want int
		mid  bool
	}{
		{1e-5, 20, false},
		{0.999e-3, 20, false},
		{1e-3, 30, true},
		{3.95e-3, 30, true}, // ε = 0.5 at δ = 1e-9
		{4.999e-3, 30, true},
		{5e-3, 40, false},
		{0.015, 40, false}, // ε = 1
	} {
		if got := tunedRounds(10, c.rho); got != c.want {
			t.Errorf("tunedRounds(10, %g) = %d, want %d", c.rho, got, c.want)
		}
		if got := midBudget(c.rho); got != c.mid {
			t.Errorf("midBudget(%g) = %v, want %v", c.rho, got, c.mid)
		}
	}
}

func TestSupportRuns(t *testing.T) {
	// n̂ = 1000, σ = 10, κ = 3: a value is supported from 30 records, a run
	// of two rare values has its own group from 30·√2 ≈ 42.4 together.
	sizes := []int{7, 2}
	shares := [][]float64{{0.5, 0.02, 0.025, 0.3, 0.01, 0.015, 0.13}, {0.5, 0.5}}
	f := fitOneWays(t, sizes, shares)
	defer f.close()
	groups := []group{{sigma: 10}, {sigma: 10}}
	shares, err := oneWayShares(f.cur, sizes)
	if err != nil {
		t.Fatal(err)
	}
	support := oneWaySupports(shares, 1000, 3, groups)
	tests := []struct {
		ordered []int
		want    [][]int
	}{
		// {1, 2} (45 records) passes, {4, 5} (25) does not.
		{[]int{7, 0}, [][]int{{-1, 0, 0, -1, -1, -1, -1}, nil}},
		{[]int{0, 0}, [][]int{nil, nil}},
	}
	for _, tt := range tests {
		if got := supportRuns(shares, 1000, 3, groups, support, tt.ordered); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("supportRuns(ordered %v) = %v, want %v", tt.ordered, got, tt.want)
		}
	}
	if got := supportRuns(shares, 1000, 3, groups, support, nil); got != nil {
		t.Errorf("supportRuns(nil order) = %v, want nil", got)
	}
}
