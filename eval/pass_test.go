package eval

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// passMetrics is errStats' summary of errs (against zeros, no workload).
func passMetrics(errs []float64) Metrics {
	c := &errStats{a: answers{v: errs}, b: answers{v: make([]float64, len(errs))}, m: len(errs),
		hist: new([1 << 16]uint32), ebuf: make([]float64, scanChunk)}
	c.scan()
	return c.metrics()
}

// scratchMetrics is Summarize without the copy: the former form of the
// report's summaries (moments, then quickselect on the errors).
func scratchMetrics(errs []float64) Metrics {
	m := moments(errs)
	if len(errs) > 0 {
		m.P95 = selectKth(errs, nearestRank(len(errs), 0.95))
	}
	return m
}

// evaluateRef is Evaluate's former form, one vector of m errors per
// comparison: the reference whose report the passes must reproduce, bit
// for bit. It also returns the synthetic errors.
func evaluateRef(t *testing.T, in *Input) (*Report, []float64) {
	t.Helper()
	w := in.Workload
	m := w.M()
	if err := checkInputs(in, m); err != nil {
		t.Fatal(err)
	}
	r := &Report{Schema: ReportSchema, Privacy: InternalStamp, Title: in.Title, Note: in.Note, Solver: in.Solver,
		Workload: workloadInfo(w), Rows: RowsInfo{Data: in.DataRows, Synthetic: in.SyntheticRows, Holdout: in.HoldoutRows},
		RunTimeSeconds: in.RunTime.Seconds(), Stages: slices.Clone(in.Stages), TimeEstimate: in.Estimate, Trace: summarizeTrace(in.Trace)}
	if r.Title == "" {
		r.Title = "Workload error report"
	}
	if in.Privacy.Epsilon > 0 {
		p := in.Privacy
		r.Budget = &p
	}
	r.SolverParams = slices.Clone(in.SolverParams)
	ow, err := oneWays(w, in.OneWay)
	if err != nil {
		t.Fatal(err)
	}
	r.OneWay = ow
	var baseAns []float64
	if ow != nil {
		p := make([][]float64, len(ow))
		for i, o := range ow {
			p[i] = o.True
		}
		baseAns = w.AnswerProduct(p, make([]float64, m)) // its bits: query.TestAnswerProductRangeBits
		r.Baseline = &Baseline{Description: BaselineDescription, Errors: scratchMetrics(AbsErrors(in.True, baseAns, make([]float64, m)))}
	}
	if in.Distribution != nil {
		d := scratchMetrics(AbsErrors(in.True, in.Distribution, make([]float64, m)))
		s := scratchMetrics(AbsErrors(in.Distribution, in.Synthetic, make([]float64, m)))
		r.Errors.Distribution, r.Errors.Sampling = &d, &s
	}
	if in.Holdout != nil {
		p := scratchMetrics(AbsErrors(in.Holdout, in.Synthetic, make([]float64, m)))
		r.Errors.Population = &p
	}
	errs := AbsErrors(in.True, in.Synthetic, make([]float64, m))
	r.Errors.Synthetic = Summarize(errs)
	kept := make([]int, m)
	for j := range kept {
		kept[j] = j
	}
	if m > MaxReportQueries {
		thr := selectKth(slices.Clone(errs), m-MaxReportQueries)
		kept = kept[:0]
		for j, e := range errs {
			if e > thr {
				kept = append(kept, j)
			}
		}
		for j, e := range errs {
			if e == thr && len(kept) < MaxReportQueries {
				kept = append(kept, j)
			}
		}
		slices.Sort(kept)
		r.QueriesOmitted = m - len(kept)
	}
	r.Queries = listQueries(in, kept)
	for _, s := range w.Marginals() {
		me := MarginalError{Attributes: w.SetNames(s), Offset: s.Offset, Cells: s.Cells, Weight: s.Weight}
		me.L1 = l1(in.True, in.Synthetic, s) / s.Weight
		me.TV = me.L1 / 2
		for _, e := range errs[s.Offset : s.Offset+s.Cells] {
			me.Max = max(me.Max, e)
		}
		if in.Distribution != nil {
			tv := l1(in.Distribution, in.Synthetic, s) / s.Weight / 2
			me.SamplingTV = &tv
		}
		if in.Holdout != nil {
			tv := l1(in.Holdout, in.Synthetic, s) / s.Weight / 2
			me.PopulationTV = &tv
		}
		if baseAns != nil {
			b := l1(in.True, baseAns, s) / s.Weight
			me.BaselineL1 = &b
		}
		r.Marginals = append(r.Marginals, me)
	}
	r.Drilldown = drillsRef(w, r, in, errs)
	r.hist = &errHist{}
	for _, e := range errs {
		if e >= exactBelow {
			r.hist.shown = append(r.hist.shown, e)
		} else {
			r.hist.exact++
		}
	}
	return r, errs
}

