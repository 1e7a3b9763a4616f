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
	// maxCI and l1CI are the ratios' approximate 90% intervals
	// (ratioInterval; NaN where a side has fewer than two runs).
	maxCI, l1CI [2]float64
	timeRatio   float64 // AIM's seconds over synth's (NaN: unknown)
}

// ciZ is the standard normal quantile of the suite's two-sided 90%
// intervals.
const ciZ = 1.6448536269514722

// ratioInterval is an approximate 90% interval of a ratio of two means,
// a (synth's over its seeds) over b (a reference's over its runs): the
// delta method on the log ratio, each mean's relative standard error its
// standard deviation over √n and its mean. NaN bounds where either side has
// fewer than two runs. It states how far the seeds and the reference's
// runs alone could move the ratio; the bars are read on the ratio itself.
func ratioInterval(a stats, bMean, bSD float64, bRuns int) [2]float64 {
	if a.N < 2 || bRuns < 2 || !(a.Mean > 0) || !(bMean > 0) || math.IsNaN(a.SD) || math.IsNaN(bSD) {
		return [2]float64{math.NaN(), math.NaN()}
	}
	ra, rb := a.SD/a.Mean, bSD/bMean
	se := math.Sqrt(ra*ra/float64(a.N) + rb*rb/float64(bRuns))
	r := a.Mean / bMean
	return [2]float64{r * math.Exp(-ciZ*se), r * math.Exp(ciZ*se)}
}

// newSuiteRow compares cell c of a series on protocol with the measured
// points of AIM and MST at its ε; false when neither was measured there.
func newSuiteRow(protocol string, c *cell, aim, mst *Reference) (suiteRow, bool) {
	row := suiteRow{protocol: protocol, c: c, aim: pointAt(aim, c.Epsilon), mst: pointAt(mst, c.Epsilon), timeRatio: math.NaN()}
	var bestMax, bestL1 *RefPoint
	for _, rp := range []*RefPoint{row.aim, row.mst} {
		if rp == nil {
			continue
		}
		if bestMax == nil || rp.Max < bestMax.Max {
			bestMax = rp
		}
		if bestL1 == nil || rp.L1 < bestL1.L1 {
			bestL1 = rp
		}
	}
	if bestMax == nil {
		return row, false
	}
	row.maxRatio, row.l1Rat = c.Max.Mean/bestMax.Max, c.L1.Mean/bestL1.L1
	row.maxCI = ratioInterval(c.Max, bestMax.Max, bestMax.MaxSD, bestMax.Runs)
	row.l1CI = ratioInterval(c.L1, bestL1.L1, bestL1.L1SD, bestL1.Runs)
	if row.aim != nil && row.aim.Seconds > 0 && c.Seconds.Mean > 0 {
		row.timeRatio = row.aim.Seconds / c.Seconds.Mean
	}
	return row, true
}

// suiteGroup is a set of protocols whose points the summary compares with
// AIM and MST in one table per series.
type suiteGroup struct {
	heading   string // the table's heading, with %s for the series
	protocols []string
}

// suiteGroups are the accuracy suite and its tables on their 2-way
// marginals.
var suiteGroups = []suiteGroup{
	{"The accuracy suite: %s against AIM and MST", SuiteProtocols},
	{"The accuracy suite's tables on their 2-way marginals: %s against AIM and MST", Suite2WayProtocols},
}

// writeSuite writes, for each suite group and each series run on its
// protocols, one table of synth against AIM and MST (measured) point by
// point, the ratios to the best of the two, and the suite's bars.
func writeSuite(p func(string, ...any), secs []*section) {
	for _, g := range suiteGroups {
		bySeries, labels := suiteRows(secs, g.protocols)
		for _, label := range labels {
			writeSuiteTable(p, fmt.Sprintf(g.heading, label), bySeries[label])
		}
	}
}

// suiteRows gathers the rows of every series on protocols, by series label
// in the order the series first appear.
func suiteRows(secs []*section, protocols []string) (map[string][]suiteRow, []string) {
	bySeries := map[string][]suiteRow{}
	var labels []string
	for _, s := range secs {
		if s.Known == nil || !slices.Contains(protocols, s.Protocol) {
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
	return bySeries, labels
}

func writeSuiteTable(p func(string, ...any), heading string, rows []suiteRow) {
	p("\n## %s\n\n", heading)
	p("| protocol | ε | synth max / L1 | synth s | AIM max / L1 | AIM s | MST max / L1 | max / best (90%%) | L1 / best (90%%) | AIM time / synth |\n")
	p("|---|---|---|---|---|---|---|---|---|---|\n")
	var sumMax, sumL1 float64
	var missL1, missMax, clearMax, clearL1, slow int
	worstMax, worstL1, minTime := 0.0, 0.0, math.Inf(1)
	for _, r := range rows {
		p("| %s | %s | %s / %s | %s | %s | %s | %s | %s | %s | %s |\n", r.protocol, display(r.c.Epsilon),
			fmtErr(r.c.Max.Mean), fmtErr(r.c.L1.Mean), fmtSec(r.c.Seconds.Mean),
			refText(r.aim), refSecs(r.aim), refText(r.mst),
			ratioCI(r.maxRatio, r.maxCI, suiteMaxBar), ratioCI(r.l1Rat, r.l1CI, suiteL1Bar), timeText(r.timeRatio))
		sumMax += r.maxRatio
		sumL1 += r.l1Rat
		worstMax, worstL1 = max(worstMax, r.maxRatio), max(worstL1, r.l1Rat)
		if r.maxRatio > suiteMaxBar {
			missMax++
			if r.maxCI[0] > suiteMaxBar {
				clearMax++
			}
		}
		if r.l1Rat > suiteL1Bar {
			missL1++
			if r.l1CI[0] > suiteL1Bar {
				clearL1++
			}
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
		"point's bar (max error ≤ %s× the best, mean marginal L1 ≤ %s×). In brackets: an approximate 90%% interval of "+
		"the ratio from the spread of synth's seeds and of the reference's runs (the delta method on the log ratio; "+
		"none where a side has one run). Over the %d points: mean max ratio %s "+
		"(bar %s, worst %s), mean L1 ratio %s (bar %s, worst %s); above the bar on max error at %d of %d points "+
		"(%d with the whole interval above it), on L1 at %d (%d); AIM's time under %d× synth's at %d (lowest %s).\n",
		display(suiteMaxBar), display(suiteL1Bar), len(rows), ratio(sumMax/n), display(suiteMeanMaxBar), ratio(worstMax),
		ratio(sumL1/n), display(suiteMeanL1Bar), ratio(worstL1), missMax, len(rows), clearMax, missL1, clearL1,
		suiteTimeBar, slow, timeText(minTime))
}

// ratioCI renders a ratio, bold when within its bar, and its interval.
func ratioCI(r float64, ci [2]float64, bar float64) string {
	s := bold(ratio(r), r <= bar)
	if math.IsNaN(ci[0]) {
		return s
	}
	return s + " (" + ratio(ci[0]) + "–" + ratio(ci[1]) + ")"
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
