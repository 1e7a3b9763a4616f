package model

import (
	"fmt"
	"runtime"
	"testing"
)

// allocated returns the bytes New, Calibrate and in-clique Marginals
// allocate on tr.
func allocated(t *testing.T, tr *Tree, workers int) uint64 {
	t.Helper()
	outs := make([][]float64, len(tr.Cliques()))
	for c, cl := range tr.Cliques() {
		outs[c] = make([]float64, int(cellsOf(tr.Sizes(), cl[:1])))
	}
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	m := New(tr, &Settings{Workers: workers})
	m.Theta(0)[0] = 1
	m.Calibrate()
	for c, cl := range tr.Cliques() {
		if err := m.Marginal(cl[:1], outs[c]); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&b)
	m.Close()
	return b.TotalAlloc - a.TotalAlloc
}

func TestBytes(t *testing.T) {
	type tc struct {
		name  string
		sizes []int
		sets  [][]int
		tight bool // large enough that Bytes must be within 2× of the truth
	}
	cases := []tc{
		{"singleton", []int{3}, nil, false},
		{"chain", []int{2, 3, 4, 5}, [][]int{{0, 1}, {1, 2}, {2, 3}}, false},
		{"adult-like", adultSizes, adultSets, true},
		{"big clique", []int{100, 100, 100}, [][]int{{0, 1, 2}}, true},
		{"two big", []int{50, 50, 50, 40}, [][]int{{0, 1, 2}, {1, 2, 3}}, true},
	}
	for _, c := range cases {
		tr, err := NewTree(c.sizes, c.sets)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{1, 2} {
			// the least of three runs: other goroutines of the test binary
			// (the runtime, earlier tests) may allocate meanwhile
			got := min(allocated(t, tr, w), allocated(t, tr, w), allocated(t, tr, w))
			want := tr.BytesFor(w)
			if got > want {
				t.Errorf("%s, %d workers: New+Calibrate+Marginal allocated %d bytes, BytesFor = %d", c.name, w, got, want)
			}
			if c.tight && want > 2*got {
				t.Errorf("%s, %d workers: BytesFor = %d, over twice the %d bytes allocated", c.name, w, want, got)
			}
			t.Logf("%s, %d workers: allocated %d, BytesFor %d", c.name, w, got, want)
		}
	}
	if tr, _ := NewTree([]int{3}, nil); tr.Bytes() != tr.BytesFor(runtime.GOMAXPROCS(0)) {
		t.Errorf("Bytes() != BytesFor(GOMAXPROCS)")
	}
}

// adultSizes are the attribute sizes of full ADULT; adultSets a model on it
// with a few 3-way cliques.
var (
	adultSizes = []int{85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2}
	adultSets  = [][]int{{0, 3, 13}, {4, 6, 8}, {1, 5, 13}, {7, 12}, {9, 10, 13}, {0, 11}, {2}, {3, 5}}
)

func ExampleModel() {
	// Three binary attributes with potentials on {0,1} and {1,2}.
	tr, err := NewTree([]int{2, 2, 2}, [][]int{{0, 1}, {1, 2}})
	if err != nil {
		panic(err)
	}
	m := New(tr, nil)
	defer m.Close()
	// Attributes 0 and 1 tend to agree: θ_{01}(x) = log 3 on the diagonal.
	m.AddTheta([]int{0, 1}, 1.0986122886681098, []float64{1, 0, 0, 1})
	m.Calibrate()
	fmt.Println("cliques:", tr.Cliques())
	out := make([]float64, 4)
	if err := m.Marginal([]int{0, 1}, out); err != nil {
		panic(err)
	}
	fmt.Printf("D(x0, x1) = %.3f\n", out)
	if err := m.Marginal([]int{0, 2}, out); err != nil { // across cliques
		panic(err)
	}
	fmt.Printf("D(x0, x2) = %.3f\n", out)
	// Output:
	// cliques: [[0 1] [1 2]]
	// D(x0, x1) = [0.375 0.125 0.125 0.375]
	// D(x0, x2) = [0.250 0.250 0.250 0.250]
}
