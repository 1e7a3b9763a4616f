package bench

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// plotFile names a protocol's plot of one measure.
func plotFile(protocol, measure string) string { return protocol + "-" + measure + ".svg" }

// hasPlotData reports whether the section has a successful run to plot.
func hasPlotData(s *section) bool {
	for _, sr := range s.Series {
		for _, c := range sr.Cells {
			if c.OK > 0 {
				return true
			}
		}
	}
	return false
}

// measure is one plot of a protocol.
type measure struct {
	name, title, ylabel string
	val                 func(*cell) stats
	ref                 func(RefPoint) float64 // nil: references have no such figure
}

// measures are the plots of each protocol, in the summary's order.
var measures = []measure{
	{"max-error", "max error", "max absolute error", func(c *cell) stats { return c.Max }, func(p RefPoint) float64 { return p.Max }},
	{"mean-error", "mean error", "mean absolute error", func(c *cell) stats { return c.Mean }, func(p RefPoint) float64 { return p.Mean }},
	{"marginal-l1", "mean marginal L1", "mean per-marginal L1 error", func(c *cell) stats { return c.L1 }, func(p RefPoint) float64 { return p.L1 }},
	{"seconds", "wall time of a release", "seconds", func(c *cell) stats { return c.Seconds }, nil},
}

// plotted returns the measures the section has something to plot for: a
// successful run with a positive value, or a reference figure at one of the
// section's ε.
func plotted(s *section) []measure {
	var out []measure
	for _, m := range measures {
		if m.hasData(s) {
			out = append(out, m)
		}
	}
	return out
}

func (m measure) hasData(s *section) bool {
	for _, sr := range s.Series {
		for _, c := range sr.Cells {
			if c.OK > 0 && m.val(c).Lo > 0 {
				return true
			}
		}
	}
	if m.ref == nil || s.Known == nil {
		return false
	}
	for _, r := range s.Known.References {
		for _, rp := range r.Points {
			if m.ref(rp) > 0 && slices.Contains(s.Epsilons, rp.Epsilon) {
				return true
			}
		}
	}
	return false
}

// WritePlots writes, for each protocol with a successful run, the SVG plots
// of max error, mean error, mean marginal L1 and seconds against ε (log-log;
// one line per solver and setting, the mean over seeds with bars from the
// lowest to the highest seed; the reference methods' reported figures as
// grey markers) into dir and returns the file names. A measure that no run
// and no reference has (the L1 of rows written before its column) gets no
// plot.
func WritePlots(dir string, rs []*Result) ([]string, error) {
	var files []string
	for _, s := range sections(rs) {
		if !hasPlotData(s) {
			continue
		}
		var refs []Reference
		if s.Known != nil {
			refs = s.Known.References
		}
		for _, m := range plotted(s) {
			var rf []Reference
			if m.ref != nil {
				rf = refs
			}
			p, err := errorPlot(s, fmt.Sprintf("%s: %s against ε (log–log)", s.Protocol, m.title), m.ylabel, m.val, rf, m.ref)
			if err != nil {
				return nil, fmt.Errorf("bench: plot %s %s: %w", s.Protocol, m.name, err)
			}
			name := plotFile(s.Protocol, m.name)
			if err := writeFileAtomic(filepath.Join(dir, name), func(w io.Writer) error { return writeSVG(w, p) }); err != nil {
				return nil, err
			}
			files = append(files, name)
		}
	}
	return files, nil
}

var colGrid = color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}

// refColors are greys for the reference markers.
var refColors = []color.Color{
	color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff},
	color.RGBA{R: 0x77, G: 0x77, B: 0x77, A: 0xff},
	color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff},
	color.RGBA{R: 0xaa, G: 0xaa, B: 0xaa, A: 0xff},
}

// errBars is a series' means with their spread, for plotter.YErrorBars.
type errBars struct {
	plotter.XYs
	plotter.YErrors
}

