package eval_test

import (
	"fmt"

	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

func ExampleEvaluate() {
	dom, _ := universe.ParseDomain([]byte(`{"sex": 2, "age": 3}`))
	w, _ := query.Parse([]byte(`{"families": [{"type": "marginals", "sets": [["sex"], ["age"]]}]}`), dom)
	r, err := eval.Evaluate(&eval.Input{
		Workload:  w,
		True:      []float64{0.50, 0.50, 0.20, 0.30, 0.50},
		Synthetic: []float64{0.52, 0.48, 0.20, 0.25, 0.55},
	})
	if err != nil {
		panic(err)
	}
	e := r.Errors.Synthetic
	fmt.Printf("max %.3f mean %.3f p95 %.3f\n", e.Max, e.Mean, e.P95)
	for _, m := range r.Marginals {
		fmt.Printf("%v: TV %.3f\n", m.Attributes, m.TV)
	}
	fmt.Println(r.Privacy)
	// Output:
	// max 0.050 mean 0.028 p95 0.050
	// [sex]: TV 0.020
	// [age]: TV 0.050
	// internal: computed on the private data, not differentially private
}
