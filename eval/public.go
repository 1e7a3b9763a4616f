package eval

import (
	"fmt"
	"html/template"
	"io"
	"math"

	"github.com/dpsynth/synth/query"
)

// PublicReportSchema names the public report format and its version.
const PublicReportSchema = "synth.public-report/v1"

// PublicStamp marks the public report.
const PublicStamp = "public: a-priori error bounds from the privacy parameters and the public workload; no statistic of the private data"

// Bound is an a-priori bound on the absolute error of each query in its
// scope, computed before the release from the noise scales, the budget and
// the public problem shape (n, k, m), never from the data: with
// probability at least Confidence, every query of the scope has absolute
// error at most Error.
type Bound struct {
	// Scope is "workload", "family" or "marginal".
	Scope string `json:"scope"`
	// Name identifies the scope, e.g. "all 3-way marginals" or
	// "sex × race × age".
	Name string `json:"name"`
	// Queries is the number of queries the bound covers.
	Queries int `json:"queries"`
	// Error bounds the absolute error of each query (fraction of rows).
	Error float64 `json:"error"`
	// Confidence is the probability with which the bound holds, in (0, 1].
	Confidence float64 `json:"confidence"`
	// Method says how the bound was derived, e.g. "Gaussian measurement
	// σ = 0.0021, union bound over 14,955 queries, plus sampling ≤ 1/N".
	Method string `json:"method"`
}

// PublicInput is everything a public report may use: public facts only.
// It has no field for answers, errors or any other statistic of the data,
// so a public report cannot show them.
type PublicInput struct {
	Workload *query.Workload
	// Bounds are the a-priori error bounds, in the order to show them.
	Bounds []Bound
	// Epsilon and Delta are the release's privacy budget.
	Epsilon, Delta float64
	// Rho is the zCDP ρ of the budget (0: not zCDP accounting),
	// Neighbours the neighbouring relation, Accounting how the charges
	// compose.
	Rho                    float64
	Neighbours, Accounting string
	// SolverParams are the solver's settings and parameters: public
	// functions of the settings, the budget and the public shape (they
	// must not depend on the data).
	SolverParams []Param
	// Rows is the number of synthetic rows released (public: chosen by
	// the user, or n, which is public under replace-one neighbours).
	Rows int64
	// Title, Note and Solver head the report.
	Title, Note, Solver string
}

// PublicReport is the report safe to publish with the synthetic data.
type PublicReport struct {
	Schema  string `json:"schema"`
	Privacy string `json:"privacy"`
	Title   string `json:"title"`
	Note    string `json:"note,omitempty"`
	Solver  string `json:"solver,omitempty"`
	// SolverParams are the solver's settings and parameters.
	SolverParams []Param      `json:"solver_params,omitempty"`
	Budget       PublicBudget `json:"budget"`
	Rows         int64        `json:"rows"`
	Workload     WorkloadInfo `json:"workload"`
	Bounds       []Bound      `json:"bounds"`
}

// PublicBudget is the release's privacy budget.
type PublicBudget struct {
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Rho        float64 `json:"rho,omitempty"`
	Neighbours string  `json:"neighbours,omitempty"`
	Accounting string  `json:"accounting,omitempty"`
}

