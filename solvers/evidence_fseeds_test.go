//go:build evidence

package solvers

import (
	"context"
	"math"
	"testing"
	"time"
)

// Evidence for SMD's output on the factored model: the average of the
// iterates (a Mixture) against the last iterate x^{T+1}, and both against
// the explicit model, on the benchmark protocol (adult-reduced, all 35
// 3-way marginals, δ = 1e-9, tuned), 5 seeds per ε. Not part of the
// default run:
//
//	go test -tags evidence ./solvers -run TestEvidenceSMDOutput -v -timeout 0
//
// docs/BENCHMARKS.md ("Seed solvers on the factored model") records it.
func TestEvidenceSMDOutput(t *testing.T) {
	fx := adultReduced(t)
	score := func(ans []float64) (mx, mean float64) {
		for j, a := range fx.answers {
			e := math.Abs(a - ans[j])
			mx, mean = max(mx, e), mean+e
		}
		return mx, mean / float64(len(ans))
	}
	for _, eps := range []float64{0.3, 1} {
		const seeds = 5
		var sum [4][2]float64 // explicit average, explicit last, factored mixture, factored last
		var tExp, tFac time.Duration
		for seed := uint64(1); seed <= seeds; seed++ {
			for k, last := range []bool{false, true} {
				p := fx.problem(t, eps, 1e-9, seed)
				start := time.Now()
				re, err := (&SMD{Last: last}).Solve(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				tExp += time.Since(start)
				ans := make([]float64, fx.wl.M())
				p.Op.Answer(re.D, ans)
				mx, mean := score(ans)
				sum[k][0], sum[k][1] = sum[k][0]+mx, sum[k][1]+mean
				pf := factoredOf(t, fx, eps, 1e-9, seed, 0)
				start = time.Now()
				rf, err := (&SMD{Last: last}).Solve(context.Background(), pf)
				if err != nil {
					t.Fatal(err)
				}
				tFac += time.Since(start)
				ans = modelAnswers(t, rf.Model, fx.wl)
				if rf.Mixture != nil {
					if err := rf.Mixture.Answers(ans); err != nil {
						t.Fatal(err)
					}
				}
				rf.Model.Close()
				mx, mean = score(ans)
				sum[2+k][0], sum[2+k][1] = sum[2+k][0]+mx, sum[2+k][1]+mean
			}
		}
		for k, name := range []string{"explicit average", "explicit last", "factored mixture", "factored last"} {
			t.Logf("ε = %g, %d seeds: %s: max %.4f, mean %.2e", eps, seeds, name, sum[k][0]/seeds, sum[k][1]/seeds)
		}
		t.Logf("ε = %g: %.2f s per explicit solve, %.2f s per factored solve", eps, tExp.Seconds()/(2*seeds), tFac.Seconds()/(2*seeds))
	}
}
