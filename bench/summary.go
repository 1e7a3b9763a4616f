package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpsynth/synth/universe"
)

// Meta describes how a summary was made.
type Meta struct {
	Generated time.Time
	Command   string // the command line, if known
	Machine   string // e.g. "linux/amd64, 2 CPUs, ..."
	Version   string // the synth binary's version line
}

// WriteSummary writes summary.md: per protocol, a table of max / mean error
// (means over seeds) per solver and setting at each ε next to the reference
// methods' figures, a table of every (solver, setting, ε) group with spread
// over seeds, time and memory, any failures, and the plots.
func WriteSummary(w io.Writer, rs []*Result, meta *Meta) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("# synth benchmark results\n\n")
	if meta != nil {
		var parts []string
		if !meta.Generated.IsZero() {
			parts = append(parts, "Generated "+meta.Generated.UTC().Format("2006-01-02 15:04 MST"))
		}
		if meta.Version != "" {
			parts = append(parts, "by "+meta.Version)
		}
		if meta.Machine != "" {
			parts = append(parts, "on "+meta.Machine)
		}
		if len(parts) > 0 {
			p("%s.\n", strings.Join(parts, " "))
		}
		if meta.Command != "" {
			p("Command: `%s`.\n", meta.Command)
		}
		p("\n")
	}
	p("How to read this: each run is one whole release (ingest → solve → sample → Parquet, reports and manifest) " +
		"in its own process, one run at a time. Errors are the absolute errors of the released synthetic rows over " +
		"the workload's queries, as fractions of the records (max over the queries and mean over the queries), " +
		"averaged over the seeds. They are computed on the data: internal, not differentially private. Every run is " +
		"seeded so that it can be reproduced, and a seeded release is not private against anyone who knows the seed; " +
		"both are fine for benchmarking on public data. Seconds is the wall time of the release process, peak RSS " +
		"its largest resident memory. See bench/README.md for every column of results.csv.\n")

	secs := sections(rs)
	for _, s := range secs {
		writeSection(p, s)
	}
	writeSuite(p, secs)
	return bw.Flush()
}

func writeSection(p func(string, ...any), s *section) {
	p("\n## %s\n\n", s.Protocol)
	writeIntro(p, s)
	var refs []Reference
	if s.Known != nil {
		refs = s.Known.References
	}
	withL1 := hasL1(s, refs)
	writeHeadline(p, s, refs, withL1)
	writeLegend(p, s, refs, withL1)
	if s.Known != nil && s.Known.Versus != "" {
		writeVersus(p, s)
	}
	writeGroups(p, s)
	if hasPlotData(s) {
		var imgs []string
		for _, m := range plotted(s) {
			imgs = append(imgs, fmt.Sprintf("![%s against ε](%s)", m.title, plotFile(s.Protocol, m.name)))
		}
		p("\n%s\n", strings.Join(imgs, " "))
	}
}

// writeIntro writes the section's dataset and workload line and its grid.
func writeIntro(p func(string, ...any), s *section) {
	if s.Known != nil {
		if sh, err := s.Known.Shape(); err == nil {
			p("Dataset `%s`: %d attributes (%s), %s cells, n = %s. Workload: %s (%s queries).",
				s.Known.Dataset, len(sh.Attributes), strings.Join(sh.Attributes, ", "), cellsText(sh.Cells),
				count(uint64(sh.N)), describeWorkload(s.Known, sh.Marginals), count(uint64(sh.M)))
		}
		if s.Known.Note != "" {
			p(" %s", s.Known.Note)
		}
		p("\n")
	} else {
		r := s.Rows[0]
		cells := "unknown"
		if r.Universe >= 0 {
			cells = cellsText(big.NewInt(r.Universe))
		}
		p("Dataset `%s`, workload %s (%s cells, %s queries).\n", r.Dataset, r.Workload, cells, count(uint64(max(r.Queries, 0))))
	}
	p("\n%s.\n", gridLine(s))
}

// writeHeadline writes the headline table: a row per ε, a column per
// series and reference (the best of several columns in bold), and the
// wall time's range over ε.
func writeHeadline(p func(string, ...any), s *section, refs []Reference, withL1 bool) {
	if withL1 {
		p("\n### Max error / mean error / mean marginal L1 (mean over seeds)\n\n")
	} else {
		p("\n### Max error / mean error (mean over seeds)\n\n")
	}
	p("| ε |")
	for _, sr := range s.Series {
		p(" %s |", sr.Label)
	}
	for _, r := range refs {
		p(" %s* |", r.Method)
	}
	p("\n|---|%s\n", strings.Repeat("---|", len(s.Series)+len(refs)))
	mark := len(s.Series)+len(refs) > 1 // bold the best of several columns
	for _, e := range s.Epsilons {
		writeHeadlineRow(p, s, refs, e, withL1, mark)
	}
	p("| wall time |")
	for _, sr := range s.Series {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range sr.Cells {
			if c.OK > 0 {
				lo, hi = math.Min(lo, c.Seconds.Mean), math.Max(hi, c.Seconds.Mean)
			}
		}
		switch {
		case math.IsInf(lo, 1):
			p(" — |")
		case fmtSec(lo) == fmtSec(hi):
			p(" %s s |", fmtSec(lo))
		default:
			p(" %s–%s s |", fmtSec(lo), fmtSec(hi))
		}
	}
	for i := range refs {
		p(" %s |", refWall(&refs[i], s.Epsilons))
	}
	p("\n\n")
}

