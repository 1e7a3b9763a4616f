package release

import (
	"context"

	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// NullLabel is how reports label the null code of a nullable attribute,
// whatever its null token (often the empty string).
const NullLabel = query.NullLabel

// CodeLabel returns the report label of code c of a: universe's label, or
// NullLabel for the null code.
func CodeLabel(a *universe.Attribute, c int) string {
	if nc, ok := a.NullCode(); ok && c == nc {
		return NullLabel
	}
	return a.Label(c)
}

// OneWay accumulates the one-way tables (the count of each code of each
// attribute) of a stream of rows, counts or cells. It needs memory for the
// codes of the domain only (Σ sizes), never the universe, so it serves
// factored models too. Not safe for concurrent use.
type OneWay struct {
	dom    *universe.Domain
	counts [][]int64
	total  int64
}

// NewOneWay returns empty one-way tables of dom.
func NewOneWay(dom *universe.Domain) *OneWay {
	o := &OneWay{dom: dom, counts: make([][]int64, dom.Len())}
	for i, a := range dom.Attrs() {
		o.counts[i] = make([]int64, a.Size())
	}
	return o
}

// Total returns the number of rows (or records) counted.
func (o *OneWay) Total() int64 { return o.total }

// Count returns the count of code c of attribute i.
func (o *OneWay) Count(i, c int) int64 { return o.counts[i][c] }

// AddRows counts rows given as codes, row-major (dom.Len() per row).
func (o *OneWay) AddRows(rows []int32) {
	na := o.dom.Len()
	for r := 0; r+na <= len(rows); r += na {
		for i, c := range rows[r : r+na] {
			o.counts[i][c]++
		}
	}
	o.total += int64(len(rows) / na)
}

// AddCounts counts the records of c (over the same domain).
func (o *OneWay) AddCounts(c *universe.Counts) {
	for e := range c.Distinct() {
		w := c.Count(e)
		for i, code := range c.Codes(e) {
			o.counts[i][code] += w
		}
	}
	o.total += c.Total()
}

// AddCells counts sampled (cell, count) pairs of an indexable universe.
func (o *OneWay) AddCells(cells []CellCount) {
	codes := make([]int, o.dom.Len())
	for _, cc := range cells {
		for i, c := range o.dom.Decode(cc.Cell, codes) {
			o.counts[i][c] += cc.Count
		}
		o.total += cc.Count
	}
}

// fractions returns attribute i's table as fractions of the total (zeros
// when nothing was counted).
func (o *OneWay) fractions(i int) []float64 {
	out := make([]float64, len(o.counts[i]))
	if o.total == 0 {
		return out
	}
	for c, n := range o.counts[i] {
		out[c] = float64(n) / float64(o.total)
	}
	return out
}

// OneWayDists pairs the true and synthetic one-way tables (over the same
// domain) for eval.Input.OneWay: per attribute, in domain order, the code
// labels (CodeLabel) and both tables as fractions.
//
// Privacy: the true tables are private; they go to the internal report
// only.
func OneWayDists(truth, synth *OneWay) []eval.AttributeDist {
	if truth.dom != synth.dom {
		panic("release: OneWayDists over different domains")
	}
	out := make([]eval.AttributeDist, truth.dom.Len())
	for i, a := range truth.dom.Attrs() {
		labels := make([]string, a.Size())
		for c := range labels {
			labels[c] = CodeLabel(a, c)
		}
		out[i] = eval.AttributeDist{Name: a.Name, Labels: labels, True: truth.fractions(i), Synthetic: synth.fractions(i)}
	}
	return out
}

// TeeRows returns a RowWriter that counts every row into o before passing
// it to w: the synthetic one-way tables accumulate while the rows stream.
func TeeRows(w RowWriter, o *OneWay) RowWriter { return &teeRows{w, o} }

type teeRows struct {
	RowWriter
	o *OneWay
}

func (t *teeRows) WriteRows(ctx context.Context, rows []int32) error {
	checkRows(t.o.dom, rows)
	t.o.AddRows(rows)
	return t.RowWriter.WriteRows(ctx, rows)
}

// addData adds the one-way tables served by a marginal source.
func (o *OneWay) addData(ctx context.Context, data interface {
	Marginals(context.Context, [][]int) ([][]int64, error)
}) error {
	sets := make([][]int, len(o.counts))
	for i := range sets {
		sets[i] = []int{i}
	}
	tabs, err := data.Marginals(ctx, sets)
	if err != nil {
		return err
	}
	for i, t := range tabs {
		var tot int64
		for c, v := range t {
			o.counts[i][c] += v
			tot += v
		}
		if i == 0 {
			o.total += tot
		}
	}
	return nil
}
