package eval

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
)

// TableRows is the number of marginals and queries listed in the HTML
// report's "worst" tables (the JSON has them all).
const TableRows = 20

// fmtNum formats an error or answer with three significant digits.
func fmtNum(x float64) string {
	switch {
	case x == 0:
		return "0"
	case x >= 1e-3 && x < 1e4:
		return strconv.FormatFloat(x, 'f', max(0, 2-int(floorLog10(x))), 64)
	}
	return strconv.FormatFloat(x, 'e', 2, 64)
}

func floorLog10(x float64) float64 {
	n := 0.0
	for x >= 10 {
		x /= 10
		n++
	}
	for x < 1 {
		x *= 10
		n--
	}
	return n
}

func fmtCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtSeconds(s float64) string {
	switch {
	case s == 0:
		return "—"
	case s < 1:
		return fmt.Sprintf("%.0f ms", s*1000)
	case s < 120:
		return fmt.Sprintf("%.1f s", s)
	}
	return fmt.Sprintf("%.1f min", s/60)
}

var funcs = template.FuncMap{
	"num": fmtNum,
	"count": func(n any) string {
		switch v := n.(type) {
		case int:
			return fmtCount(int64(v))
		case int64:
			return fmtCount(v)
		}
		return fmt.Sprint(n)
	},
	"seconds": fmtSeconds,
	"join":    strings.Join,
	"pct":     func(x float64) string { return strconv.FormatFloat(100*x, 'g', 3, 64) + "%" },
	"optnum": func(p *float64) string {
		if p == nil {
			return "—"
		}
		return fmtNum(*p)
	},
	"inc": func(i int) int { return i + 1 },
	"svg": func(s string) template.HTML { return template.HTML(s) }, // produced by svgOf from our own plots
}

// style is the report's only style sheet: no external fonts or files.
const style = `
body{font-family:'Liberation Sans',Arial,Helvetica,sans-serif;color:#222;margin:0;background:#f6f7f9;line-height:1.4}
main{max-width:1100px;margin:0 auto;padding:0 24px 40px}
.banner{background:#fff1c2;border-bottom:2px solid #d9a400;padding:10px 24px;font-weight:bold;text-align:center}
.banner.public{background:#e3f4e1;border-color:#4a9a3e}
h1{font-size:26px;margin:22px 0 4px}
h2{font-size:19px;margin:28px 0 10px;border-bottom:1px solid #ddd;padding-bottom:4px}
.sub{color:#555;margin:0 0 14px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:8px 0}
.card{background:#fff;border:1px solid #dde;border-radius:6px;padding:10px 16px;min-width:130px}
.card .k{font-size:12px;color:#666;text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:24px;font-weight:bold;font-variant-numeric:tabular-nums}
.card .v small{font-size:13px;color:#666;font-weight:normal}
.grp{margin:6px 0 2px;font-weight:bold;color:#333}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;background:#fff;border:1px solid #dde;border-radius:6px;padding:10px 16px}
.facts dt{color:#666}.facts dd{margin:0}
.plots{display:grid;grid-template-columns:1fr 1fr;gap:14px}
figure{margin:0;background:#fff;border:1px solid #dde;border-radius:6px;padding:8px}
figure.wide{grid-column:1 / span 2}
figcaption{font-size:13px;color:#555;padding:4px 6px 2px}
svg.plot{width:100%;height:auto;display:block}
table{border-collapse:collapse;width:100%;background:#fff;font-variant-numeric:tabular-nums;font-size:14px}
th,td{border-bottom:1px solid #e4e4e8;padding:5px 8px;text-align:right}
th{background:#eef0f4;font-weight:bold}
td.l,th.l{text-align:left}
tr:nth-child(even) td{background:#fafafc}
footer{color:#777;font-size:12px;margin-top:30px}
.plots.three{grid-template-columns:1fr 1fr 1fr}
.drills{display:grid;grid-template-columns:1fr 1fr;gap:6px 18px}
table.compact{font-size:12.5px}table.compact td,table.compact th{padding:3px 6px}
.key{display:inline-block;width:11px;height:11px;vertical-align:-1px}.key.kt{background:#2b6cb0}.key.ks{background:#e07b28}
`

