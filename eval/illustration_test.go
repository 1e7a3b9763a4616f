package eval_test

import (
	"bytes"
	"encoding/csv"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/universe"
)

var reportHTML = flag.String("report-html", "", "write the illustration's report.html to this path (for docs/report-screenshot.png)")

// illustration builds a realistic report input on adult-reduced with all
// 35 3-way marginals. It is an ILLUSTRATION, not a release: D is a blend of
// the data's histogram with the product of its one-way marginals, perturbed
// by seeded noise (standing in for a solver's output), and the trace is
// made up. The rest is the real path: 10% of the records held out, N rows
// drawn from D by systematic sampling, answers from the workload operator.
func illustration(t testing.TB) *eval.Input {
	t.Helper()
	ds, err := datasets.Lookup("adult-reduced")
	if err != nil {
		t.Fatal(err)
	}
	src, err := datasets.ReadFile(ds.Domain)
	if err != nil {
		t.Fatal(err)
	}
	dom, err := universe.ParseDomain(src)
	if err != nil {
		t.Fatal(err)
	}
	data, err := datasets.ReadFile(ds.Data)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	pos := make([]int, len(recs[0])) // CSV column → domain attribute
	for c, name := range recs[0] {
		i, ok := dom.Index(name)
		if !ok {
			t.Fatalf("column %q not in the domain", name)
		}
		pos[c] = i
	}
	r := rand.New(rand.NewChaCha8([32]byte{'i', 'l', 'l', 'u', 's'}))
	train, hold := universe.NewCounts(dom), universe.NewCounts(dom)
	codes := make([]int, dom.Len())
	for row, rec := range recs[1:] {
		for c, v := range rec {
			code, _, err := dom.Attr(pos[c]).EncodeString(v, universe.Policy{})
			if err != nil {
				t.Fatalf("row %d column %d: %v", row+1, c+1, err)
			}
			codes[pos[c]] = code
		}
		dst := train
		if r.Float64() < 0.1 {
			dst = hold
		}
		if err := dst.Add(codes, 1); err != nil {
			t.Fatal(err)
		}
	}
	w, err := query.KWay(dom, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	op, err := w.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	k, m := op.K(), op.M()

	// D: 0.85·P_n + 0.15·(product of one-way marginals), times seeded
	// log-normal noise, renormalised.
	pn := train.Normalized(make([]float64, k))
	one := make([][]float64, dom.Len())
	for i := range one {
		one[i] = make([]float64, dom.Attr(i).Size())
	}
	for z, p := range pn {
		dom.Decode(uint64(z), codes)
		for i, c := range codes {
			one[i][c] += p
		}
	}
	d := make([]float64, k)
	var sum float64
	for z := range d {
		dom.Decode(uint64(z), codes)
		prod := 1.0
		for i, c := range codes {
			prod *= one[i][c]
		}
		d[z] = (0.85*pn[z] + 0.15*prod) * math.Exp(0.4*r.NormFloat64())
		sum += d[z]
	}
	for z := range d {
		d[z] /= sum
	}
	n := train.Total()
	cells, err := release.Sample(nil, d, n, release.Systematic, r)
	if err != nil {
		t.Fatal(err)
	}
	in := &eval.Input{
		Workload:      w,
		True:          w.AnswerCounts(train, make([]float64, m)),
		Holdout:       w.AnswerCounts(hold, make([]float64, m)),
		Distribution:  make([]float64, m),
		Synthetic:     make([]float64, m),
		DataRows:      n,
		SyntheticRows: n,
		HoldoutRows:   hold.Total(),
		Title:         "adult-reduced, all 35 3-way marginals",
		Note: "illustration: the distribution is the data's histogram blended with its one-way product and perturbed by seeded noise, " +
			"and the solver trace is made up; no privacy mechanism ran. The rows are sampled from it as in a release.",
		Solver:  "illustration",
		RunTime: 2300 * time.Millisecond,
	}
	tw, sw := release.NewOneWay(dom), release.NewOneWay(dom)
	tw.AddCounts(train)
	sw.AddCells(cells)
	in.OneWay = release.OneWayDists(tw, sw)
	op.Answer(d, in.Distribution)
	op.Answer(release.Histogram(cells, make([]float64, k)), in.Synthetic)
	for it := 1; it <= 150; it++ {
		obj := 0.012 + 0.09/(1+float64(it)/6) + 0.002*r.NormFloat64()*math.Exp(-float64(it)/60)
		in.Trace = append(in.Trace, eval.TracePoint{Iteration: it, Objective: obj, Elapsed: time.Duration(it) * 14 * time.Millisecond})
	}
	return in
}

// TestIllustration renders the illustration report; with -report-html it
// keeps the page for the screenshot in docs/.
func TestIllustration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds adult-reduced answers")
	}
	in := illustration(t)
	rep, err := eval.Evaluate(in)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if loc := regexp.MustCompile(`(?i)https?:|//|src\s*=|@import|url\(|<script|<link|<img|href\s*=`).FindIndex(buf.Bytes()); loc != nil {
		t.Errorf("HTML has an external reference: %q", buf.Bytes()[loc[0]:loc[1]])
	}
	if got, want := bytes.Count(buf.Bytes(), []byte("<svg")), 4+in.Workload.Domain().Len(); got != want {
		t.Errorf("%d plots, want %d (4 and one per attribute)", got, want)
	}
	if rep.Baseline == nil || len(rep.Drilldown) != eval.DrillMarginals {
		t.Errorf("baseline %v, %d drill-downs; want a baseline and %d", rep.Baseline, len(rep.Drilldown), eval.DrillMarginals)
	} else if b := rep.Baseline.Errors.Mean; !(b > rep.Errors.Synthetic.Mean) {
		// D is 85% the data's histogram: it must beat independence.
		t.Errorf("baseline mean error %v, want above the synthetic's %v", b, rep.Errors.Synthetic.Mean)
	}
	if len(rep.Marginals) != 35 || len(rep.Queries) != 14955 {
		t.Errorf("%d marginals, %d queries; want 35, 14,955", len(rep.Marginals), len(rep.Queries))
	}
	// Systematic sampling keeps every cell within one row of N·D, so the
	// sampling error of a marginal cell is far below i.i.d.'s √(p/n).
	if s := rep.Errors.Sampling.Max; s > 0.002 {
		t.Errorf("sampling error max %v, want small under systematic sampling", s)
	}
	t.Logf("max %.4g mean %.3g; sampling max %.3g; population max %.4g; html %d bytes",
		rep.Errors.Synthetic.Max, rep.Errors.Synthetic.Mean, rep.Errors.Sampling.Max, rep.Errors.Population.Max, buf.Len())
	if *reportHTML != "" {
		if err := os.WriteFile(*reportHTML, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		js, _ := rep.JSON()
		t.Logf("report.json would be %s bytes", strconv.Itoa(len(js)))
	}
}
