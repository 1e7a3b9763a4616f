package solvers

import (
	"testing"
)

// Per-iteration benchmarks of DPFW and SMD on the factored model:
// adult-reduced with all 35 3-way marginals (m = 14,955) after 200 warm-up
// steps (so the junction tree holds most selected sets), each iteration a
// calibration of the tree, the model's marginals on the 35 sets, the scores
// and a private selection. Run with
//
//	go test ./solvers -run '^$' -bench 'Factored(DPFW|SMD)Step' -benchtime 200x
func BenchmarkFactoredDPFWStep(b *testing.B) {
	fx := adultReduced(b)
	p := factoredOf(b, fx, 1, 1e-9, 1, 0)
	s := &DPFW{T: 200 + b.N}
	plan, fp, err := s.plan(&p.Shape)
	if err != nil {
		b.Fatal(err)
	}
	_ = plan
	it, err := newFIterate(&p.Shape)
	if err != nil {
		b.Fatal(err)
	}
	defer it.close()
	r := &ffwRun{p: p, fp: fp, it: it, m: fp.geo.m, score: make([]float64, 2*fp.geo.m),
		sel: make([]int, 0, fp.T), gam: make([]float64, 0, fp.T), init: -1, sens: fp.sens}
	benchWarmSteps(b, it, func(t int) error { _, _, err := r.step(t); return err })
}

// benchWarmSteps takes 200 warm-up steps, then times b.N more (step t gets
// its iteration index) and reports the junction tree's cells.
func benchWarmSteps(b *testing.B, it *fIterate, step func(t int) error) {
	for t := range 200 {
		if err := step(t); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for t := range b.N {
		if err := step(200 + t); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(it.tree.TotalCells()), "tree-cells")
}

func BenchmarkFactoredSMDStep(b *testing.B) {
	fx := adultReduced(b)
	p := factoredOf(b, fx, 1, 1e-9, 1, 0)
	s := &SMD{T: 1000}
	_, sp, err := s.plan(&p.Shape)
	if err != nil {
		b.Fatal(err)
	}
	it, err := newFIterate(&p.Shape)
	if err != nil {
		b.Fatal(err)
	}
	defer it.close()
	m := sp.geo.m
	r := &fsmdRun{smd: &smdRun{p: p, sp: sp, m: m, S: make([]float64, 2*m), sens: sp.geo.R / float64(sp.B)},
		it: it, dead: make([]bool, len(it.sets))}
	if err := r.smd.records(p); err != nil {
		b.Fatal(err)
	}
	benchWarmSteps(b, it, func(t int) error {
		if t >= 200 {
			t = 200 + (t-200)%(sp.T-200) // stay within the run's T steps
		}
		_, _, err := r.step(t)
		return err
	})
}
