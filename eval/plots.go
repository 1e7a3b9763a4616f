package eval

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

var (
	colBlue   = color.RGBA{R: 0x2b, G: 0x6c, B: 0xb0, A: 0xff}
	colOrange = color.RGBA{R: 0xe0, G: 0x7b, B: 0x28, A: 0xff}
	colGrey   = color.RGBA{R: 0x88, G: 0x88, B: 0x88, A: 0xff}
	colGrid   = color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
)

// newPlot returns a plot with sans-serif text and a light grid.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	sans := func(size vg.Length) font.Font {
		return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	}
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(13)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(11)
		a.Tick.Label.Font = sans(10)
	}
	p.Add(&plotter.Grid{Vertical: draw.LineStyle{Color: colGrid, Width: vg.Points(0.5)},
		Horizontal: draw.LineStyle{Color: colGrid, Width: vg.Points(0.5)}})
	return p
}

var (
	xmlHeader = regexp.MustCompile(`(?s)^<\?xml[^>]*\?>\s*(<!--.*?-->\s*)?`)
	xmlns     = regexp.MustCompile(`\s+xmlns(:\w+)?="[^"]*"`)
	fontFam   = regexp.MustCompile(`font-family:Liberation Sans;`)
)

// svgOf renders p as an SVG fragment to inline in HTML: no XML header, no
// namespace URLs (HTML parsers put inline <svg> in the SVG namespace), and
// the Liberation font named with metric-compatible fallbacks.
func svgOf(p *plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	s := xmlHeader.ReplaceAllString(buf.String(), "")
	s = xmlns.ReplaceAllString(s, "")
	s = fontFam.ReplaceAllString(s, `font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`)
	// Scale with the page: drop the fixed size, keep the viewBox.
	s = strings.Replace(s, "<svg ", `<svg class="plot" role="img" preserveAspectRatio="xMidYMid meet" `, 1)
	return strings.TrimSpace(s), nil
}

// logTicks labels decades from 10^lo to 10^hi on a log10 axis.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	step := math.Max(1, math.Ceil((max-min)/8)) // at most about 8 labels
	for d := math.Floor(min); d <= math.Ceil(max); d++ {
		if d >= min-1e-9 && d <= max+1e-9 {
			t := plot.Tick{Value: d}
			if math.Mod(d, step) == 0 {
				t.Label = decade(d)
			}
			ts = append(ts, t)
		}
		for k := 2.0; k < 10; k++ {
			v := d + math.Log10(k)
			if v >= min && v <= max {
				ts = append(ts, plot.Tick{Value: v})
			}
		}
	}
	return ts
}

func decade(d float64) string {
	switch d {
	case 0:
		return "1"
	case -1:
		return "0.1"
	case -2:
		return "0.01"
	}
	return fmt.Sprintf("1e%d", int(d))
}

// intTicks labels the default ticks as plain integers.
type intTicks struct{}

