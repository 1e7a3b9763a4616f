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

	for _, s := range sections(rs) {
		writeSection(p, s)
	}
	return bw.Flush()
}

func writeSection(p func(string, ...any), s *section) {
	p("\n## %s\n\n", s.Protocol)
	var wl string
	if len(s.Rows) > 0 {
		wl = s.Rows[0].Workload
	}
	if s.Known != nil {
		if sh, err := s.Known.Shape(); err == nil {
			p("Dataset `%s`: %d attributes (%s), %s cells, n = %s. Workload: %s (%s queries).",
				s.Known.Dataset, len(sh.Attributes), strings.Join(sh.Attributes, ", "), count(sh.K),
				count(uint64(sh.N)), describeWorkload(s.Known, sh.Marginals), count(uint64(sh.M)))
		}
		if s.Known.Note != "" {
			p(" %s", s.Known.Note)
		}
		p("\n")
	} else {
		r := s.Rows[0]
		p("Dataset `%s`, workload %s (%s cells, %s queries).\n", r.Dataset, wl, count(uint64(max(r.Universe, 0))), count(uint64(max(r.Queries, 0))))
	}
	p("\n%s.\n", gridLine(s))

	// The headline table: ε rows, one column per series and reference.
	var refs []Reference
	if s.Known != nil {
		refs = s.Known.References
	}
	p("\n### Max error / mean error (mean over seeds)\n\n")
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
		bestMax, bestMean := math.Inf(1), math.Inf(1)
		for _, sr := range s.Series {
			if c := sr.at(e); c != nil && c.OK > 0 {
				bestMax, bestMean = math.Min(bestMax, c.Max.Mean), math.Min(bestMean, c.Mean.Mean)
			}
		}
		for i := range refs {
			if rp := refAt(&refs[i], e); rp != nil {
				bestMax, bestMean = math.Min(bestMax, rp.Max), math.Min(bestMean, rp.Mean)
			}
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
				p(" %s / %s |", bold(fmtErr(c.Max.Mean), mark && c.Max.Mean == bestMax), bold(fmtErr(c.Mean.Mean), mark && c.Mean.Mean == bestMean))
			}
		}
		for i := range refs {
			if rp := refAt(&refs[i], e); rp != nil {
				p(" %s / %s |", bold(fmtErr(rp.Max), mark && rp.Max == bestMax), bold(fmtErr(rp.Mean), mark && rp.Mean == bestMean))
			} else {
				p(" — |")
			}
		}
		p("\n")
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
	for _, r := range refs {
		p(" %s |", r.Wall)
	}
	p("\n\n")
	if mark {
		p("Bold: the lowest max error and the lowest mean error at each ε among the columns. ")
	}
	p("Wall time: the range over ε of the mean wall time of a whole release.")
	if len(refs) > 0 {
		p(" *Reference figures, not run by this harness: the methods users know, on the same protocol (all 3-way " +
			"marginals, δ = 1e-9, mean of 3 seeds, absolute error of the released rows or distribution over all " +
			"marginal cells, on a 2-core machine; AIM and MWEM use add/remove neighbours).")
	}
	p("\n")

	// Every group, with spread and cost.
	pop := false
	for _, r := range s.Rows {
		if r.Holdout > 0 {
			pop = true
		}
	}
	p("\n### All groups (mean ± standard deviation over seeds)\n\n")
	p("| solver | ε | runs ok | max error | mean error | RMSE |")
	if pop {
		p(" population max | population mean |")
	}
	p(" seconds | CPU seconds | peak RSS (MiB) | iterations | trace iterations |\n|---|---|---|---|---|---|")
	if pop {
		p("---|---|")
	}
	p("---|---|---|---|---|\n")
	var failures []string
	for _, sr := range s.Series {
		for _, c := range sr.Cells {
			p("| %s | %s | %d/%d |", sr.Label, display(c.Epsilon), c.OK, c.Runs)
			if c.OK == 0 {
				n := 5
				if pop {
					n += 2
				}
				p("%s\n", strings.Repeat(" — |", n+3))
			} else {
				p(" %s | %s | %s |", pm(c.Max, fmtErr, fmtErr), pm(c.Mean, fmtErr, fmtErr), pm(c.RMSE, fmtErr, fmtErr))
				if pop {
					p(" %s | %s |", pm(c.PopMax, fmtErr, fmtErr), pm(c.PopMean, fmtErr, fmtErr))
				}
				p(" %s | %s | %s | %s | %s |\n", pm(c.Seconds, fmtSec, fmtSD), pm(c.CPU, fmtSec, fmtSD), pm(c.RSS, fmtMiB, fmtMiB),
					meanOnly(c.Iter), meanOnly(c.Trace))
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
	if hasPlotData(s) {
		p("\n![max error against ε](%s) ![mean error against ε](%s) ![seconds against ε](%s)\n",
			plotFile(s.Protocol, "max-error"), plotFile(s.Protocol, "mean-error"), plotFile(s.Protocol, "seconds"))
	}
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
