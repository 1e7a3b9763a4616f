package eval

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/dpsynth/synth/query"
)

// PrivacyInfo states the privacy of a release: the budget (ε, δ), the ρ of
// zCDP it was converted to (or spent, 0 when the accounting is not zCDP),
// the neighbouring relation and how the charges were composed. All public.
type PrivacyInfo struct {
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Rho        float64 `json:"rho,omitempty"`
	Neighbours string  `json:"neighbours,omitempty"`
	Accounting string  `json:"accounting,omitempty"`
}

// Param is one solver setting or derived parameter, as text (e.g. {"T",
// "1200"}, {"orders", "1,2,3"}).
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// FloatParams turns a map of numeric parameters into Params sorted by name.
func FloatParams(m map[string]float64) []Param {
	out := make([]Param, 0, len(m))
	for k, v := range m {
		out = append(out, Param{Name: k, Value: strconv.FormatFloat(v, 'g', 6, 64)})
	}
	slices.SortFunc(out, func(a, b Param) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// AttributeDist is one attribute's one-way distribution on the data and on
// the synthetic rows, as fractions, one entry per code with its label
// (the null code labelled "<null>").
type AttributeDist struct {
	Name      string
	Labels    []string
	True      []float64
	Synthetic []float64
}

// OneWay is an attribute's one-way table in the report.
type OneWay struct {
	Attribute string    `json:"attribute"`
	Labels    []string  `json:"labels"`
	True      []float64 `json:"true"`
	Synthetic []float64 `json:"synthetic"`
	// TV is the total-variation distance of the two tables.
	TV float64 `json:"tv"`
}

// Baseline is the workload error of a reference synthetic: the product of
// the data's one-way tables ("independent attributes").
type Baseline struct {
	Description string  `json:"description"`
	Errors      Metrics `json:"errors"`
}

// BaselineDescription says what the baseline is and that it is not DP.
const BaselineDescription = "independent attributes: the product of the data's one-way tables (computed on the private data, not DP; a reference only)"

// Drill is the drill-down of one marginal: its cells with labels.
type Drill struct {
	Attributes []string    `json:"attributes"`
	L1         float64     `json:"l1"`
	Cells      int         `json:"cells"`
	Shown      []DrillCell `json:"shown"`
}

// DrillCell is one cell of a drilled-down marginal.
type DrillCell struct {
	Label     string  `json:"label"`
	True      float64 `json:"true"`
	Synthetic float64 `json:"synthetic"`
	AbsError  float64 `json:"abs_error"`
}

// DrillMarginals is the number of worst marginals (by L1) drilled down in a
// report; DrillCells the most cells shown per marginal (the worst by
// absolute error when a marginal has more, in cell order otherwise).
const (
	DrillMarginals = 6
	DrillCells     = 15
)

func oneWays(w *query.Workload, in []AttributeDist) ([]OneWay, error) {
	if in == nil {
		return nil, nil
	}
	dom := w.Domain()
	if len(in) != dom.Len() {
		return nil, fmt.Errorf("eval: %d one-way tables for %d attributes", len(in), dom.Len())
	}
	out := make([]OneWay, len(in))
	for i, d := range in {
		a := dom.Attr(i)
		if d.Name != a.Name || len(d.Labels) != a.Size() || len(d.True) != a.Size() || len(d.Synthetic) != a.Size() {
			return nil, fmt.Errorf("eval: one-way table %d (%q, %d labels, %d/%d values) does not match attribute %q of size %d",
				i, d.Name, len(d.Labels), len(d.True), len(d.Synthetic), a.Name, a.Size())
		}
		var tv float64
		for c := range d.True {
			if bad(d.True[c]) || bad(d.Synthetic[c]) {
				return nil, fmt.Errorf("eval: one-way table of %q has a value out of [0, 1]", d.Name)
			}
			tv += math.Abs(d.True[c] - d.Synthetic[c])
		}
		out[i] = OneWay{Attribute: d.Name, Labels: slices.Clone(d.Labels), True: slices.Clone(d.True), Synthetic: slices.Clone(d.Synthetic), TV: tv / 2}
	}
	return out, nil
}

func bad(x float64) bool { return !(x >= 0 && x <= 1+1e-9) }

// drills returns the drill-down of the worst marginals by L1.
func drills(w *query.Workload, r *Report, in *Input) []Drill {
	err := func(j int) float64 { return math.Abs(in.True[j] - in.Synthetic[j]) }
	order := make([]int, len(r.Marginals))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(r.Marginals[b].L1, r.Marginals[a].L1) })
	out := []Drill{}
	for _, i := range order[:min(len(order), DrillMarginals)] {
		m := r.Marginals[i]
		d := Drill{Attributes: m.Attributes, L1: m.L1, Cells: m.Cells}
		var idx []int
		if m.Cells <= DrillCells {
			for c := range m.Cells {
				idx = append(idx, m.Offset+c)
			}
		} else {
			idx = worstCells(in, m.Offset, m.Cells)
		}
		for _, j := range idx {
			d.Shown = append(d.Shown, DrillCell{Label: w.Label(j), True: in.True[j], Synthetic: in.Synthetic[j], AbsError: err(j)})
		}
		out = append(out, d)
	}
	return out
}

// worstCells returns the DrillCells queries of [off, off+cells) with the
// largest absolute errors, largest first, ties in query order: the first
// DrillCells of a stable sort by decreasing error, kept as the cells pass
// by insertion instead of sorting them all.
func worstCells(in *Input, off, cells int) []int {
	idx := make([]int, 0, DrillCells+1)
	errs := make([]float64, 0, DrillCells+1)
	for j := off; j < off+cells; j++ {
		e := math.Abs(in.True[j] - in.Synthetic[j])
		if len(idx) == DrillCells && !(e > errs[DrillCells-1]) {
			continue
		}
		// After every kept error at least e: a later query loses ties.
		p := len(errs)
		for p > 0 && errs[p-1] < e {
			p--
		}
		idx, errs = slices.Insert(idx, p, j), slices.Insert(errs, p, e)
		idx, errs = idx[:min(len(idx), DrillCells)], errs[:min(len(errs), DrillCells)]
	}
	return idx
}
