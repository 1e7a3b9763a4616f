package bench

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// pgmCSV holds private-pgm's AIM and MST measured here on the accuracy
// suite, one row per run as docs/bench/suite/pgm.sh appends them:
// protocol, method, ε, run, max error, mean marginal L1, seconds, peak RSS
// (MiB). NaN errors mark a run that did not finish (stopped at pgm.sh's
// time limit or by hand).
//
//go:embed refs/pgm.csv
var pgmCSV []byte

// pgmMethods names the measured methods as the summaries show them.
var pgmMethods = map[string]string{"aim": "AIM (private-pgm)", "mst": "MST (private-pgm)"}

// pgmNote says how the measured references were obtained.
const pgmNote = "AIM and MST: private-pgm's own code and defaults (commit 514dea3, the last before its JAX rewrite), " +
	"add/remove neighbours, run on this machine by docs/bench/suite/pgm.sh and scored by synth eval on the same " +
	"workload; means over their runs (numpy's unseeded generator), wall time of the whole mechanism."

// refRun is one measured run of a reference method.
type refRun struct {
	protocol, method   string
	eps, max, l1, secs float64
}

// parseRefs reads rows of pgm.sh's CSV.
func parseRefs(b []byte) ([]refRun, error) {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, err
	}
	var runs []refRun
	for i, r := range recs {
		if len(r) != 8 {
			return nil, fmt.Errorf("bench: refs/pgm.csv line %d: %d fields, want 8", i+1, len(r))
		}
		if _, ok := pgmMethods[r[1]]; !ok {
			return nil, fmt.Errorf("bench: refs/pgm.csv line %d: unknown method %q", i+1, r[1])
		}
		var f [4]float64
		for j, col := range []int{2, 4, 5, 6} {
			if f[j], err = strconv.ParseFloat(r[col], 64); err != nil {
				return nil, fmt.Errorf("bench: refs/pgm.csv line %d: %w", i+1, err)
			}
		}
		if !(f[0] > 0) || math.IsInf(f[0], 1) {
			return nil, fmt.Errorf("bench: refs/pgm.csv line %d: ε %q is not a positive number", i+1, r[2])
		}
		runs = append(runs, refRun{protocol: r[0], method: r[1], eps: f[0], max: f[1], l1: f[2], secs: f[3]})
	}
	return runs, nil
}

// measuredRefs averages the runs of each method on protocol name by ε
// (runs with NaN errors left out; a point with no finished run has NaN
// figures), in the order AIM, MST.
func measuredRefs(runs []refRun, name string) []Reference {
	var refs []Reference
	for _, m := range []string{"aim", "mst"} {
		type acc struct{ maxes, l1s, secs []float64 }
		by := map[float64]*acc{}
		var eps []float64
		for _, r := range runs {
			if r.protocol != name || r.method != m {
				continue
			}
			a := by[r.eps]
			if a == nil {
				a = &acc{}
				by[r.eps] = a
				eps = append(eps, r.eps)
			}
			if !math.IsNaN(r.max) && !math.IsNaN(r.l1) {
				a.maxes, a.l1s, a.secs = append(a.maxes, r.max), append(a.l1s, r.l1), append(a.secs, r.secs)
			}
		}
		if len(eps) == 0 {
			continue
		}
		slices.Sort(eps)
		ref := Reference{Method: pgmMethods[m]}
		for _, e := range eps {
			a := by[e]
			n := len(a.maxes)
			rp := RefPoint{Epsilon: e, Max: math.NaN(), L1: math.NaN(), Seconds: math.NaN(), Runs: n,
				MaxSD: summarise(a.maxes).SD, L1SD: summarise(a.l1s).SD}
			if n > 0 {
				rp.Max, rp.L1, rp.Seconds = runMean(a.maxes), runMean(a.l1s), runMean(a.secs)
			}
			ref.Points = append(ref.Points, rp)
		}
		ref.Wall = wallRange(ref.Points, func(float64) bool { return true })
		refs = append(refs, ref)
	}
	return refs
}

// runMean is the mean of the runs' figures, summed in the runs' order (as
// the references in the docs were computed; a pairwise sum rounds the last
// digit of some otherwise).
func runMean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// init attaches the measured references to their protocols: they replace
// a literal reference of the same method and come first.
func init() {
	runs, err := parseRefs(pgmCSV)
	if err != nil {
		panic(err) // the embedded file is checked by TestEmbeddedRefs
	}
	for _, p := range protocols {
		m := measuredRefs(runs, p.Name)
		measured := len(m)
		if measured == 0 {
			continue
		}
		for _, old := range p.References {
			if !slices.ContainsFunc(m, func(r Reference) bool { return r.Method == old.Method }) {
				m = append(m, old)
			}
		}
		note := pgmNote
		if len(m) > measured && p.ReferenceNote != "" {
			note += " The others: " + p.ReferenceNote
		}
		p.References = m
		p.ReferenceNote = note
		if p.Versus == "" {
			p.Versus = pgmMethods["aim"]
		}
	}
}

// wallRange is the range of the mean wall times of the points whose ε keep
// accepts and that have a measured time, as "lo–hi s"; "" when none has.
func wallRange(points []RefPoint, keep func(eps float64) bool) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, rp := range points {
		if keep(rp.Epsilon) && rp.Seconds > 0 {
			lo, hi = min(lo, rp.Seconds), max(hi, rp.Seconds)
		}
	}
	if hi < lo {
		return ""
	}
	return fmtSec(lo) + "–" + fmtSec(hi) + " s"
}
