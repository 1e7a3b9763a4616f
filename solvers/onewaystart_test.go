package solvers

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// TestOneWayStart checks the start's log-weights against the estimates
// worked by hand: attribute a (2 values) is in the pair only; attribute b
// (3 values) is in the pair and in its own table, whose estimates combine
// with weights 1/σ² × c_b/c_T (pair: 4 × 3/6 = 2; one-way: 1 × 3/3 = 1, in
// units of 10⁴);
// attribute c is in no table and starts uniform; a negative estimate is
// floored at half a record.
func TestOneWayStart(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(`{"a": 2, "b": 3, "c": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	mw, err := query.Build(dom, &query.Spec{Families: []query.FamilySpec{{Type: "marginals", Sets: [][]string{{"a", "b"}, {"b"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	const nHat = 100
	// The pair (a, b), b fastest: a = 0 holds 0.1, 0.2, 0.1; a = 1 holds
	// 0.3, −0.02, 0.3. Then b's own table.
	y := []float64{0.1, 0.2, 0.1, 0.3, -0.02, 0.3, 0.5, 0.1, 0.4}
	// Weights 1/σ² large enough that the smoothing keeps every estimate as
	// it is (TestOneWayStartSmooths covers it).
	w := []float64{4e4, 4e4, 4e4, 4e4, 4e4, 4e4, 1e4, 1e4, 1e4}
	// a: the pair's row sums 0.4 and 0.58, normalised.
	pa := []float64{0.4 / 0.98, 0.58 / 0.98}
	// b: (2 × column sums (0.4, 0.18, 0.4) + 1 × (0.5, 0.1, 0.4)) / 3.
	pb := []float64{(0.8 + 0.5) / 3, (0.36 + 0.1) / 3, (0.8 + 0.4) / 3}
	sum := pb[0] + pb[1] + pb[2]
	for v := range pb {
		pb[v] /= sum
	}
	got := make([]float64, 12)
	newOneWayStart(dom, mw, nHat).theta(y, w, got)
	for i := range got {
		va, vb := i/6, (i/2)%3
		want := math.Log(pa[va]) + math.Log(pb[vb]) // c adds 0 (uniform)
		if math.Abs(got[i]-want) > 1e-12 {
			t.Errorf("theta[%d] (a=%d, b=%d) = %.12f, want %.12f", i, va, vb, got[i], want)
		}
	}

	// A negative estimate is floored at half a record, 0.5/n̂.
	y[3], y[4], y[5] = -0.3, -0.3, -0.3 // a = 1: row sum −0.9
	newOneWayStart(dom, mw, nHat).theta(y, w, got)
	floor := 0.5 / nHat
	if d, want := got[6]-got[0], math.Log(floor/0.4); math.Abs(d-want) > 1e-12 {
		t.Errorf("theta[6] − theta[0] = %.12f, want log(%g/0.4) = %.12f", d, floor, want)
	}

	// No measured table: every cell starts at 0 (uniform).
	newOneWayStart(dom, nil, nHat).theta(y, w, got)
	for i, v := range got {
		if v != 0 {
			t.Errorf("without tables theta[%d] = %g, want 0", i, v)
		}
	}
}

// TestOneWayStartPotentials checks that the factored fit's start is the
// explicit fit's: on the measurements of TestOneWayStart plus a pair (b, c),
// the potentials summed over the measurements at every universe cell are
// theta's log-weight there, each attribute's log-shares placed once (on
// the first measurement holding it).
func TestOneWayStartPotentials(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(`{"a": 2, "b": 3, "c": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	sets := [][]string{{"a", "b"}, {"b"}, {"b", "c"}}
	mw, err := query.Build(dom, &query.Spec{Families: []query.FamilySpec{{Type: "marginals", Sets: sets}}})
	if err != nil {
		t.Fatal(err)
	}
	const nHat = 100
	y := []float64{0.1, 0.2, 0.1, 0.3, -0.02, 0.3, 0.5, 0.1, 0.4, 0.3, 0.2, 0.05, 0.05, 0.3, 0.1}
	w := []float64{4, 4, 4, 4, 4, 4, 1, 1, 1, 2, 2, 2, 2, 2, 2}
	theta := make([]float64, 12)
	newOneWayStart(dom, mw, nHat).theta(y, w, theta)

	var ms []fmeas
	var phi [][]float64
	for _, m := range mw.Marginals() {
		ms = append(ms, fmeas{set: m.Attrs, y: y[m.Offset : m.Offset+m.Cells], w: w[m.Offset]})
		phi = append(phi, make([]float64, m.Cells))
	}
	newOneWayStart(dom, nil, nHat).potentials(ms, phi)
	for _, v := range phi[1] {
		if v != 0 {
			t.Errorf("the one-way table of b got potential %v: b's shares belong to the pair (a, b) only", v)
		}
	}
	sizes := dom.Sizes()
	for cell := range theta {
		codes := []int{cell / 6, (cell / 2) % 3, cell % 2}
		got := 0.0
		for j, m := range ms {
			idx := 0
			for _, a := range m.set {
				idx = idx*sizes[a] + codes[a]
			}
			got += phi[j][idx]
		}
		if math.Abs(got-theta[cell]) > 1e-12 {
			t.Errorf("cell %v: Σ potentials = %.12f, want theta's %.12f", codes, got, theta[cell])
		}
	}
}

// smoothProfile is the smoothing tests' table: one ordered attribute of 12
// values measured alone, whose estimate is a smooth bump on a floor of 0.2
// under noise of σ = 0.03 of the rows per value, with its weights 1/σ².
// Every value is above 3σ: none is pooled (unresolved).
func smoothProfile(t *testing.T) (dom *universe.Domain, mw *query.Workload, y, w []float64, sigma float64) {
	t.Helper()
	dom, mw, y, w, sigma = bumpProfile(t)
	for i := range y {
		y[i] += 0.2
	}
	return dom, mw, y, w, sigma
}

// bumpProfile is smoothProfile without the floor: the bump's tails are
// below 3σ.
func bumpProfile(t *testing.T) (dom *universe.Domain, mw *query.Workload, y, w []float64, sigma float64) {
	t.Helper()
	dom, err := universe.ParseDomain([]byte(`{"x": 12}`))
	if err != nil {
		t.Fatal(err)
	}
	mw, err = query.Build(dom, &query.Spec{Families: []query.FamilySpec{{Type: "marginals", Sets: [][]string{{"x"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	sigma = 0.03
	r := rand.New(rand.NewPCG(3, 4))
	y, w = make([]float64, 12), make([]float64, 12)
	for i := range y {
		bump := math.Exp(-float64((i-5)*(i-5)) / 8)
		y[i] = bump/4.4 + sigma*r.NormFloat64()
		w[i] = 1 / (sigma * sigma)
	}
	return dom, mw, y, w, sigma
}

// floorLogShares is the start's log-shares of an estimate worked by hand:
// each share at least half a record of n̂ = 1000, normalised.
func floorLogShares(est []float64) []float64 {
	out := make([]float64, len(est))
	tot := 0.0
	for i, v := range est {
		out[i] = max(v, 0.5/1000)
		tot += out[i]
	}
	for i := range out {
		out[i] = math.Log(out[i] / tot)
	}
	return out
}

// TestOneWayStartSmooths: an ordered attribute whose pooled estimate is a
// smooth profile under large noise starts at the moving average SURE
// prefers (smoothSURE at the estimate's σ), not at the noisy estimate (the
// two differ on this draw); a categorical one with the same estimate starts
// at the estimate.
func TestOneWayStartSmooths(t *testing.T) {
	dom, mw, y, w, sigma := smoothProfile(t)
	smoothed := append([]float64(nil), y...)
	if h := smoothSURE(smoothed, sigma, smoothWidth()); h == 0 {
		t.Fatal("smoothSURE kept the noisy profile: the draw does not test the smoothing")
	}
	want, raw := floorLogShares(smoothed), floorLogShares(y)
	got := make([]float64, 12)
	newOneWayStart(dom, mw, 1000).theta(y, w, got)
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("theta[%d] = %.12f, want %.12f (unsmoothed: %.12f)", i, got[i], want[i], raw[i])
		}
	}

	// The same numbers on a categorical attribute, whose code order means
	// nothing, start as they are.
	cat, err := universe.ParseDomain([]byte(`{"attributes": [{"name": "x", "type": "categorical",
		"values": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cw, err := query.Build(cat, &query.Spec{Families: []query.FamilySpec{{Type: "marginals", Sets: [][]string{{"x"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	newOneWayStart(cat, cw, 1000).theta(y, w, got)
	for i := range got {
		if math.Abs(got[i]-raw[i]) > 1e-12 {
			t.Errorf("categorical: theta[%d] = %.12f, want the unsmoothed %.12f", i, got[i], raw[i])
		}
	}
}

// TestOneWayStartShadowKeepsHalfWidth: SURE's shadow fit starts again from
// its perturbed measurements with the same oneWayStart, and must smooth at
// the half-width the main start chose, not choose again: a different
// choice is a jump of the start that the probe reads as a divergence (on
// healthins at ε = 0.1 one such jump held SURE's running-maximum
// divergence high along the whole path, and the fit overfitted for 2,000
// steps). Here the second measurements are a rough profile on which SURE
// alone would keep h = 0; the start must still smooth them at the first
// start's h.
func TestOneWayStartShadowKeepsHalfWidth(t *testing.T) {
	dom, mw, y, w, sigma := smoothProfile(t)
	rough := make([]float64, 12)
	for i := range rough {
		rough[i] = 0.02 + 0.14*float64(i%2) // alternating: no smoothing pays
	}
	h := smoothSURE(append([]float64(nil), y...), sigma, smoothWidth())
	if h == 0 {
		t.Fatal("smoothSURE kept the first profile: the draw does not test the half-width")
	}
	if h2 := smoothSURE(append([]float64(nil), rough...), sigma, smoothWidth()); h2 == h {
		t.Fatalf("smoothSURE chose h = %d on both profiles: the second does not test the reuse", h)
	}
	o := newOneWayStart(dom, mw, 1000)
	got := make([]float64, 12)
	o.theta(y, w, got)
	o.theta(rough, w, got)
	sm, _ := smoothTri(rough, h, nil)
	want := floorLogShares(sm)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("second start: theta[%d] = %.12f, want %.12f (the rough profile smoothed at the first start's h = %d)", i, got[i], want[i], h)
		}
	}
}

// TestOneWayStartPoolsUnresolved: the bump's tails are below 3σ after
// smoothing, so each tail is a group pooled towards its mean (unresolved),
// and SURE's shadow start pools the same groups of its own estimate, even
// where that estimate is resolved.
func TestOneWayStartPoolsUnresolved(t *testing.T) {
	dom, mw, y, w, sigma := bumpProfile(t)
	o := newOneWayStart(dom, mw, 1000)
	got := make([]float64, 12)
	o.theta(y, w, got)
	h := o.halfWidths[0]
	groups := o.unresolved[0].groups
	if len(groups) != 2 || groups[0][0] != 0 || groups[1][len(groups[1])-1] != 11 {
		t.Fatalf("groups %v, want the two tails of the bump", groups)
	}
	want := func(y []float64) []float64 {
		est := slices.Clone(y)
		if h > 0 {
			est, _ = smoothTri(est, h, nil)
		}
		sd := make([]float64, len(est))
		smoothedSD(sd, sigma, h, len(est))
		(&unresolved{groups: groups, sd: sd}).shrink(est)
		return floorLogShares(est)
	}
	check := func(what string, y []float64) {
		t.Helper()
		for i, v := range want(y) {
			if math.Abs(got[i]-v) > 1e-12 {
				t.Errorf("%s: theta[%d] = %.12f, want %.12f (h = %d, groups %v)", what, i, got[i], v, h, groups)
			}
		}
	}
	check("first start", y)
	for _, g := range groups {
		if len(g) > 3 {
			continue
		}
		for _, v := range g[1:] {
			if got[v] != got[g[0]] {
				t.Errorf("group %v of at most three values: theta %v, want one share", g, got)
			}
		}
	}
	// The shadow's estimate: every value resolved, but its groups are the
	// first start's.
	y2 := make([]float64, 12)
	for i := range y2 {
		y2[i] = 0.3 + 0.01*float64(i%3)
	}
	o.theta(y2, w, got)
	check("second start", y2)
}
