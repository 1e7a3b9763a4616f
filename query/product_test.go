package query

import (
	"math"
	"testing"

	"github.com/dpsynth/synth/universe"
)

// TestAnswerProduct checks AnswerProduct against Operator.Answer on the
// explicit product vector, for marginals, prefixes and a predicate.
func TestAnswerProduct(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(`{"attributes": [
	  {"name": "a", "type": "categorical", "values": ["x", "y", "z"], "null": "NA"},
	  {"name": "b", "type": "integer", "min": 0, "max": 9, "width": 5},
	  {"name": "c", "type": "categorical", "values": ["p", "q"]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	w, err := Parse([]byte(`{"families": [
	  {"type": "kway", "k": 2},
	  {"type": "marginals", "sets": [["a"]], "weight": 0.5},
	  {"type": "prefixes", "attribute": "b"},
	  {"type": "predicate", "where": [{"attribute": "a", "in": ["x", "z"]}, {"attribute": "c", "in": ["q"]}], "weight": 0.25}
	]}`), dom)
	if err != nil {
		t.Fatal(err)
	}
	p := [][]float64{{0.1, 0.2, 0.3, 0.4}, {0.25, 0.75}, {0.6, 0.4}}
	k, _ := dom.Size()
	d := make([]float64, k)
	codes := make([]int, dom.Len())
	for z := range d {
		dom.Decode(uint64(z), codes)
		d[z] = p[0][codes[0]] * p[1][codes[1]] * p[2][codes[2]]
	}
	op, err := w.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	want := make([]float64, w.M())
	op.Answer(d, want)
	got := w.AnswerProduct(p, make([]float64, w.M()))
	for j := range got {
		if math.Abs(got[j]-want[j]) > 1e-12 {
			t.Errorf("AnswerProduct query %d (%s) = %v, want %v", j, w.Label(j), got[j], want[j])
		}
	}
	// The null code is labelled "<null>" whatever the token.
	if got := w.Label(w.Marginals()[0].Offset + 3*2); got != "a=<null>,b=0..4" {
		t.Errorf("Label = %q, want %q", got, "a=<null>,b=0..4")
	}
}