func (intTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// exactBelow is the error under which an answer counts as exact: answers
// are fractions summed in floating point, so an exact answer can differ
// by rounding (about 1e-17).
const exactBelow = 1e-12

// errorHistogram plots the distribution of the queries' absolute errors on
// a log scale: shown are the errors of at least exactBelow; the exact
// answers (the zeros others) are counted in the title.
func errorHistogram(shown []float64, zeros int) (string, error) {
	var logs plotter.Values
	if len(shown) > 0 {
		logs = make(plotter.Values, len(shown))
		for i, e := range shown {
			logs[i] = math.Log10(e)
		}
	}
	title := "Absolute error of each query"
	if zeros > 0 {
		title += fmt.Sprintf(" (%d exact, not shown)", zeros)
	}
	p := newPlot(title, "absolute error (fraction of rows, log scale)", "queries")
	if len(logs) > 0 {
		bins, width := histBins(logs, min(40, max(5, int(math.Sqrt(float64(len(logs)))))))
		h := &plotter.Histogram{Bins: bins, Width: width, LineStyle: plotter.DefaultLineStyle}
		h.FillColor = colBlue
		h.LineStyle.Color = color.White
		h.LineStyle.Width = vg.Points(0.5)
		p.Add(h)
		top := 0.0
		for _, b := range h.Bins {
			top = max(top, b.Weight)
		}
		p.Y.Max = 1.08 * top
		p.X.Tick.Marker = logTicks{}
		p.Y.Tick.Marker = intTicks{}
	}
	return svgOf(p, 16*vg.Centimeter, 10*vg.Centimeter)
}

// histBins sorts finite values (at least one) into n bins of equal width
// from their least to their largest. plotter.NewHist panics when rounding
// puts a value just below the largest into bin n (gonum plot v0.17.0:
// (x − min)/width computed as exactly n); here such a value goes to the
// last bin.
func histBins(vs []float64, n int) ([]plotter.HistogramBin, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi <= lo {
		n = 1
	}
	w := (hi - lo) / float64(n)
	if w == 0 {
		w = 1
	}
	bins := make([]plotter.HistogramBin, n)
	for i := range bins {
		bins[i].Min = lo + float64(i)*w
		bins[i].Max = lo + float64(i+1)*w
	}
	for _, v := range vs {
		bins[min(n-1, max(0, int((v-lo)/w)))].Weight++
	}
	return bins, w
}

// worstMarginals plots the total-variation error of the worst marginals,
// worst at the top.
func worstMarginals(ms []MarginalError) (string, error) {
	n := len(ms)
	p := newPlot(fmt.Sprintf("Worst %d marginals by total-variation distance", n), "TV distance (true vs synthetic table)", "")
	if n == 0 {
		return svgOf(p, 30*vg.Centimeter, 4*vg.Centimeter)
	}
	vals := make(plotter.Values, n)
	names := make([]string, n)
	for i, m := range ms { // ms is sorted worst first; the plot's y grows upwards
		vals[n-1-i] = m.TV
		names[n-1-i] = strings.Join(m.Attributes, " × ")
	}
	bc, err := plotter.NewBarChart(vals, vg.Points(11))
	if err != nil {
		return "", err
	}
	bc.Horizontal = true
	bc.Color = colOrange
	bc.LineStyle.Width = 0
	p.Add(bc)
	p.NominalY(names...)
	p.X.Min = 0
	h := vg.Length(2.5+0.6*float64(n)) * vg.Centimeter
	return svgOf(p, 30*vg.Centimeter, h)
}

// traceLine plots the solver's objective estimate against the iteration.
func traceLine(tr []TraceSample) (string, error) {
	p := newPlot("Solver objective estimate by iteration", "iteration", "objective estimate")
	if len(tr) == 0 {
		return "", nil
	}
	xys := make(plotter.XYs, len(tr))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, t := range tr {
		xys[i] = plotter.XY{X: float64(t.Iteration), Y: t.Objective}
		lo, hi = math.Min(lo, t.Objective), math.Max(hi, t.Objective)
	}
	// An objective that falls over orders of magnitude (a fit's risk
	// estimate) is only readable on a log scale.
	if lo > 0 && hi/lo > 100 {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Label.Text = "objective estimate (log scale)"
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return "", err
	}
	l.Color = colBlue
	l.Width = vg.Points(1.5)
	p.Add(l)
	p.X.Tick.Marker = intTicks{}
	if len(tr) <= 60 {
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return "", err
		}
		s.GlyphStyle.Color = colBlue
		s.GlyphStyle.Radius = vg.Points(2)
		p.Add(s)
	}
	return svgOf(p, 30*vg.Centimeter, 9*vg.Centimeter)
}

// maxScatter bounds the points of the answer scatter plot.
const maxScatter = 5000