// drillsRef is drills' former form: a stable sort of every cell of a
// drilled marginal by decreasing error.
func drillsRef(w *query.Workload, r *Report, in *Input, errs []float64) []Drill {
	order := make([]int, len(r.Marginals))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(r.Marginals[b].L1, r.Marginals[a].L1) })
	out := []Drill{}
	for _, i := range order[:min(len(order), DrillMarginals)] {
		m := r.Marginals[i]
		d := Drill{Attributes: m.Attributes, L1: m.L1, Cells: m.Cells}
		idx := make([]int, m.Cells)
		for c := range idx {
			idx[c] = m.Offset + c
		}
		if len(idx) > DrillCells {
			slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(errs[b], errs[a]) })
			idx = idx[:DrillCells]
		}
		for _, j := range idx {
			d.Shown = append(d.Shown, DrillCell{Label: w.Label(j), True: in.True[j], Synthetic: in.Synthetic[j], AbsError: errs[j]})
		}
		out = append(out, d)
	}
	return out
}

// randomEvalInput returns answers of the kind a release scores: counts
// over n (mostly zero, many equal), with distribution and holdout answers
// and one-way tables as asked; dense: 3/4 of the answers nonzero, else 1/4.
func randomEvalInput(t *testing.T, r *rand.Rand, w *query.Workload, dense, dist, hold, oneWay bool) *Input {
	m := w.M()
	counts := func(n float64) []float64 {
		v := make([]float64, m)
		for j := range v {
			if r.IntN(4) == 0 || dense && r.IntN(3) != 0 {
				v[j] = w.Weight(j) * float64(1+r.IntN(5)) / n
			}
		}
		return v
	}
	in := &Input{Workload: w, True: counts(977), Synthetic: counts(1013), Title: "random"}
	if dist {
		in.Distribution = make([]float64, m)
		for j := range in.Distribution {
			in.Distribution[j] = in.Synthetic[j] + r.Float64()*1e-3
		}
	}
	if hold {
		in.Holdout = counts(101)
	}
	if oneWay {
		dom := w.Domain()
		for _, a := range dom.Attrs() {
			d := AttributeDist{Name: a.Name}
			for c := range a.Size() {
				d.Labels = append(d.Labels, fmt.Sprint(c))
				d.True = append(d.True, 1/float64(a.Size())+(r.Float64()-0.5)/float64(4*a.Size()))
				d.Synthetic = append(d.Synthetic, 1/float64(a.Size()))
			}
			in.OneWay = append(in.OneWay, d)
		}
	}
	return in
}

// TestEvaluateMatchesReference: Evaluate's report.json and report.html
// are the bytes of the former one-vector-per-comparison form, on
// workloads of marginals (with a gap of other queries), prefixes and
// predicates, below and above MaxReportQueries (with ties at the
// threshold), with and without the optional answers, and with the radix
// select's deeper passes forced (a small gatherCap).
func TestEvaluateMatchesReference(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(`{"a": 7, "b": 12, "c": 5, "d": 9, "e": 16, "f": 3, "g": 11}`))
	if err != nil {
		t.Fatal(err)
	}
	small, err := query.Parse([]byte(`{"families": [
	  {"type": "marginals", "sets": [["a", "b"], ["c"]]},
	  {"type": "prefixes", "attribute": "e", "weight": 0.5},
	  {"type": "marginals", "sets": [["b", "d", "g"]], "weight": 0.25},
	  {"type": "predicate", "where": [{"attribute": "a", "in": ["1", "2"]}]}
	]}`), dom)
	if err != nil {
		t.Fatal(err)
	}
	large, err := query.Parse([]byte(`{"families": [
	  {"type": "prefixes", "attribute": "b"},
	  {"type": "kway", "k": 3},
	  {"type": "prefixes", "attribute": "e", "weight": 0.5},
	  {"type": "marginals", "sets": [["a", "b", "c", "d"], ["a", "b", "d", "e"], ["b", "d", "e", "g"], ["a", "b", "e", "g"]], "weight": 0.75}
	]}`), dom)
	if err != nil {
		t.Fatal(err)
	}
	if large.M() <= MaxReportQueries {
		t.Fatalf("large workload has %d queries, want more than %d", large.M(), MaxReportQueries)
	}
	defer func(g int) { gatherCap = g }(gatherCap)
	r := rand.New(rand.NewPCG(11, 12))
	for i, tc := range []struct {
		w                     *query.Workload
		dense, dist, hold, ow bool
		gather                int
	}{
		{small, false, false, false, false, 1 << 20},
		{small, false, true, true, true, 1 << 20},
		{small, true, true, false, true, 3},
		{large, false, false, false, true, 1 << 20},
		{large, false, true, true, true, 1 << 20},
		{large, false, false, true, true, 5},
		{large, true, false, false, true, 1 << 20},
		{large, true, true, false, false, 5},
	} {
		gatherCap = tc.gather
		in := randomEvalInput(t, r, tc.w, tc.dense, tc.dist, tc.hold, tc.ow)
		want, _ := evaluateRef(t, in)
		got, err := Evaluate(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range []func(*Report) ([]byte, error){(*Report).JSON, htmlOf} {
			gb, err := form(got)
			if err != nil {
				t.Fatal(err)
			}
			wb, err := form(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gb, wb) {
				t.Fatalf("case %d (m %d): report differs from the reference's:\n%s", i, tc.w.M(), firstDiff(gb, wb))
			}
		}
	}
}