var internalTmpl = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.R.Title}}</title>
<style>` + style + `</style>
</head>
<body>
<div class="banner">{{.Stamp}}. Do not publish this report.</div>
<main>
<h1>{{.R.Title}}</h1>
<p class="sub">{{if .R.Solver}}Solver {{.R.Solver}} · {{end}}{{count .R.Workload.Queries}} queries{{if .R.Workload.Marginals}} in {{count .R.Workload.Marginals}} marginals{{end}}{{if .R.RunTimeSeconds}} · run time before this report {{seconds .R.RunTimeSeconds}}{{end}}{{with .SolveStage}} · solve {{seconds .}}{{end}}{{with .R.TimeEstimate}} · whole release estimated {{seconds .ReleaseSeconds}} ({{seconds .Low}} to {{seconds .High}}){{end}}</p>
{{if .TimeRows}}<table class="compact">
<tr><th class="l">stage</th><th>seconds</th><th>estimated</th></tr>
{{range .TimeRows}}<tr><td class="l">{{.Name}}</td><td>{{seconds .Actual}}</td><td>{{seconds .Estimate}}</td></tr>
{{end}}</table>{{end}}
{{if .R.Budget}}<p class="sub"><strong>Privacy of the release:</strong> ε = {{.R.Budget.Epsilon}}, δ = {{.R.Budget.Delta}}{{if .R.Budget.Rho}}, ρ = {{num .R.Budget.Rho}} (zCDP){{end}}{{if .R.Budget.Neighbours}} · neighbouring datasets: {{.R.Budget.Neighbours}}{{end}}{{if .R.Budget.Accounting}} · accounting: {{.R.Budget.Accounting}}{{end}}</p>{{end}}
{{if .R.Note}}<p class="sub"><strong>Note:</strong> {{.R.Note}}</p>{{end}}

