package bench_test

import (
	"fmt"
	"os"

	"github.com/dpsynth/synth/bench"
)

// The CI grid: the tiny protocol with the project solver, printed as
// synth bench --dry-run prints it.
func ExampleGrid() {
	pts, err := bench.Grid(&bench.Config{Protocols: []string{"tiny"}, Solvers: []string{"project"}, Settings: []string{"tuned", "paper"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := bench.WriteGrid(os.Stdout, pts, nil); err != nil {
		fmt.Println(err)
	}
	// Output:
	// tiny: dataset nltcs, 16 attributes, 65,536 cells, n = 21,574, workload 2-way (120 marginals, 480 queries)
	//   tiny 2-way project/tuned ε=0.5 δ=1e-9 seed=1
	//   tiny 2-way project/paper ε=0.5 δ=1e-9 seed=1
	//   tiny 2-way project/tuned ε=1 δ=1e-9 seed=1
	//   tiny 2-way project/paper ε=1 δ=1e-9 seed=1
	// 4 runs, 4 to do
}

// Protocols and their public shapes, as the summary states them.
func ExampleProtocol_Shape() {
	for _, name := range []string{"adult-reduced", "titanic", "adult-gem", "adult", "titanic-no-age"} {
		p, _ := bench.LookupProtocol(name)
		sh, err := p.Shape()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %d attributes, %d cells, %d marginals, %d queries\n", p.Name, len(sh.Attributes), sh.K, sh.Marginals, sh.M)
	}
	// Output:
	// adult-reduced: 7 attributes, 336000 cells, 35 marginals, 14955 queries
	// titanic: 9 attributes, 89159616 cells, 84 marginals, 173703 queries
	// adult-gem: 9 attributes, 4536000 cells, 64 marginals, 15015 queries
	// adult: 14 attributes, 641263392000000000 cells, 364 marginals, 20894536 queries
	// titanic-no-age: 8 attributes, 979776 cells, 56 marginals, 20914 queries
}
