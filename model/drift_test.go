package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDriftBounds moves every shape's model by a random step of each size
// and checks, against brute force, that Bound is at least the true L1
// distance between the marginals before and after of every subset of up to
// four attributes (within rounding), that it is exact on a set a clique
// covers, and that it is 0 when nothing moved; and the same bounds (but
// exactness) with no work for reduced terms, every term the whole
// clique's.
func TestDriftBounds(t *testing.T) {
	old := driftWork
	defer func() { driftWork = old }()
	for _, work := range []float64{1e9, 0} {
		driftWork = work
		for _, sh := range shapes() {
			for _, step := range []float64{0, 0.01, 1, 20} {
				t.Run(fmt.Sprintf("work=%g/%s/step=%v", work, sh.name, step), func(t *testing.T) {
					testDrift(t, sh, step, work > 0)
				})
			}
		}
	}
}

// testDrift checks one shape and step of TestDriftBounds; reduced says
// whether every term is reduced (no work cap), when a covered set's bound
// is its exact distance.
func testDrift(t *testing.T, sh shape, step float64, reduced bool) {
	r := rand.New(rand.NewPCG(uint64(len(sh.name)), uint64(step*100)))
	m := randomModel(t, sh, r, 3, &Settings{Workers: 2})
	defer m.Close()
	tr := m.Tree()
	before := m.BeliefsTo(nil)
	b0 := bruteForce(m)
	for c := range tr.Cliques() {
		th := m.Theta(c)
		for i := range th {
			th[i] += step * r.NormFloat64()
		}
	}
	m.Calibrate()
	b1 := bruteForce(m)
	var d Drift
	d.Measure(before, m)
	n := len(tr.Sizes())
	for mask := 1; mask < 1<<n; mask++ {
		var set []int
		for a := range n {
			if mask&(1<<a) != 0 {
				set = append(set, a)
			}
		}
		if len(set) > 4 {
			continue
		}
		p, q := b1.marginal(set), b0.marginal(set)
		dist := 0.0
		for i := range p {
			dist += math.Abs(p[i] - q[i])
		}
		got := d.Bound(set)
		if got < dist-1e-9 {
			t.Errorf("Bound(%v) = %v, want at least the distance %v", set, got, dist)
		}
		if step == 0 && got > 1e-9 {
			t.Errorf("Bound(%v) = %v with nothing moved, want 0", set, got)
		}
		if c := tr.Covering(set); reduced && c >= 0 && math.Abs(got-dist) > 1e-9 {
			t.Errorf("Bound(%v) = %v, want the exact distance %v (clique %d covers it)", set, got, dist, c)
		}
	}
}

func TestDriftMeasurePanics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := randomModel(t, shapes()[0], r, 1, nil)
	defer m.Close()
	defer func() {
		if recover() == nil {
			t.Error("Measure(short beliefs) did not panic")
		}
	}()
	var d Drift
	d.Measure(m.BeliefsTo(nil)[1:], m)
}

func BenchmarkDriftBound(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	sh := shapes()[5] // grid3x3
	m := randomModel(b, sh, r, 3, nil)
	defer m.Close()
	var d Drift
	d.Measure(m.BeliefsTo(nil), m)
	set := []int{0, 4, 8}
	b.ReportAllocs()
	for b.Loop() {
		d.Bound(set)
	}
}
