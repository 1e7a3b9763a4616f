package bench

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// The accuracy suite's bars (issue "accuracy that holds on tables nobody
// tuned on"): at every point, synth's mean marginal L1 at most suiteL1Bar
// times the best of AIM's and MST's and its max error at most suiteMaxBar
// times theirs; over the suite, the mean ratios at most suiteMeanL1Bar and
// suiteMeanMaxBar; AIM's time at least suiteTimeBar times synth's.
const (
	suiteL1Bar      = 0.95
	suiteMaxBar     = 1.0
	suiteMeanL1Bar  = 0.9
	suiteMeanMaxBar = 0.85
	suiteTimeBar    = 20
)

// suiteRow is one (protocol, ε) point of a series against the best
// measured reference.
type suiteRow struct {
	protocol        string
	c               *cell
	aim, mst        *RefPoint
	maxRatio, l1Rat float64 // synth's over the lower of AIM's and MST's
	timeRatio       float64 // AIM's seconds over synth's (NaN: unknown)
}

// newSuiteRow compares cell c of a series on protocol with the measured
// points of AIM and MST at its ε; false when neither was measured there.
func newSuiteRow(protocol string, c *cell, aim, mst *Reference) (suiteRow, bool) {
	row := suiteRow{protocol: protocol, c: c, aim: pointAt(aim, c.Epsilon), mst: pointAt(mst, c.Epsilon), timeRatio: math.NaN()}
	bestMax, bestL1 := math.Inf(1), math.Inf(1)
	for _, rp := range []*RefPoint{row.aim, row.mst} {
		if rp != nil {
			bestMax, bestL1 = min(bestMax, rp.Max), min(bestL1, rp.L1)
		}
	}
	if math.IsInf(bestMax, 1) {
		return row, false
	}
	row.maxRatio, row.l1Rat = c.Max.Mean/bestMax, c.L1.Mean/bestL1
	if row.aim != nil && row.aim.Seconds > 0 && c.Seconds.Mean > 0 {
		row.timeRatio = row.aim.Seconds / c.Seconds.Mean
	}
	return row, true
}

// writeSuite writes, for each series run on the suite's protocols, one
// table of synth against AIM and MST (measured) point by point, the ratios
// to the best of the two, and the suite's bars.
func writeSuite(p func(string, ...any), secs []*section) {
	bySeries := map[string][]suiteRow{}
	var labels []string
	for _, s := range secs {
		if s.Known == nil || !slices.Contains(SuiteProtocols, s.Protocol) {
			continue
		}
		aim, mst := refByMethod(s.Known, "aim"), refByMethod(s.Known, "mst")
		for _, sr := range s.Series {
			for _, c := range sr.Cells {
				if c.OK == 0 || c.L1.N == 0 {
					continue
				}
				row, ok := newSuiteRow(s.Protocol, c, aim, mst)
				if !ok {
					continue
				}
				if _, seen := bySeries[sr.Label]; !seen {
					labels = append(labels, sr.Label)
				}
				bySeries[sr.Label] = append(bySeries[sr.Label], row)
			}
		}
	}
	for _, label := range labels {
		writeSuiteTable(p, label, bySeries[label])
	}
}

func writeSuiteTable(p func(string, ...any), label string, rows []suiteRow) {
	p("\n## The accuracy suite: %s against AIM and MST\n\n", label)
	p("| protocol | ε | synth max / L1 | synth s | AIM max / L1 | AIM s | MST max / L1 | max / best | L1 / best | AIM time / synth |\n")
	p("|---|---|---|---|---|---|---|---|---|---|\n")
	var sumMax, sumL1 float64
	var missL1, missMax, slow int
	worstMax, worstL1, minTime := 0.0, 0.0, math.Inf(1)
	for _, r := range rows {
		p("| %s | %s | %s / %s | %s | %s | %s | %s | %s | %s | %s |\n", r.protocol, display(r.c.Epsilon),
			fmtErr(r.c.Max.Mean), fmtErr(r.c.L1.Mean), fmtSec(r.c.Seconds.Mean),
			refText(r.aim), refSecs(r.aim), refText(r.mst),
			bold(ratio(r.maxRatio), r.maxRatio <= suiteMaxBar), bold(ratio(r.l1Rat), r.l1Rat <= suiteL1Bar), timeText(r.timeRatio))
		sumMax += r.maxRatio
		sumL1 += r.l1Rat
		worstMax, worstL1 = max(worstMax, r.maxRatio), max(worstL1, r.l1Rat)
		if r.maxRatio > suiteMaxBar {
			missMax++
		}
		if r.l1Rat > suiteL1Bar {
			missL1++
		}
		if !math.IsNaN(r.timeRatio) {
			minTime = min(minTime, r.timeRatio)
			if r.timeRatio < suiteTimeBar {
				slow++
			}
		}
	}
	n := float64(len(rows))
	p("\nBest: the lower of AIM's and MST's figure at that point (each measure on its own). Bold: within the "+
		"point's bar (max error ≤ %s× the best, mean marginal L1 ≤ %s×). Over the %d points: mean max ratio %s "+
		"(bar %s, worst %s), mean L1 ratio %s (bar %s, worst %s); above the bar on max error at %d of %d points, on "+
		"L1 at %d; AIM's time under %d× synth's at %d (lowest %s).\n",
		display(suiteMaxBar), display(suiteL1Bar), len(rows), ratio(sumMax/n), display(suiteMeanMaxBar), ratio(worstMax),
		ratio(sumL1/n), display(suiteMeanL1Bar), ratio(worstL1), missMax, len(rows), missL1, suiteTimeBar, slow, timeText(minTime))
}

func refByMethod(p *Protocol, m string) *Reference {
	for i := range p.References {
		if p.References[i].Method == pgmMethods[m] {
			return &p.References[i]
		}
	}
	return nil
}

// pointAt is r's point at ε if a run finished there (published figures
// lack the mean marginal L1 and the time; a point of stopped runs only has
// NaN figures).
func pointAt(r *Reference, eps float64) *RefPoint {
	if r == nil {
		return nil
	}
	for i := range r.Points {
		if r.Points[i].Epsilon == eps && r.Points[i].Runs > 0 {
			return &r.Points[i]
		}
	}
	return nil
}

func refText(rp *RefPoint) string {
	if rp == nil {
		return "—"
	}
	return fmtErr(rp.Max) + " / " + fmtErr(rp.L1)
}

func refSecs(rp *RefPoint) string {
	if rp == nil {
		return "—"
	}
	return fmtSec(rp.Seconds)
}

func ratio(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

func timeText(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	return fmt.Sprintf("%.0f×", x)
}
