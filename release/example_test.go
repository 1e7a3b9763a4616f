package release_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/universe"
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

// ExampleCSVWriter streams rows given as per-attribute codes into CSV with
// the bins written as their two bounds; the null code is an empty field.
func ExampleCSVWriter() {
	dom, err := universe.ParseDomain([]byte(`{"attributes": [
	  {"name": "occupation", "type": "categorical", "values": ["Sales", "Tech, support"], "null": ""},
	  {"name": "age", "type": "numeric", "edges": [17, 30, 50, 91]}]}`))
	if err != nil {
		panic(err)
	}
	dec, err := release.NewDecoder(dom, &release.DecodeSettings{Numeric: release.LowerUpper}, nil)
	if err != nil {
		panic(err)
	}
	var buf strings.Builder
	w := release.NewCSVWriter(&buf, dec, nil)
	// Three rows, two codes each: (Sales, [17, 30)), (Tech, support, [50, 91]), (null, [30, 50)).
	if err := w.WriteRows(context.Background(), []int32{0, 0, 1, 2, 2, 1}); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	// Records end in CRLF (RFC 4180); shown here with plain line ends.
	fmt.Print(strings.ReplaceAll(buf.String(), "\r\n", "\n"))
	// Output:
	// occupation,age_lower,age_upper
	// Sales,17,30
	// "Tech, support",50,91
	// ,30,50
}