func errorPlot(s *section, title, ylabel string, val func(*cell) stats, refs []Reference, ref func(RefPoint) float64) (*plot.Plot, error) {
	p := plot.New()
	sans := func(size vg.Length) font.Font {
		return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	}
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(13)
	p.X.Label.Text, p.Y.Label.Text = "ε", ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(11)
		a.Tick.Label.Font = sans(10)
		a.Scale = plot.LogScale{}
	}
	p.Legend.TextStyle.Font = sans(10)
	p.Legend.Left = true // errors fall with ε: the lower left is empty
	p.Add(&plotter.Grid{Vertical: draw.LineStyle{Color: colGrid, Width: vg.Points(0.5)},
		Horizontal: draw.LineStyle{Color: colGrid, Width: vg.Points(0.5)}})

	ylo, yhi := math.Inf(1), math.Inf(-1)
	for i, sr := range s.Series {
		var bars errBars
		for _, c := range sr.Cells {
			st := val(c)
			if c.OK == 0 || !(st.Mean > 0) || !(st.Lo > 0) {
				continue // a log axis shows positive values only
			}
			bars.XYs = append(bars.XYs, plotter.XY{X: c.Epsilon, Y: st.Mean})
			bars.YErrors = append(bars.YErrors, struct{ Low, High float64 }{st.Mean - st.Lo, st.Hi - st.Mean})
			ylo, yhi = math.Min(ylo, st.Lo), math.Max(yhi, st.Hi)
		}
		if len(bars.XYs) == 0 {
			continue
		}
		line, pts, err := plotter.NewLinePoints(bars.XYs)
		if err != nil {
			return nil, err
		}
		col := plotutil.Color(i)
		line.Color, line.Width = col, vg.Points(1.5)
		pts.Color, pts.Shape, pts.Radius = col, plotutil.Shape(i), vg.Points(3)
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return nil, err
		}
		eb.Color = col
		p.Add(line, pts, eb)
		p.Legend.Add(sr.Label, line, pts)
	}
	for i, r := range refs {
		var xys plotter.XYs
		for _, rp := range r.Points {
			if v := ref(rp); v > 0 && slices.Contains(s.Epsilons, rp.Epsilon) {
				xys = append(xys, plotter.XY{X: rp.Epsilon, Y: v})
				ylo, yhi = math.Min(ylo, v), math.Max(yhi, v)
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		col := refColors[i%len(refColors)]
		line.Color, line.Width, line.Dashes = col, vg.Points(0.8), []vg.Length{vg.Points(3), vg.Points(3)}
		pts.Color, pts.Shape, pts.Radius = col, plotutil.Shape(i+3), vg.Points(3.5)
		p.Add(line, pts)
		p.Legend.Add(r.Method+" (reference)", line, pts)
	}

	// Axes: a little room around the data, ticks at the grid's ε.
	elo, ehi := s.Epsilons[0], s.Epsilons[len(s.Epsilons)-1]
	p.X.Min, p.X.Max = elo/1.25, ehi*1.25
	var xt []plot.Tick
	for _, e := range s.Epsilons {
		xt = append(xt, plot.Tick{Value: e, Label: display(e)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	if ylo <= yhi {
		p.Y.Min, p.Y.Max = ylo/1.5, yhi*1.5
	}
	p.Y.Tick.Marker = logTicks{}
	return p, nil
}

// logTicks labels 1, 2 and 5 times each power of ten on a log axis (only
// the powers when the range spans more than three decades).
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return nil
	}
	few := math.Log10(max/min) > 3
	var ts []plot.Tick
	for d := math.Floor(math.Log10(min)); d <= math.Ceil(math.Log10(max)); d++ {
		base := math.Pow(10, d)
		for m := 1.0; m < 10; m++ {
			v := base * m
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (!few && (m == 2 || m == 5)) {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// writeSVG renders p as a standalone SVG file, naming metric-compatible
// fallbacks for the Liberation font.
func writeSVG(w io.Writer, p *plot.Plot) error {
	c := vgsvg.New(16*vg.Centimeter, 11*vg.Centimeter)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return err
	}
	b := bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	_, err := w.Write(b)
	return err
}
