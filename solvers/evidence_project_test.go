//go:build evidence

package solvers

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"
)

var (
	evEps      = flag.String("ev.eps", "0.1,0.5,1", "comma-separated ε grid")
	evSeeds    = flag.Int("ev.seeds", 3, "seeds per ε")
	evIters    = flag.Int("ev.iters", 0, "project: fit iterations (0: default)")
	evTol      = flag.Float64("ev.tol", 0, "project: fit tolerance (0: default)")
	evAR       = flag.Bool("ev.ar", false, "add/remove neighbours")
	evData     = flag.String("ev.data", "adult-reduced", "adult-reduced or titanic (without Age)")
	evConv     = flag.Bool("ev.converge", false, "project: fit to convergence (no SURE)")
	evTraceFit = flag.Bool("ev.trace", false, "print the fit's loss")
	evOrds     = flag.String("ev.orders", "", "project: measured orders, e.g. 1,2,3")
)

// TestEvidenceProject prints max and mean error of the project solver on
// adult-reduced (35 3-way marginals, δ = 1e-9) over an ε grid and seeds:
//
//	go test -tags evidence ./solvers -run EvidenceProject -v -ev.eps 0.1,1 -ev.seeds 3
func TestEvidenceProject(t *testing.T) {
	fx := adultReduced(t)
	if *evData == "titanic" {
		fx = loadFixture(t, "titanic", []string{"Pclass", "Sex", "SibSp", "Parch", "Fare", "Cabin", "Embarked", "Survived"}, 3)
	}
	for _, es := range strings.Split(*evEps, ",") {
		var eps float64
		fmt.Sscan(es, &eps)
		for _, set := range []Setting{Tuned} {
			var smax, smean, ssec float64
			for seed := range *evSeeds {
				var ords []int
				for _, o := range strings.Split(*evOrds, ",") {
					var r int
					if _, err := fmt.Sscan(o, &r); err == nil {
						ords = append(ords, r)
					}
				}
				s := &Project{Orders: ords, Setting: set, FitIters: *evIters, FitTol: *evTol, Converge: *evConv}
				p := fx.problem(t, eps, 1e-9, uint64(seed))
				if testing.Verbose() && *evTraceFit {
					op := p.Op
					d := make([]float64, op.K())
					_ = d
					best, bestIt, bestLoss := 1.0, 0, 0.0
					setVariant(t, &experiment{fitTrace: func(it int, loss float64, d []float64) {
						if it%5 == 0 {
							mx, mean := fx.maxError(t, op, d)
							if mean < best {
								best, bestIt, bestLoss = mean, it, loss
							}
							if it%20 == 0 {
								t.Logf("  it %d loss %.5g max %.4f mean %.3e", it, loss, mx, mean)
							}
						}
					}})
					defer func() { t.Logf("  best mean %.3e at it %d, loss %.5g", best, bestIt, bestLoss) }()
				}
				if *evAR {
					p.Neighbours = AddRemove
				}
				t0 := time.Now()
				res, err := s.Solve(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				sec := time.Since(t0).Seconds()
				mx, mean := fx.maxError(t, p.Op, res.D)
				t.Logf("ε=%g %s seed %d: max %.4f mean %.3e  %.1fs  orders %v%v%v steps %v evals %v loss %.4g sure-it %v", eps, set, seed, mx, mean, sec, res.Plan.Params["order_1"], res.Plan.Params["order_2"], res.Plan.Params["order_3"], res.Plan.Params["fit_steps"], res.Plan.Params["fit_evals"], res.Plan.Params["fit_loss"], res.Plan.Params["sure_step"])
				smax += mx
				smean += mean
				ssec += sec
			}
			k := float64(*evSeeds)
			t.Logf("ε=%g %s MEAN over %d seeds: max %.4f mean %.3e  %.1fs", eps, set, *evSeeds, smax/k, smean/k, ssec/k)
		}
	}
}
