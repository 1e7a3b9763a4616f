package query

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// productCellByCell is AnswerProduct's former cell-by-cell form: each
// marginal cell decoded by division, the multiplications from the last
// attribute to the first. AnswerProductRange must give its bits.
func productCellByCell(w *Workload, p [][]float64) []float64 {
	out := make([]float64, w.M())
	for bi := range w.blocks {
		b := &w.blocks[bi]
		q := out[b.off : b.off+b.n]
		switch b.kind {
		case bMarginal:
			for j := range q {
				v, rest := b.weight, j
				for k := len(b.attrs) - 1; k >= 0; k-- {
					a := b.attrs[k]
					v *= p[a][rest%len(p[a])]
					rest /= len(p[a])
				}
				q[j] = v
			}
		default:
			productBlock(b, p, 0, q)
		}
	}
	return out
}

// TestAnswerProductRangeBits checks that AnswerProduct and
// AnswerProductRange, on chunks of every length that start anywhere in a
// block, give the bits of the cell-by-cell form, on 1- to 4-way marginals,
// prefixes and a predicate with random one-way tables.
func TestAnswerProductRangeBits(t *testing.T) {
	dom := mustDomain(t, `{"a": 3, "b": 7, "c": 2, "d": 5, "e": 4}`)
	w, err := Parse([]byte(`{"families": [
	  {"type": "kway", "k": 3},
	  {"type": "marginals", "sets": [["a"], ["a", "b", "d", "e"]], "weight": 0.3},
	  {"type": "prefixes", "attribute": "b", "weight": 0.7},
	  {"type": "kway", "k": 2, "weight": 0.9},
	  {"type": "predicate", "where": [{"attribute": "a", "in": ["0", "2"]}, {"attribute": "d", "in": ["1", "3", "4"]}]}
	]}`), dom)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	p := make([][]float64, dom.Len())
	for i, a := range dom.Attrs() {
		p[i] = make([]float64, a.Size())
		for c := range p[i] {
			p[i][c] = r.Float64()
		}
	}
	want := productCellByCell(w, p)
	same := func(what string, got []float64, lo int) {
		t.Helper()
		for i, v := range got {
			if math.Float64bits(v) != math.Float64bits(want[lo+i]) {
				t.Fatalf("%s: query %d (%s) = %v, want %v (same bits)", what, lo+i, w.Label(lo+i), v, want[lo+i])
			}
		}
	}
	same("AnswerProduct", w.AnswerProduct(p, make([]float64, w.M())), 0)
	buf := make([]float64, 97)
	for _, n := range []int{1, 2, 3, 5, 13, 97} {
		for lo := 0; lo < w.M(); lo += n {
			out := buf[:min(n, w.M()-lo)]
			same(fmt.Sprintf("AnswerProductRange(%d, len %d)", lo, len(out)), w.AnswerProductRange(p, lo, out), lo)
		}
	}
	for range 200 {
		lo := r.IntN(w.M())
		out := buf[:min(1+r.IntN(len(buf)), w.M()-lo)]
		same("AnswerProductRange", w.AnswerProductRange(p, lo, out), lo)
	}
}

// BenchmarkAnswerProductRange answers the independence baseline of all
// 3-way marginals of full ADULT (2.1·10^7 queries) chunk by chunk into a
// buffer of 8,192, as the report's baseline does.
func BenchmarkAnswerProductRange(b *testing.B) {
	d := mustDomain(b, `{"age": 85, "workclass": 9, "fnlwgt": 100, "education-num": 16, "marital-status": 7, "occupation": 15, "relationship": 6, "race": 5, "sex": 2, "capital-gain": 100, "capital-loss": 100, "hours-per-week": 99, "native-country": 42, "income>50K": 2}`)
	w, err := KWay(d, 3, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := make([][]float64, d.Len())
	for i, a := range d.Attrs() {
		p[i] = make([]float64, a.Size())
		for c := range p[i] {
			p[i][c] = 1 / float64(a.Size())
		}
	}
	buf := make([]float64, 8192)
	b.ReportAllocs()
	for b.Loop() {
		for lo := 0; lo < w.M(); lo += len(buf) {
			sink += w.AnswerProductRange(p, lo, buf[:min(len(buf), w.M()-lo)])[0]
		}
	}
}