// Public returns the public report: the budget, the workload's public
// description and the caller's a-priori bounds, checked for sanity.
//
// Privacy: nothing here reads data. The bounds must be functions of the
// public parameters only (noise scales, budget, n, k, m); the caller
// vouches for that, and PublicInput has no room for anything else.
func Public(in *PublicInput) (*PublicReport, error) {
	if in.Workload == nil {
		return nil, fmt.Errorf("eval: public report: no workload")
	}
	for i, b := range in.Bounds {
		switch {
		case b.Scope != "workload" && b.Scope != "family" && b.Scope != "marginal":
			return nil, fmt.Errorf("eval: public report: bound %d has scope %q (want workload, family or marginal)", i+1, b.Scope)
		case !(b.Error >= 0) || math.IsInf(b.Error, 1):
			return nil, fmt.Errorf("eval: public report: bound %d (%s) has error %v", i+1, b.Name, b.Error)
		case !(b.Confidence > 0 && b.Confidence <= 1):
			return nil, fmt.Errorf("eval: public report: bound %d (%s) has confidence %v, want in (0, 1]", i+1, b.Name, b.Confidence)
		case b.Method == "":
			return nil, fmt.Errorf("eval: public report: bound %d (%s) does not say how it was derived", i+1, b.Name)
		}
	}
	title := in.Title
	if title == "" {
		title = "Error bounds of the release"
	}
	bounds := append([]Bound{}, in.Bounds...)
	return &PublicReport{
		Schema:       PublicReportSchema,
		Privacy:      PublicStamp,
		Title:        title,
		Note:         in.Note,
		Solver:       in.Solver,
		SolverParams: append([]Param(nil), in.SolverParams...),
		Budget: PublicBudget{Epsilon: in.Epsilon, Delta: in.Delta, Rho: in.Rho,
			Neighbours: in.Neighbours, Accounting: in.Accounting},
		Rows:     in.Rows,
		Workload: workloadInfo(in.Workload),
		Bounds:   bounds,
	}, nil
}

// JSON returns the public report's stable JSON form.
func (r *PublicReport) JSON() ([]byte, error) { return marshal(r) }

var publicTmpl = template.Must(template.New("public").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.R.Title}}</title>
<style>` + style + `</style>
</head>
<body>
<div class="banner public">{{.Stamp}}.</div>
<main>
<h1>{{.R.Title}}</h1>
<p class="sub">{{if .R.Solver}}Solver {{.R.Solver}} · {{end}}privacy budget ε = {{.R.Budget.Epsilon}}, δ = {{.R.Budget.Delta}} · {{count .R.Rows}} rows released · {{count .R.Workload.Queries}} queries</p>
{{if .R.Note}}<p class="sub"><strong>Note:</strong> {{.R.Note}}</p>{{end}}
<h2>Privacy</h2>
<dl class="facts">
<dt>ε, δ</dt><dd>{{.R.Budget.Epsilon}}, {{.R.Budget.Delta}}</dd>
{{if .R.Budget.Rho}}<dt>ρ (zCDP)</dt><dd>{{num .R.Budget.Rho}}</dd>{{end}}
{{if .R.Budget.Neighbours}}<dt>neighbouring datasets</dt><dd>{{.R.Budget.Neighbours}}</dd>{{end}}
{{if .R.Budget.Accounting}}<dt>accounting</dt><dd>{{.R.Budget.Accounting}}</dd>{{end}}
{{if .R.Solver}}<dt>solver</dt><dd>{{.R.Solver}}</dd>{{end}}
{{range .R.SolverParams}}<dt>solver: {{.Name}}</dt><dd>{{.Value}}</dd>
{{end}}</dl>
<h2>Workload</h2>
<dl class="facts">
{{range .R.Workload.Families}}<dt>{{.Kind}}</dt><dd>{{.Description}} — {{count .Queries}} queries{{if ne .Weight 1.0}}, weight {{.Weight}}{{end}}</dd>
{{end}}</dl>
<h2>A-priori error bounds</h2>
<p class="sub">Each bound holds, with the stated probability, for every query in its scope. The bounds come from the noise scales and the public shape of the problem, not from the data.</p>
<table>
<tr><th class="l">scope</th><th class="l">name</th><th>queries</th><th>error bound</th><th>confidence</th><th class="l">method</th></tr>
{{range .R.Bounds}}<tr><td class="l">{{.Scope}}</td><td class="l">{{.Name}}</td><td>{{count .Queries}}</td><td>{{num .Error}}</td><td>{{pct .Confidence}}</td><td class="l">{{.Method}}</td></tr>
{{end}}</table>
<footer>{{.R.Schema}} · {{.Stamp}}.</footer>
</main>
</body>
</html>
`))

// WriteHTML writes the public report as one self-contained HTML page with
// a visible banner (PublicStamp).
func (r *PublicReport) WriteHTML(w io.Writer) error {
	return publicTmpl.Execute(w, struct {
		R     *PublicReport
		Stamp string
	}{r, capitalize(r.Privacy)})
}