// refWall is reference r's wall time for the headline table: the range of
// its measured points' mean wall times over the grid's ε (a reference
// measured at more ε than the grid holds keeps the others out), or its
// reported Wall when it has no measured point on the grid.
func refWall(r *Reference, eps []float64) string {
	if w := wallRange(r.Points, func(e float64) bool { return slices.Contains(eps, e) }); w != "" {
		return w
	}
	return r.Wall
}

// writeHeadlineRow writes the headline table's row at ε = e, the lowest
// figure of each measure in bold when mark is set.
func writeHeadlineRow(p func(string, ...any), s *section, refs []Reference, e float64, withL1, mark bool) {
	bestMax, bestMean, bestL1 := math.Inf(1), math.Inf(1), math.Inf(1)
	for _, sr := range s.Series {
		if c := sr.at(e); c != nil && c.OK > 0 {
			bestMax, bestMean = math.Min(bestMax, c.Max.Mean), math.Min(bestMean, c.Mean.Mean)
			if c.L1.N > 0 {
				bestL1 = math.Min(bestL1, c.L1.Mean)
			}
		}
	}
	for i := range refs {
		if rp := refAt(&refs[i], e); rp != nil {
			bestMax = math.Min(bestMax, rp.Max)
			if rp.Mean > 0 {
				bestMean = math.Min(bestMean, rp.Mean)
			}
			if rp.L1 > 0 {
				bestL1 = math.Min(bestL1, rp.L1)
			}
		}
	}
	// figure renders one column's figures at ε (NaN: unknown).
	figure := func(mx, mean, l1 float64) string {
		f := bold(fmtErr(mx), mark && mx == bestMax) + " / " + bold(fmtErr(mean), mark && mean == bestMean)
		if withL1 {
			f += " / " + bold(fmtErr(l1), mark && l1 == bestL1)
		}
		return f
	}
	p("| %s |", display(e))
	for _, sr := range s.Series {
		c := sr.at(e)
		switch {
		case c == nil:
			p(" — |")
		case c.OK == 0:
			p(" failed |")
		default:
			p(" %s |", figure(c.Max.Mean, c.Mean.Mean, c.L1.Mean))
		}
	}
	for i := range refs {
		if rp := refAt(&refs[i], e); rp != nil {
			p(" %s |", figure(rp.Max, unreported(rp.Mean), unreported(rp.L1)))
		} else {
			p(" — |")
		}
	}
	p("\n")
}

// writeLegend writes what the headline table's bold, L1 and wall time
// mean, and the references' note.
func writeLegend(p func(string, ...any), s *section, refs []Reference, withL1 bool) {
	if len(s.Series)+len(refs) > 1 {
		if withL1 {
			p("Bold: the lowest max error, mean error and mean marginal L1 at each ε among the columns. ")
		} else {
			p("Bold: the lowest max error and the lowest mean error at each ε among the columns. ")
		}
	}
	if withL1 {
		p("Mean marginal L1: for each workload marginal, Σ over its cells of |true − synthetic| as fractions of " +
			"the records, averaged over the marginals. ")
	}
	p("Wall time: the range over ε of the mean wall time of a whole release.")
	if len(refs) > 0 && s.Known.ReferenceNote != "" {
		p(" *%s", s.Known.ReferenceNote)
	}
	p("\n")
}