func htmlOf(r *Report) ([]byte, error) {
	var b bytes.Buffer
	err := r.WriteHTML(&b)
	return b.Bytes(), err
}

// firstDiff shows the first differing line of two texts.
func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(la), len(lb))
}

// TestKthMatchesSort: the radix select returns the sorted order's k-th
// error (the first, the last and random ranks), on errors with zeros, ties, subnormals and a wide
// range, with every gather size (down to the full 4 levels).
func TestKthMatchesSort(t *testing.T) {
	defer func(g int) { gatherCap = g }(gatherCap)
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 40 {
		n := 1 + r.IntN(3000)
		errs := make([]float64, n)
		for i := range errs {
			switch r.IntN(6) {
			case 0:
				errs[i] = 0
			case 1:
				errs[i] = 1.0 / 977
			case 2:
				errs[i] = math.SmallestNonzeroFloat64 * float64(1+r.IntN(3))
			case 3:
				errs[i] = math.Nextafter(1.0/977, 1)
			default:
				errs[i] = math.Ldexp(r.Float64(), -r.IntN(60))
			}
		}
		gatherCap = []int{0, 1, 7, 1 << 20}[trial%4]
		c := &errStats{a: answers{v: errs}, b: answers{v: make([]float64, n)}, m: n,
			hist: new([1 << 16]uint32), ebuf: make([]float64, scanChunk)}
		c.scan()
		sorted := slices.Clone(errs)
		slices.Sort(sorted)
		for _, k := range []int{0, n - 1, r.IntN(n), r.IntN(n), r.IntN(n), r.IntN(n), r.IntN(n), r.IntN(n)} {
			if got := c.kth(k); math.Float64bits(got) != math.Float64bits(sorted[k]) {
				t.Fatalf("trial %d (n %d, gatherCap %d): kth(%d) = %v, want %v", trial, n, gatherCap, k, got, sorted[k])
			}
		}
	}
}

// TestEvaluateNotFinite: a NaN or infinite answer anywhere is the first
// such error of the former checks (true, synthetic, distribution,
// holdout, in order), also when another input is wrong too.
func TestEvaluateNotFinite(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Input)
		want string
	}{
		{func(in *Input) { in.Synthetic[7] = math.Inf(1) }, "eval: synthetic answer 7 is +Inf"},
		{func(in *Input) { in.Holdout[2] = math.NaN() }, "eval: holdout answer 2 is NaN"},
		{func(in *Input) { in.Distribution[9] = math.Inf(-1) }, "eval: distribution answer 9 is -Inf"},
		{func(in *Input) { in.True[3], in.Synthetic[3] = math.Inf(1), math.Inf(1) }, "eval: true answer 3 is +Inf"},
		{func(in *Input) { in.True[5] = math.NaN(); in.Holdout = in.Holdout[:2] }, "eval: true answer 5 is NaN"},
		{func(in *Input) { in.Synthetic[1] = math.NaN(); in.OneWay[0].Name = "x" }, "eval: synthetic answer 1 is NaN"},
	} {
		in := smallInput(t)
		tc.edit(in)
		_, err := Evaluate(in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Evaluate error %v, want %q", err, tc.want)
		}
	}
}

// BenchmarkEvaluate scores 3-way marginals of a 10-attribute domain
// (about 2·10^6 queries, mostly zero answers) with the baseline: the
// report's passes.
func BenchmarkEvaluate(b *testing.B) {
	dom, err := universe.ParseDomain([]byte(`{"a": 20, "b": 9, "c": 16, "d": 7, "e": 15, "f": 6, "g": 5, "h": 2, "i": 40, "j": 2}`))
	if err != nil {
		b.Fatal(err)
	}
	w, err := query.KWay(dom, 3, nil)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	t := &testing.T{}
	in := randomEvalInput(t, r, w, false, false, false, true)
	for _, v := range [][]float64{in.True, in.Synthetic} {
		for j := range v {
			if r.IntN(8) != 0 {
				v[j] = 0
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Evaluate(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan is errStats' first pass over two vectors of 2^22 answers
// (7/8 of the errors zero, as in a release of all 3-way marginals), in
// ns per query.
func BenchmarkScan(b *testing.B) {
	const m = 1 << 22
	r := rand.New(rand.NewPCG(3, 4))
	a, s := make([]float64, m), make([]float64, m)
	for j := range a {
		if r.IntN(8) == 0 {
			a[j], s[j] = float64(r.IntN(5))/977, float64(r.IntN(5))/1013
		}
	}
	c := &errStats{a: answers{v: a}, b: answers{v: s}, m: m, hist: new([1 << 16]uint32), ebuf: make([]float64, scanChunk)}
	b.ReportAllocs()
	for b.Loop() {
		c.sum, c.sq, c.max = 0, 0, 0
		c.scan()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/m, "ns/query")
}
