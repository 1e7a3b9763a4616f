//go:build evidence

package solvers

// Accuracy evidence for dpam and mwem (docs/BENCHMARKS.md "### dpam" and
// "### mwem"). Not part of the default test run:
//
//	go test -tags evidence ./solvers -run EvidenceAM -v -timeout 1h
//
// prints, for each solver and setting at ε = 1, δ = 1e-9 on adult-reduced
// (all 35 3-way marginals), the max and mean workload error of 5 seeded
// runs. The sweeps that chose the tuned defaults are TestSweepDPAM and
// TestSweepMWEM (parameters from the environment, see envList):
//
//	SEEDS=3 EPS=1 T=50,75,100,150 ALPHA=0.005,0.01 KAPPA=0.5,1,2 go test -tags evidence ./solvers -run SweepDPAM -v
//	SEEDS=3 EPS=1 T=150 SHARE=0.5,0.8 PASSES=10 STEP=0.5,1 go test -tags evidence ./solvers -run SweepMWEM -v

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// envList parses a comma-separated list of floats from the environment.
func envList(name, def string) []float64 {
	s := os.Getenv(name)
	if s == "" {
		s = def
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			panic(err)
		}
		out = append(out, v)
	}
	return out
}

// TestSweepDPAM: go test -tags evidence ./solvers -run SweepDPAM -v
func TestSweepDPAM(t *testing.T) {
	fx := adultReduced(t)
	seeds := int(envList("SEEDS", "3")[0])
	for _, eps := range envList("EPS", "1") {
		for _, T := range envList("T", "20") {
			for _, a := range envList("ALPHA", "0.02") {
				for _, kappa := range envList("KAPPA", "2") {
					var sumMax, sumMean, worst float64
					start := time.Now()
					for seed := range seeds {
						s := &DPAM{T: int(T), Alpha: a, Kappa: kappa, TraceEvery: -1}
						p := fx.problem(t, eps, 1e-9, uint64(100+seed))
						if os.Getenv("NOPRIV") != "" {
							p.noPrivacy = true
						}
						res, err := s.Solve(context.Background(), p)
						if err != nil {
							t.Fatal(err)
						}
						mx, mean := fx.maxError(t, p.Op, res.D)
						sumMax += mx
						sumMean += mean
						worst = max(worst, mx)
					}
					f := float64(seeds)
					fmt.Printf("eps=%g T=%g alpha=%g kappa=%g  max %.4f (worst %.4f) mean %.2e  %.1fs\n", eps, T, a, kappa, sumMax/f, worst, sumMean/f, time.Since(start).Seconds()/f)
				}
			}
		}
	}
}

func TestUniformAM(t *testing.T) {
	fx := adultReduced(t)
	p := fx.problem(t, 1, 1e-9, 0)
	u := make([]float64, p.Op.K())
	for i := range u {
		u[i] = 1 / float64(len(u))
	}
	mx, mean := fx.maxError(t, p.Op, u)
	fmt.Printf("uniform: max %.4f mean %.2e\n", mx, mean)
}

// TestSweepMWEM: go test -tags evidence ./solvers -run SweepMWEM -v
func TestSweepMWEM(t *testing.T) {
	fx := adultReduced(t)
	seeds := int(envList("SEEDS", "3")[0])
	paper := os.Getenv("PAPER") != ""
	for _, eps := range envList("EPS", "1") {
		for _, T := range envList("T", "30") {
			for _, share := range envList("SHARE", "0.5") {
				for _, passes := range envList("PASSES", "10") {
					for _, step := range envList("STEP", "0.5") {
						var sumMax, sumMean, worst float64
						start := time.Now()
						for seed := range seeds {
							s := &MWEM{T: int(T), SelectShare: share, Passes: int(passes), Step: step}
							if paper {
								s.Setting = Paper
								s.SelectShare = 0
							}
							p := fx.problem(t, eps, 1e-9, uint64(100+seed))
							res, err := s.Solve(context.Background(), p)
							if err != nil {
								t.Fatal(err)
							}
							mx, mean := fx.maxError(t, p.Op, res.D)
							sumMax += mx
							sumMean += mean
							worst = max(worst, mx)
						}
						f := float64(seeds)
						fmt.Printf("eps=%g T=%g share=%g passes=%g step=%g  max %.4f (worst %.4f) mean %.2e  %.1fs\n", eps, T, share, passes, step, sumMax/f, worst, sumMean/f, time.Since(start).Seconds()/f)
					}
				}
			}
		}
	}
}

// TestEvidenceAM: 5 seeds per solver and setting at ε = 1, δ = 1e-9.
func TestEvidenceAM(t *testing.T) {
	fx := adultReduced(t)
	eps := envList("EPS", "1")[0]
	fmt.Printf("| solver | setting | T | mean max error | largest max error | mean mean error | s per run |\n|---|---|---|---|---|---|---|\n")
	for _, name := range []string{"dpam", "mwem"} {
		for _, set := range []Setting{Tuned, Paper} {
			var sumMax, worst, sumMean float64
			var iters int
			start := time.Now()
			const seeds = 5
			for seed := range seeds {
				s, _ := New(name, set)
				p := fx.problem(t, eps, 1e-9, uint64(1000+seed))
				res, err := s.Solve(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				mx, mean := fx.maxError(t, p.Op, res.D)
				sumMax += mx
				worst = max(worst, mx)
				sumMean += mean
				iters = res.Plan.Iterations
			}
			fmt.Printf("| %s | %s | %d | %.4f | %.4f | %.2e | %.1f |\n", name, set, iters, sumMax/seeds, worst, sumMean/seeds, time.Since(start).Seconds()/seeds)
		}
	}
}