// writeGroups writes every group's figures with their spread and cost,
// then the failed runs.
func writeGroups(p func(string, ...any), s *section) {
	pop := false
	for _, r := range s.Rows {
		if r.Holdout > 0 {
			pop = true
		}
	}
	p("\n### All groups (mean ± standard deviation over seeds)\n\n")
	p("| solver | ε | runs ok | max error | mean error | RMSE | mean marginal L1 |")
	if pop {
		p(" population max | population mean |")
	}
	p(" seconds | CPU seconds | peak RSS (MiB) | iterations | trace iterations | model |\n|---|---|---|---|---|---|---|")
	if pop {
		p("---|---|")
	}
	p("---|---|---|---|---|---|\n")
	var failures []string
	for _, sr := range s.Series {
		for _, c := range sr.Cells {
			p("| %s | %s | %d/%d |", sr.Label, display(c.Epsilon), c.OK, c.Runs)
			if c.OK == 0 {
				n := 10
				if pop {
					n += 2
				}
				p("%s\n", strings.Repeat(" — |", n))
			} else {
				p(" %s | %s | %s | %s |", pm(c.Max, fmtErr, fmtErr), pm(c.Mean, fmtErr, fmtErr), pm(c.RMSE, fmtErr, fmtErr),
					pm(c.L1, fmtErr, fmtErr))
				if pop {
					p(" %s | %s |", pm(c.PopMax, fmtErr, fmtErr), pm(c.PopMean, fmtErr, fmtErr))
				}
				p(" %s | %s | %s | %s | %s | %s |\n", pm(c.Seconds, fmtSec, fmtSD), pm(c.CPU, fmtSec, fmtSD), pm(c.RSS, fmtMiB, fmtMiB),
					meanOnly(c.Iter), meanOnly(c.Trace), models(c))
			}
			for _, f := range c.Failures {
				failures = append(failures, fmt.Sprintf("%s at ε = %s, %s", sr.Label, display(c.Epsilon), f))
			}
		}
	}
	if len(failures) > 0 {
		p("\nFailed runs (not counted in the means):\n\n")
		for _, f := range failures {
			p("- %s\n", strings.ReplaceAll(f, "|", "\\|"))
		}
	}
}

// hasL1 reports whether the section has a mean marginal L1 to show: from a
// successful run (rows written before the column have none) or a
// reference.
func hasL1(s *section, refs []Reference) bool {
	for _, sr := range s.Series {
		for _, c := range sr.Cells {
			if c.L1.N > 0 {
				return true
			}
		}
	}
	for _, r := range refs {
		for _, rp := range r.Points {
			if rp.L1 > 0 {
				return true
			}
		}
	}
	return false
}

// unreported maps a reference's 0 (not reported) to NaN (shown as —).
func unreported(v float64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return v
}

// models lists the models of the cell's successful runs (— if unknown).
func models(c *cell) string {
	if len(c.Models) == 0 {
		return "—"
	}
	return strings.Join(c.Models, ", ")
}

// writeVersus compares each series with the protocol's Versus reference at
// each of its ε: at or below it on max error and on mean marginal L1 (the
// means over seeds against its figures), the reference's wall time over
// synth's whole-release wall time, and synth's peak memory.
func writeVersus(p func(string, ...any), s *section) {
	var ref *Reference
	for i := range s.Known.References {
		if s.Known.References[i].Method == s.Known.Versus {
			ref = &s.Known.References[i]
		}
	}
	if ref == nil {
		return
	}
	name := ref.Method
	p("\n### synth against %s\n\n", name)
	p("| solver | ε | max error: synth / %s | mean marginal L1: synth / %s | at or below %s on both | "+
		"time: %s / synth | synth wall time | synth peak RSS (MiB, max over seeds) |\n|---|---|---|---|---|---|---|---|\n",
		name, name, name, name)
	var verdicts []string
	for _, sr := range s.Series {
		both, points := 0, 0
		for _, rp := range ref.Points {
			c := sr.at(rp.Epsilon)
			if c == nil {
				continue
			}
			points++
			if c.OK == 0 {
				p("| %s | %s | failed | failed | no (no successful run) | — | — | — |\n", sr.Label, display(rp.Epsilon))
				continue
			}
			verdict := atOrBelow(c, &rp)
			if verdict == "yes" {
				both++
			}
			ratio := "—"
			if rp.Seconds > 0 && c.Seconds.Mean > 0 {
				ratio = strconv.FormatFloat(rp.Seconds/c.Seconds.Mean, 'f', 1, 64) + "×"
			}
			p("| %s | %s | %s / %s | %s / %s | %s | %s | %s s | %s |\n", sr.Label, display(rp.Epsilon),
				fmtErr(c.Max.Mean), fmtErr(rp.Max), fmtErr(c.L1.Mean), fmtErr(unreported(rp.L1)), verdict, ratio,
				fmtSec(c.Seconds.Mean), fmtMiB(c.RSS.Hi))
		}
		if points > 0 {
			verdicts = append(verdicts, fmt.Sprintf("%s is at or below %s on both max error and mean marginal L1 at %d of %d ε",
				sr.Label, name, both, points))
		}
	}
	if len(verdicts) > 0 {
		p("\n%s. Compared are the means over the seeds with the reference's figures; time is the reference's wall "+
			"time over the mean wall time of synth's whole release (ingest to Parquet, reports and manifest), so "+
			"above 1× means synth is faster.\n", strings.Join(verdicts, "; "))
	}
}

