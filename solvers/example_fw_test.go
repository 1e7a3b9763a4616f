package solvers_test

import (
	"context"
	"fmt"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// A DPFW plan computes the run's parameters and its charge from the public
// shape alone; Solve charges the ledger, then runs.
func ExampleDPFW() {
	dom, _ := universe.ParseDomain([]byte(`{"a": 2, "b": 3, "c": 4}`))
	wl, _ := query.KWay(dom, 2, nil)
	counts := universe.NewCounts(dom)
	for i := range 1000 {
		counts.Add([]int{i % 2, i % 3, (i / 7) % 4}, 1)
	}
	budget := privacy.Budget{Eps: 1, Delta: 1e-9}
	shape := solvers.Shape{Neighbours: solvers.ReplaceOne, Budget: budget, N: 1000, Workload: wl}
	s := &solvers.DPFW{}
	plan, _ := s.Plan(&shape)
	fmt.Printf("T = %d, α·ln k = %.3f\n", plan.Iterations, plan.Params["alpha_ln_k"])
	fmt.Printf("%s: %v\n", plan.Charges[0].Label, plan.Charges[0].Cost)

	op, _ := wl.Compile(nil)
	defer op.Close()
	ledger, _ := privacy.NewLedger(budget, nil)
	res, err := s.Solve(context.Background(), &solvers.Problem{
		Shape: shape, Op: op, Counts: counts,
		Answers: wl.AnswerCounts(counts, make([]float64, wl.M())),
		Rand:    privacy.NewSeeded(1), // a demo seed: not private against anyone who knows it
		Ledger:  ledger,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d cells, %d iterations, ε spent %.3f\n", len(res.D), len(res.Trace), ledger.Spent().Eps)
	// Output:
	// T = 59, α·ln k = 0.718
	// dpfw: T exponential-mechanism selections, ε0 = √(8ρ/T) each (ε0²/8 zCDP by bounded range), calibrated to ρ: ρ = 0.0149731
	// 24 cells, 59 iterations, ε spent 1.000
}
