package release_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/dpsynth/synth/release"
)

func ExampleSample() {
	// D over 4 cells; N = 10 rows. Systematic sampling gives every cell
	// ⌊N·D⌋ or ⌈N·D⌉ rows: cell 0 gets 1 or 2 (N·D = 1.5), cell 1 exactly 5,
	// cell 2 none, cell 3 3 or 4 (N·D = 3.5); the total is exactly N.
	d := []float64{0.15, 0.5, 0, 0.35}
	r := rand.New(rand.NewChaCha8([32]byte{1}))
	cells, err := release.Sample(nil, d, 10, release.Systematic, r)
	if err != nil {
		panic(err)
	}
	total := int64(0)
	for _, c := range cells {
		total += c.Count
	}
	fmt.Println("cells:", len(cells), "rows:", total, "cell 1:", cells[1].Count)
	rows := release.Rows(nil, cells, r) // one cell per row, shuffled
	fmt.Println(len(rows))
	// Output:
	// cells: 3 rows: 10 cell 1: 5
	// 10
}
