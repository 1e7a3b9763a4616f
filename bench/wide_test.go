package bench

import (
	"bytes"
	"context"
	"testing"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

func TestWideTable(t *testing.T) {
	dom, err := universe.ParseDomain(WideDomain(40, WideSeed))
	if err != nil {
		t.Fatal(err)
	}
	if dom.Len() != 40 {
		t.Fatalf("WideDomain(40) has %d attributes", dom.Len())
	}
	for _, a := range dom.Attrs() {
		if a.Size() < 2 || a.Size() > 24 {
			t.Errorf("%s has %d values, want 2..24", a.Name, a.Size())
		}
	}
	var a, b bytes.Buffer
	if err := WriteWide(&a, 40, 5000, WideSeed); err != nil {
		t.Fatal(err)
	}
	WriteWide(&b, 40, 5000, WideSeed)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("WriteWide is not a function of its seed")
	}
	c, st, err := ingest.ReadCSV(context.Background(), bytes.NewReader(a.Bytes()), "wide.csv", dom, ingest.Options{})
	if err != nil {
		t.Fatalf("the wide table does not fit its domain: %v", err)
	}
	if st.Rows != 5000 {
		t.Errorf("%d rows, want 5000", st.Rows)
	}
	// Structure: a column and its first parent are dependent. The
	// generator's network makes c001 depend on c000: their joint must be
	// far from the product of their marginals (total variation > 0.02; an
	// independent pair of 5,000 rows is under 0.02 with overwhelming
	// probability for these sizes).
	n := newWideNet(40, WideSeed)
	if len(n.parents[1]) == 0 || n.parents[1][0] != 0 {
		t.Fatalf("c001's parents: %v", n.parents[1])
	}
	tabs, err := c.Marginals(context.Background(), [][]int{{0}, {1}, {0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	s1 := dom.Attr(1).Size()
	tv := 0.0
	for i, v := range tabs[2] {
		x, y := i/s1, i%s1
		p := float64(v) / 5000
		q := float64(tabs[0][x]) / 5000 * float64(tabs[1][y]) / 5000
		tv += 0.5 * abs(p-q)
	}
	if tv < 0.02 {
		t.Errorf("c000 and c001: total variation from independence %.4f, want a dependent pair", tv)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
