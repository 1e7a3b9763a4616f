package bench

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// series is one line of a plot and one column of the summary: a solver and
// setting (and any other run parameter that varies) on one protocol.
type series struct {
	Solver, Setting, Neighbours string
	Delta, Holdout              float64
	Label                       string
	Cells                       []*cell // by increasing ε
}

// cell aggregates the runs of one series at one ε over the seeds.
type cell struct {
	Epsilon  float64
	Runs, OK int
	Max      stats
	Mean     stats
	RMSE     stats
	L1       stats // mean marginal L1
	PopMax   stats
	PopMean  stats
	Seconds  stats
	CPU      stats
	RSS      stats
	Iter     stats    // private steps
	Trace    stats    // trace iterations
	Failures []string // "seed N: status"
	Models   []string // the models of the successful runs, sorted, once each
}

// stats summarises one measure over the successful seeds.
type stats struct {
	N                int
	Mean, SD, Lo, Hi float64
}

func summarise(xs []float64) stats {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return stats{Mean: math.NaN(), SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	s := stats{N: len(v), Mean: stat.Mean(v, nil), SD: math.NaN(), Lo: floats.Min(v), Hi: floats.Max(v)}
	if len(v) > 1 {
		s.SD = stat.StdDev(v, nil)
	}
	return s
}

// section is one protocol's results.
type section struct {
	Protocol string
	Known    *Protocol // nil for a protocol this build does not define
	Rows     []*Result
	Series   []*series
	Epsilons []float64
}

// sections groups results by protocol (built-in protocols first, in their
// order, then others by name), each into series by solver, setting and
// run parameters, each into cells by ε.
func sections(rs []*Result) []*section {
	byName := map[string]*section{}
	var out []*section
	for _, r := range rs {
		s := byName[r.Protocol]
		if s == nil {
			s = &section{Protocol: r.Protocol}
			s.Known, _ = LookupProtocol(r.Protocol)
			byName[r.Protocol] = s
			out = append(out, s)
		}
		s.Rows = append(s.Rows, r)
	}
	order := func(s *section) int {
		for i, p := range protocols {
			if p.Name == s.Protocol {
				return i
			}
		}
		return len(protocols)
	}
	slices.SortStableFunc(out, func(a, b *section) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), cmp.Compare(a.Protocol, b.Protocol))
	})
	for _, s := range out {
		s.build()
	}
	return out
}

func (s *section) build() {
	type skey struct {
		solver, setting, nb string
		delta, holdout      float64
	}
	type ckey struct {
		skey
		eps float64
	}
	seriesOf := map[skey]*series{}
	rowsOf := map[ckey][]*Result{}
	for _, r := range s.Rows {
		k := skey{r.Solver, r.Setting, r.Neighbours, r.Delta, r.Holdout}
		if seriesOf[k] == nil {
			sr := &series{Solver: r.Solver, Setting: r.Setting, Neighbours: r.Neighbours, Delta: r.Delta, Holdout: r.Holdout}
			seriesOf[k] = sr
			s.Series = append(s.Series, sr)
		}
		ck := ckey{k, r.Epsilon}
		rowsOf[ck] = append(rowsOf[ck], r)
		if !slices.Contains(s.Epsilons, r.Epsilon) {
			s.Epsilons = append(s.Epsilons, r.Epsilon)
		}
	}
	slices.Sort(s.Epsilons)
	slices.SortStableFunc(s.Series, func(a, b *series) int {
		return cmp.Or(cmp.Compare(a.Solver, b.Solver), cmp.Compare(settingOrder(a.Setting), settingOrder(b.Setting)),
			cmp.Compare(a.Setting, b.Setting), cmp.Compare(a.Neighbours, b.Neighbours),
			cmp.Compare(a.Delta, b.Delta), cmp.Compare(a.Holdout, b.Holdout))
	})
	// Label each series by what varies within the section.
	vary := func(f func(*series) string) bool {
		for _, sr := range s.Series {
			if f(sr) != f(s.Series[0]) {
				return true
			}
		}
		return false
	}
	nb := vary(func(sr *series) string { return sr.Neighbours }) || (len(s.Series) > 0 && s.Series[0].Neighbours != "add-remove")
	dl := vary(func(sr *series) string { return formatFloat(sr.Delta) })
	ho := vary(func(sr *series) string { return formatFloat(sr.Holdout) })
	for _, sr := range s.Series {
		sr.Label = fmt.Sprintf("%s (%s", sr.Solver, sr.Setting)
		if nb {
			sr.Label += ", " + sr.Neighbours
		}
		if dl {
			sr.Label += ", δ=" + display(sr.Delta)
		}
		if ho {
			sr.Label += ", holdout " + display(sr.Holdout)
		}
		sr.Label += ")"
		k := skey{sr.Solver, sr.Setting, sr.Neighbours, sr.Delta, sr.Holdout}
		for _, e := range s.Epsilons {
			rows := rowsOf[ckey{k, e}]
			if len(rows) == 0 {
				continue
			}
			sr.Cells = append(sr.Cells, newCell(e, rows))
		}
	}
}

func settingOrder(s string) int {
	if s == "tuned" {
		return 0
	}
	return 1
}

func newCell(eps float64, rows []*Result) *cell {
	c := &cell{Epsilon: eps, Runs: len(rows)}
	var mx, mn, rmse, l1, pmx, pmn, sec, cpu, rss, iter, trace []float64
	for _, r := range rows {
		if !r.OK() {
			c.Failures = append(c.Failures, fmt.Sprintf("seed %d: %s", r.Seed, r.Status))
			continue
		}
		c.OK++
		if r.Model != "" && !slices.Contains(c.Models, r.Model) {
			c.Models = append(c.Models, r.Model)
		}
		mx, mn, rmse = append(mx, r.MaxError), append(mn, r.MeanError), append(rmse, r.RMSE)
		l1 = append(l1, r.MeanMarginalL1)
		pmx, pmn = append(pmx, r.PopMaxError), append(pmn, r.PopMeanError)
		sec, cpu, rss = append(sec, r.Seconds), append(cpu, r.CPUSeconds), append(rss, r.PeakRSSMiB)
		iter, trace = append(iter, intOrNaN(r.Iterations)), append(trace, intOrNaN(r.TraceIterations))
	}
	slices.Sort(c.Models)
	c.Max, c.Mean, c.RMSE, c.L1 = summarise(mx), summarise(mn), summarise(rmse), summarise(l1)
	c.PopMax, c.PopMean = summarise(pmx), summarise(pmn)
	c.Seconds, c.CPU, c.RSS, c.Iter, c.Trace = summarise(sec), summarise(cpu), summarise(rss), summarise(iter), summarise(trace)
	return c
}

func intOrNaN(v int64) float64 {
	if v < 0 {
		return math.NaN()
	}
	return float64(v)
}

// at returns the series' cell at ε, or nil.
func (sr *series) at(eps float64) *cell {
	for _, c := range sr.Cells {
		if c.Epsilon == eps {
			return c
		}
	}
	return nil
}

// refAt returns the reference's point at ε, or nil.
func refAt(r *Reference, eps float64) *RefPoint {
	for i := range r.Points {
		if r.Points[i].Epsilon == eps {
			return &r.Points[i]
		}
	}
	return nil
}