// answerScatter plots synthetic against true answers with the diagonal;
// order is qs's indices by decreasing error (byError).
// Beyond maxScatter queries it shows the 1,000 worst and an even sample of
// the rest; the caption says which.
func answerScatter(qs []QueryError, order []int) (svg, caption string, err error) {
	caption = fmt.Sprintf("All %d queries.", len(qs))
	shown := qs
	if len(qs) > maxScatter {
		const worst = 1000
		shown = make([]QueryError, 0, maxScatter)
		for _, i := range order[:worst] {
			shown = append(shown, qs[i])
		}
		rest := order[worst:]
		k := maxScatter - worst
		for i := range k {
			shown = append(shown, qs[rest[i*len(rest)/k]])
		}
		caption = fmt.Sprintf("%d of %d queries: the %d with the largest error and an even sample of the rest.", maxScatter, len(qs), worst)
	}
	p := newPlot("Synthetic vs true answer of each query", "true answer (fraction)", "synthetic answer (fraction)")
	xys := make(plotter.XYs, len(shown))
	hi := 0.0
	for i, q := range shown {
		xys[i] = plotter.XY{X: q.True, Y: q.Synthetic}
		hi = max(hi, q.True, q.Synthetic)
	}
	if hi == 0 {
		hi = 1
	}
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: hi, Y: hi}})
	if err != nil {
		return "", "", err
	}
	diag.Color = colGrey
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(diag)
	if len(xys) > 0 {
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return "", "", err
		}
		s.GlyphStyle.Color = colBlue
		s.GlyphStyle.Radius = vg.Points(1.3)
		p.Add(s)
	}
	p.X.Min, p.Y.Min = 0, 0
	svg, err = svgOf(p, 16*vg.Centimeter, 10*vg.Centimeter)
	return svg, caption, err
}

// maxOneWayBars bounds the codes shown in a one-way plot (the most frequent
// in the data when an attribute has more).
const maxOneWayBars = 30

// oneWayBars plots an attribute's true and synthetic one-way tables as
// paired horizontal bars, codes in domain order from the top.
func oneWayBars(o OneWay) (string, error) {
	idx := make([]int, len(o.True))
	for i := range idx {
		idx[i] = i
	}
	title := fmt.Sprintf("%s (TV %s)", o.Attribute, fmtNum(o.TV))
	if len(idx) > maxOneWayBars {
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(o.True[b], o.True[a]) })
		idx = idx[:maxOneWayBars]
		slices.Sort(idx)
		title = fmt.Sprintf("%s (TV %s; %d most frequent of %d values)", o.Attribute, fmtNum(o.TV), maxOneWayBars, len(o.True))
	}
	n := len(idx)
	p := newPlot(title, "fraction of rows", "")
	tv, sv := make(plotter.Values, n), make(plotter.Values, n)
	names := make([]string, n)
	for i, c := range idx { // the plot's y grows upwards: first code on top
		tv[n-1-i], sv[n-1-i] = o.True[c], o.Synthetic[c]
		names[n-1-i] = truncate(o.Labels[c], 24)
	}
	w := vg.Points(5)
	bt, err := plotter.NewBarChart(tv, w)
	if err != nil {
		return "", err
	}
	bs, err := plotter.NewBarChart(sv, w)
	if err != nil {
		return "", err
	}
	for _, b := range []*plotter.BarChart{bt, bs} {
		b.Horizontal = true
		b.LineStyle.Width = 0
	}
	bt.Color, bs.Color = colBlue, colOrange
	bt.Offset, bs.Offset = w/2, -w/2
	p.Add(bt, bs) // the page's caption gives the colours
	p.NominalY(names...)
	p.X.Min = 0
	h := vg.Length(2.4+0.42*float64(n)) * vg.Centimeter
	return svgOf(p, 11*vg.Centimeter, h)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// byError returns the indices of qs by decreasing absolute error, ties in
// query order.
func byError(qs []QueryError) []int {
	order := make([]int, len(qs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(qs[b].AbsError, qs[a].AbsError) })
	return order
}
