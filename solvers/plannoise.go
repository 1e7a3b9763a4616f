package solvers

import (
	"fmt"

	"github.com/dpsynth/synth/query"
)

// Noise is the a-priori noise of something a plan measures with a discrete
// Gaussian: a marginal table, a workload family, the record count, or a
// kind of table when the plan states one σ for each of several.
type Noise struct {
	// Table names what is measured ("marginal {age, sex}", "the record
	// count", "each of the 7 order-1 marginals alone, if fewer").
	Table string
	// Cells is the number of counts measured: a marginal table's cells, 1
	// for a single count (the record count, each of tuned MWEM's), 0 when
	// not one table (a workload family, a line for several tables).
	Cells int64
	// Sigma is the noise's standard deviation on each count, in counts.
	Sigma float64
}

// Noise lists the noise scales the plan fixes before any data is read, in
// the order of its charges: the noisy record count, the measured tables
// and families, the staged tables (a line for the tables the count keeps
// when it shows enough records, a line for the order below alone), and
// tuned MWEM's measured counts. adaptive reports that the plan also
// measures with noise set during the run (the factored model's adaptive
// rounds), which the list cannot state. w is the workload the plan was
// made for (it names the tables). Only Gaussian noise is listed: a Laplace
// count's scale is not a σ.
//
// Everything listed is a function of the plan's public inputs.
func (p *Plan) Noise(w *query.Workload) (list []Noise, adaptive bool) {
	count := p.count
	if p.stage != nil {
		count = p.stage.count
	}
	if count != nil && count.gauss != nil {
		list = append(list, Noise{Table: "the record count", Cells: 1, Sigma: count.noise})
	}
	for _, g := range p.groups {
		n := Noise{Table: g.label(w), Sigma: g.sigma}
		if g.attrs != nil {
			n.Cells = int64(cellsOf(w.Domain(), g.attrs))
		}
		list = append(list, n)
	}
	if st := p.stage; st != nil {
		list = append(list, st.noise()...)
	}
	if sigma := p.Params["noise_counts"]; p.Solver == "mwem" && p.Iterations > 0 && sigma > 0 {
		list = append(list, Noise{Table: fmt.Sprintf("each of the %d measured counts", p.Iterations), Cells: 1, Sigma: sigma})
	}
	return list, p.factored != nil && p.factored.adaptive
}
