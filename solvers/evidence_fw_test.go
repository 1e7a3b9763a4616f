//go:build evidence

package solvers

import (
	"context"
	"flag"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Evidence for DPFW and SMD on the benchmark protocol (adult-reduced, all
// 35 3-way marginals, δ = 1e-9). Not part of the default test run:
//
//	go test -tags evidence ./solvers -run TestEvidenceFW -v -timeout 0
//
// runs each setting over 5 seeds at ε = 1 (docs/BENCHMARKS.md, "### dpfw"
// and "### smd"), -run TestEvidenceFWRules runs the tuned rules at ε = 0.1,
// 0.3, 1 and 3 (3 seeds), and
//
//	go test -tags evidence ./solvers -run TestEvidenceFWSweep -v -timeout 0 \
//	    -fw.sweep 'dpfw eps=0.1,1 T=500,1000 alnk=0.05,0.1 out=last,avg seeds=3'
//
// runs a grid of explicit settings (the sweeps behind the tuned rules).
// Keys: eps, T, alnk (α·ln k), gamma (constant step; 0: harmonic), out
// (last|avg|unif) for dpfw; eps, T, taux (multiple of √(ln k/T)), tauy
// (fraction of the privacy cap) for smd; seeds for both.

var fwSweep = flag.String("fw.sweep", "", "sweep spec (see evidence_fw_test.go)")

type evRun struct {
	maxErr, meanErr float64
	dur             time.Duration
	iters           int
}

func evSolve(t *testing.T, s Solver, eps float64, seed uint64) evRun {
	fx := adultReduced(t)
	p := fx.problem(t, eps, 1e-9, seed)
	st := time.Now()
	res, err := s.Solve(context.Background(), p)
	if err != nil {
		t.Fatalf("%s: %v", s.Name(), err)
	}
	mx, mean := fx.maxError(t, p.Op, res.D)
	return evRun{mx, mean, time.Since(st), len(res.Trace)}
}

func evSummary(runs []evRun) string {
	var mx, mean, worst, d float64
	for _, r := range runs {
		mx += r.maxErr / float64(len(runs))
		mean += r.meanErr / float64(len(runs))
		worst = max(worst, r.maxErr)
		d += r.dur.Seconds() / float64(len(runs))
	}
	return fmt.Sprintf("max error mean %.4f (worst %.4f), mean error %.2e, %.1f s/run, %d iterations", mx, worst, mean, d, runs[0].iters)
}

func TestEvidenceFW(t *testing.T) {
	fx := adultReduced(t)
	p := fx.problem(t, 1, 1e-9, 0)
	u := make([]float64, p.Op.K())
	for i := range u {
		u[i] = 1 / float64(len(u))
	}
	umax, umean := fx.maxError(t, p.Op, u)
	t.Logf("uniform: max error %.4f, mean %.2e", umax, umean)
	for _, c := range []struct {
		name string
		s    Solver
	}{
		{"dpfw tuned", &DPFW{}},
		{"dpfw paper", &DPFW{Setting: Paper}},
		{"smd tuned", &SMD{}},
		{"smd paper", &SMD{Setting: Paper}},
	} {
		var runs []evRun
		for seed := uint64(1); seed <= 5; seed++ {
			r := evSolve(t, c.s, 1, seed)
			t.Logf("%s seed %d: max error %.4f, mean %.2e (%.1f s)", c.name, seed, r.maxErr, r.meanErr, r.dur.Seconds())
			runs = append(runs, r)
		}
		t.Logf("%s at ε = 1: %s", c.name, evSummary(runs))
	}
}

// TestEvidenceFWRules runs the tuned rules across budgets (3 seeds each).
func TestEvidenceFWRules(t *testing.T) {
	for _, eps := range []float64{0.1, 0.3, 1, 3} {
		for _, s := range []Solver{&DPFW{}, &SMD{}} {
			var runs []evRun
			for seed := uint64(1); seed <= 3; seed++ {
				runs = append(runs, evSolve(t, s, eps, 200+seed))
			}
			t.Logf("%s tuned at ε = %v: %s", s.Name(), eps, evSummary(runs))
		}
	}
}

func TestEvidenceFWSweep(t *testing.T) {
	if *fwSweep == "" {
		t.Skip("no -fw.sweep")
	}
	f := strings.Fields(*fwSweep)
	solver := f[0]
	grid := map[string][]string{}
	var keys []string
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		grid[k] = strings.Split(v, ",")
		keys = append(keys, k)
	}
	seeds := 3
	if s, ok := grid["seeds"]; ok {
		seeds, _ = strconv.Atoi(s[0])
		delete(grid, "seeds")
	}
	var names []string
	for _, k := range keys {
		if _, ok := grid[k]; ok {
			names = append(names, k)
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return names[i] == "eps" && names[j] != "eps" })
	k := float64(adultReduced(t).counts.Domain().Len())
	_ = k
	lnk := math.Log(336000)
	var rec func(i int, cfg map[string]float64, out map[string]string)
	rec = func(i int, cfg map[string]float64, out map[string]string) {
		if i < len(names) {
			for _, v := range grid[names[i]] {
				if x, err := strconv.ParseFloat(v, 64); err == nil {
					cfg[names[i]] = x
				} else {
					out[names[i]] = v
				}
				rec(i+1, cfg, out)
			}
			return
		}
		eps := cfg["eps"]
		if eps == 0 {
			eps = 1
		}
		var s Solver
		switch solver {
		case "dpfw":
			d := &DPFW{T: int(cfg["T"]), Alpha: cfg["alnk"] / lnk}
			if g := cfg["gamma"]; g > 0 {
				d.Step, d.Gamma = FWStepConstant, g
			}
			switch out["out"] {
			case "avg":
				d.Output = FWOutputAverage
			case "unif":
				d.Output = FWOutputUniform
			case "last":
				d.Output = FWOutputLast
			}
			s = d
		case "smd":
			d := &SMD{T: int(cfg["T"])}
			if d.T > 0 && cfg["taux"] > 0 {
				d.TauX = cfg["taux"] * math.Sqrt(lnk/float64(d.T))
			}
			if y := cfg["tauy"]; y > 0 {
				pl, _, err := d.plan(&adultReduced(t).problem(t, eps, 1e-9, 0).Shape)
				if err != nil {
					t.Fatal(err)
				}
				d.TauY = y * pl.Params["tau_y_cap"]
			}
			s = d
		default:
			t.Fatalf("unknown solver %q", solver)
		}
		var runs []evRun
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			runs = append(runs, evSolve(t, s, eps, 100+seed))
		}
		t.Logf("%s %v %v: %s", solver, cfg, out, evSummary(runs))
	}
	rec(0, map[string]float64{}, map[string]string{})
}
