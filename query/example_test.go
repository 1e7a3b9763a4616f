package query_test

import (
	"fmt"

	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

func Example() {
	dom, err := universe.ParseDomain([]byte(`{"attributes": [
	  {"name": "sex", "type": "categorical", "values": ["F", "M"]},
	  {"name": "age", "type": "integer", "min": 0, "max": 29, "width": 10}
	]}`))
	if err != nil {
		panic(err)
	}
	w, err := query.Parse([]byte(`{"families": [
	  {"type": "marginals", "sets": [["sex"]]},
	  {"type": "prefixes", "attribute": "age", "weight": 0.5}
	]}`), dom)
	if err != nil {
		panic(err)
	}
	op, err := w.Compile(nil)
	if err != nil {
		panic(err)
	}
	defer op.Close()
	// D: cells (sex, age bucket), the last attribute fastest.
	d := []float64{0.1, 0.2, 0.1, 0.3, 0.2, 0.1}
	ans := make([]float64, op.M())
	op.Answer(d, ans)
	for j, a := range ans {
		fmt.Printf("%-12s %.2f\n", w.Label(j), a)
	}
	// Output:
	// sex=F        0.40
	// sex=M        0.60
	// age<=0..9    0.20
	// age<=10..19  0.40
}