// atOrBelow says whether c is at or below the reference point on both max
// error and mean marginal L1: "yes", or "no" with the measures it is above
// on, or "—" when a figure is missing.
func atOrBelow(c *cell, rp *RefPoint) string {
	if c.L1.N == 0 || !(rp.L1 > 0) {
		return "— (no L1 to compare)"
	}
	var above []string
	if c.Max.Mean > rp.Max {
		above = append(above, "max")
	}
	if c.L1.Mean > rp.L1 {
		above = append(above, "L1")
	}
	if len(above) == 0 {
		return "yes"
	}
	return "no (above on " + strings.Join(above, " and ") + ")"
}

// cellsText renders a universe size: exactly, and for large ones also in
// e-notation ("641,263,392,000,000,000 (6.4e17)").
func cellsText(x *big.Int) string {
	s := universe.FormatCount(x)
	if x.Cmp(big.NewInt(1e10)) >= 0 {
		f, _ := new(big.Float).SetInt(x).Float64()
		s += " (" + strings.Replace(strconv.FormatFloat(f, 'e', 1, 64), "e+", "e", 1) + ")"
	}
	return s
}

// gridLine states the grid the section's rows cover.
func gridLine(s *section) string {
	var deltas, nbs, settings []string
	var seeds []uint64
	for _, r := range s.Rows {
		if d := display(r.Delta); !slices.Contains(deltas, d) {
			deltas = append(deltas, d)
		}
		if !slices.Contains(nbs, r.Neighbours) {
			nbs = append(nbs, r.Neighbours)
		}
		if !slices.Contains(settings, r.Setting) {
			settings = append(settings, r.Setting)
		}
		if !slices.Contains(seeds, r.Seed) {
			seeds = append(seeds, r.Seed)
		}
	}
	slices.Sort(seeds)
	eps := make([]string, len(s.Epsilons))
	for i, e := range s.Epsilons {
		eps[i] = display(e)
	}
	seedWord := "seeds"
	if len(seeds) == 1 {
		seedWord = "seed"
	}
	return fmt.Sprintf("Grid: ε ∈ {%s}, δ = %s, %s %s, settings %s, neighbours %s, %d runs",
		strings.Join(eps, ", "), strings.Join(deltas, " / "), seedWord, seedList(seeds), strings.Join(settings, ", "),
		strings.Join(nbs, ", "), len(s.Rows))
}

// seedList renders sorted seeds, contiguous ones as a range ("1–5").
func seedList(seeds []uint64) string {
	if len(seeds) > 1 && seeds[len(seeds)-1]-seeds[0] == uint64(len(seeds)-1) {
		return fmt.Sprintf("%d–%d", seeds[0], seeds[len(seeds)-1])
	}
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatUint(s, 10)
	}
	return strings.Join(parts, ", ")
}

func describeWorkload(p *Protocol, marginals int) string {
	if p.Sample > 0 {
		return fmt.Sprintf("%d random %d-way marginals drawn with workload seed %d", marginals, p.Marginals, p.WorkloadSeed)
	}
	return fmt.Sprintf("all %d %d-way marginals", marginals, p.Marginals)
}

func count(v uint64) string { return universe.FormatCount(new(big.Int).SetUint64(v)) }

func bold(s string, b bool) string {
	if b {
		return "**" + s + "**"
	}
	return s
}

// fmtErr renders an error as the reference tables do: three significant
// digits from 0.001 up (0.0256), two in e-notation below (5.1e-4).
func fmtErr(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v == 0:
		return "0"
	case math.Abs(v) >= 1e-3:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatFloat(v, 'e', 1, 64) // 5.1e-04
	mant, exp, _ := strings.Cut(s, "e")
	n, _ := strconv.Atoi(exp)
	return mant + "e" + strconv.Itoa(n)
}

// fmtSec renders seconds with three significant digits.
func fmtSec(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	if v >= 100 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func fmtMiB(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// fmtSD renders a standard deviation of seconds with two significant
// digits.
func fmtSD(v float64) string { return strconv.FormatFloat(v, 'g', 2, 64) }

// pm renders mean ± sd (the mean alone for one value).
func pm(s stats, mean, sd func(float64) string) string {
	if s.N == 0 {
		return "—"
	}
	if s.N == 1 || math.IsNaN(s.SD) {
		return mean(s.Mean)
	}
	return mean(s.Mean) + " ± " + sd(s.SD)
}

func meanOnly(s stats) string {
	if s.N == 0 {
		return "—"
	}
	return strconv.FormatFloat(math.Round(s.Mean), 'f', 0, 64)
}