<h2>Headline: absolute error of the released rows</h2>
<p class="sub">Answers are fractions of the rows; the error of a query is |synthetic − true|.</p>
<div class="cards">
{{with .R.Errors.Synthetic}}<div class="card"><div class="k">max error</div><div class="v">{{num .Max}}</div></div>
<div class="card"><div class="k">mean error</div><div class="v">{{num .Mean}}</div></div>
<div class="card"><div class="k">RMSE</div><div class="v">{{num .RMSE}}</div></div>
<div class="card"><div class="k">95th percentile</div><div class="v">{{num .P95}}</div></div>{{end}}
</div>
{{if .R.Errors.Distribution}}<div class="grp">Where the error comes from</div>
<div class="cards">
<div class="card"><div class="k">solver (D before sampling)</div><div class="v">{{num .R.Errors.Distribution.Max}} <small>max · mean {{num .R.Errors.Distribution.Mean}}</small></div></div>
<div class="card"><div class="k">sampling (rows vs D)</div><div class="v">{{num .R.Errors.Sampling.Max}} <small>max · mean {{num .R.Errors.Sampling.Mean}}</small></div></div>
</div>{{end}}
{{if .R.Baseline}}<div class="grp">Baseline for comparison: independent attributes (the product of the data's one-way tables; internal, not DP)</div>
<div class="cards">
<div class="card"><div class="k">baseline max error</div><div class="v">{{num .R.Baseline.Errors.Max}}</div></div>
<div class="card"><div class="k">baseline mean error</div><div class="v">{{num .R.Baseline.Errors.Mean}}</div></div>
<div class="card"><div class="k">baseline RMSE</div><div class="v">{{num .R.Baseline.Errors.RMSE}}</div></div>
</div>{{end}}
{{if .R.Errors.Population}}<div class="grp">Population error estimate (against {{count .R.Rows.Holdout}} held-out records)</div>
<div class="cards">
<div class="card"><div class="k">max error</div><div class="v">{{num .R.Errors.Population.Max}}</div></div>
<div class="card"><div class="k">mean error</div><div class="v">{{num .R.Errors.Population.Mean}}</div></div>
</div>{{end}}

<h2>Run</h2>
<dl class="facts">
{{if .R.Rows.Data}}<dt>records in the data</dt><dd>{{count .R.Rows.Data}}</dd>{{end}}
{{if .R.Rows.Synthetic}}<dt>rows released</dt><dd>{{count .R.Rows.Synthetic}}</dd>{{end}}
{{if .R.Rows.Holdout}}<dt>records held out</dt><dd>{{count .R.Rows.Holdout}}</dd>{{end}}
{{range .R.Workload.Families}}<dt>workload: {{.Kind}}</dt><dd>{{.Description}} — {{count .Queries}} queries{{if ne .Weight 1.0}}, weight {{.Weight}}{{end}}</dd>
{{end}}{{if .R.Solver}}<dt>solver</dt><dd>{{.R.Solver}}</dd>{{end}}
{{if .R.SolverParams}}<dt>solver parameters</dt><dd>{{range $i, $p := .R.SolverParams}}{{if $i}} · {{end}}{{$p.Name}} = {{$p.Value}}{{end}}</dd>
{{end}}{{if .R.Trace.Points}}<dt>solver trace</dt><dd>{{count .R.Trace.Iterations}} iterations, objective {{num .R.Trace.FirstObjective}} → {{num .R.Trace.LastObjective}} (best {{num .R.Trace.BestObjective}}) in {{seconds .R.Trace.ElapsedSeconds}}</dd>{{end}}
</dl>

<h2>Plots</h2>
<div class="plots">
<figure>{{svg .Hist}}<figcaption>How many queries have each absolute error |synthetic − true| (log scale): most sit far below the largest error.</figcaption></figure>
<figure>{{svg .Scatter}}<figcaption>{{.ScatterCaption}} On the dashed diagonal a query is answered exactly.</figcaption></figure>
<figure class="wide">{{svg .Worst}}<figcaption>The marginals with the largest total-variation distance between the true and the synthetic table.</figcaption></figure>
{{if .Trace}}<figure class="wide">{{svg .Trace}}<figcaption>The solver's own estimate of its objective as it ran (from its diagnostics trace).</figcaption></figure>{{end}}
</div>

<h2>Legend</h2>
<dl class="facts">
<dt>true</dt><dd>the answer on the data the release was made from, as a fraction of its records (a query of weight w answers w·count/n)</dd>
<dt>synthetic</dt><dd>the same query answered on the released rows</dd>
<dt>abs error</dt><dd>|synthetic − true|, in fractions of the rows: 0.01 is one percentage point</dd>
<dt>L1</dt><dd>the L1 distance of a marginal's true and synthetic tables: the sum of its cells' absolute errors (divided by the weight); 0 is identical, 2 is disjoint</dd>
<dt>TV</dt><dd>total-variation distance, L1 / 2: the largest difference between the two tables in the fraction of rows of any set of cells; 0 to 1</dd>
<dt>max</dt><dd>the largest absolute error of one cell (one query)</dd>
<dt>D</dt><dd>the solver's distribution before rows were sampled from it: error of D is the solver's, D vs synthetic is the sampling error</dd>
{{if .R.Errors.Population}}<dt>holdout, population TV</dt><dd>answers on held-out records the release never saw: the error against them estimates the error against the population</dd>
{{end}}{{if .R.Baseline}}<dt>baseline</dt><dd>{{.R.Baseline.Description}}: a synthetic table that keeps every attribute's distribution and no association; a release should beat it on the marginals of two or more attributes</dd>
{{end}}<dt>&lt;null&gt;</dt><dd>the null (missing) value of a nullable attribute</dd>
<dt>RMSE, 95th percentile</dt><dd>the root mean square and the 95th percentile (nearest rank) of the queries' absolute errors</dd>
</dl>

{{if .OneWay}}<h2>One-way distributions</h2>
<p class="sub">Each attribute's distribution on the data (<span class="key kt"></span> true) and on the released rows (<span class="key ks"></span> synthetic), and their TV distance.</p>
<div class="plots three">
{{range .OneWay}}<figure>{{svg .}}</figure>
{{end}}</div>{{end}}

{{if .Marginals}}<h2>Worst marginals</h2>
<p class="sub">Sorted by total-variation distance between the true and synthetic tables (TV = L1 / 2); max is the largest cell error.</p>
<table>
<tr><th class="l">#</th><th class="l">attributes</th><th>cells</th><th>TV</th><th>L1</th><th>max cell error</th>{{if .R.Baseline}}<th>baseline L1</th>{{end}}{{if .R.Errors.Sampling}}<th>sampling TV</th>{{end}}{{if .R.Errors.Population}}<th>population TV</th>{{end}}</tr>
{{range $i, $m := .Marginals}}<tr><td class="l">{{inc $i}}</td><td class="l">{{join $m.Attributes " × "}}</td><td>{{count $m.Cells}}</td><td>{{num $m.TV}}</td><td>{{num $m.L1}}</td><td>{{num $m.Max}}</td>{{if $.R.Baseline}}<td>{{optnum $m.BaselineL1}}</td>{{end}}{{if $.R.Errors.Sampling}}<td>{{optnum $m.SamplingTV}}</td>{{end}}{{if $.R.Errors.Population}}<td>{{optnum $m.PopulationTV}}</td>{{end}}</tr>
{{end}}</table>{{end}}

{{if .R.Drilldown}}<h2>Drill-down: the worst marginals by L1</h2>
<p class="sub">The cells of the marginals with the largest L1 distance, each labelled with its attribute values; the worst cells first when a marginal has more than fit here (report.json has every query).</p>
<div class="drills">
{{range $i, $d := .R.Drilldown}}<div><div class="grp">{{inc $i}}. {{join $d.Attributes " × "}} — L1 {{num $d.L1}}{{if lt (len $d.Shown) $d.Cells}} · the {{len $d.Shown}} worst of {{count $d.Cells}} cells{{else}} · all {{count $d.Cells}} cells{{end}}</div>
<table class="compact">
<tr><th class="l">cell</th><th>true</th><th>synthetic</th><th>abs error</th></tr>
{{range $d.Shown}}<tr><td class="l">{{.Label}}</td><td>{{num .True}}</td><td>{{num .Synthetic}}</td><td>{{num .AbsError}}</td></tr>
{{end}}</table></div>
{{end}}</div>{{end}}

<h2>Worst queries</h2>
<table>
<tr><th class="l">#</th><th class="l">query</th><th>true</th><th>synthetic</th><th>abs error</th>{{if .R.Errors.Distribution}}<th>D</th>{{end}}{{if .R.Errors.Population}}<th>holdout</th>{{end}}</tr>
{{range $i, $q := .Queries}}<tr><td class="l">{{inc $i}}</td><td class="l">{{$q.Label}}</td><td>{{num $q.True}}</td><td>{{num $q.Synthetic}}</td><td>{{num $q.AbsError}}</td>{{if $.R.Errors.Distribution}}<td>{{optnum $q.Distribution}}</td>{{end}}{{if $.R.Errors.Population}}<td>{{optnum $q.Holdout}}</td>{{end}}</tr>
{{end}}</table>

<footer>{{.R.Schema}} · {{.Stamp}} · every query's answers are in report.json.</footer>
</main>
</body>
</html>
`))

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and inline SVG plots (gonum/plot), no scripts, fonts, images or links.
// The page carries a visible banner with InternalStamp.
func (r *Report) WriteHTML(w io.Writer) error {
	hist := r.hist
	if hist == nil {
		hist = &errHist{}
		for _, q := range r.Queries {
			if q.AbsError >= exactBelow {
				hist.shown = append(hist.shown, q.AbsError)
			} else {
				hist.exact++
			}
		}
	}
	worstM := slices.Clone(r.Marginals)
	slices.SortStableFunc(worstM, func(a, b MarginalError) int { return cmp.Compare(b.TV, a.TV) })
	worstM = worstM[:min(len(worstM), TableRows)]
	byErr := byError(r.Queries)
	worstQ := make([]QueryError, min(len(byErr), TableRows))
	for i := range worstQ {
		worstQ[i] = r.Queries[byErr[i]]
	}

	data := struct {
		R                           *Report
		Stamp                       string
		Hist, Scatter, Worst, Trace string
		ScatterCaption              string
		Marginals                   []MarginalError
		Queries                     []QueryError
		OneWay                      []string
		SolveStage                  float64 // the solve stage's seconds (0: not known)
		TimeRows                    []timeRow
	}{R: r, Stamp: capitalize(r.Privacy), Marginals: worstM, Queries: worstQ}
	for _, st := range r.Stages {
		if st.Name == "solve" {
			data.SolveStage = st.Seconds
		}
	}
	data.TimeRows = timeRows(r)
	var err error
	if data.Hist, err = errorHistogram(hist.shown, hist.exact); err != nil {
		return fmt.Errorf("eval: error histogram: %w", err)
	}
	if data.Scatter, data.ScatterCaption, err = answerScatter(r.Queries, byErr); err != nil {
		return fmt.Errorf("eval: answer scatter: %w", err)
	}
	if r.QueriesOmitted > 0 {
		data.ScatterCaption = fmt.Sprintf("The %d worst of %d queries (the report lists at most %d). ", len(r.Queries), len(r.Queries)+r.QueriesOmitted, MaxReportQueries) + data.ScatterCaption
	}
	if data.Worst, err = worstMarginals(worstM[:min(len(worstM), 15)]); err != nil {
		return fmt.Errorf("eval: worst marginals: %w", err)
	}
	if data.Trace, err = traceLine(r.Trace.Samples); err != nil {
		return fmt.Errorf("eval: trace: %w", err)
	}
	for _, o := range r.OneWay {
		svg, err := oneWayBars(o)
		if err != nil {
			return fmt.Errorf("eval: one-way plot of %q: %w", o.Attribute, err)
		}
		data.OneWay = append(data.OneWay, svg)
	}
	return internalTmpl.Execute(w, data)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// timeRow is a stage of the release with its actual and estimated seconds
// (Actual 0: not known when the report was written, as the report's own).
type timeRow struct {
	Name             string
	Actual, Estimate float64
}

// timeRows sets each estimated stage beside its actual time.
func timeRows(r *Report) []timeRow {
	e := r.TimeEstimate
	if e == nil {
		return nil
	}
	rows := make([]timeRow, 0, len(e.Stages))
	for _, es := range e.Stages {
		row := timeRow{Name: es.Name, Estimate: es.Seconds}
		for _, st := range r.Stages {
			if st.Name == es.Name {
				row.Actual = st.Seconds
			}
		}
		rows = append(rows, row)
	}
	return rows
}
