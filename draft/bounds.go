package draft

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dpsynth/synth/privacy"
)

// Public constants of the quantile bounds.
const (
	// coarseQuantile is the smallest quantile the bounds estimate. Both
	// stages target q = max(coarseQuantile, 2K(ln M + tieNats)/(ε0·n̂)), M
	// the most intervals of a stage: every interval outside the data scores
	// −q·n̂, and this q makes their total weight at most e^−tieNats of the
	// best interval's, so that a stage does not wander off into the empty
	// part of its grid. Above maxCoarseQuantile there are too few values to
	// draft bounds.
	coarseQuantile    = 0.02
	tieNats           = 9.0
	maxCoarseQuantile = 0.25
	// targetQuantile is the quantile the widening aims at: the bounds
	// [A − w(B − A), B + w(B − A)] around the released q and 1 − q
	// quantiles A and B hold the 0.5% to 99.5% quantiles of a logistic
	// distribution (widening).
	targetQuantile = 0.005
	// fineIntervals is the most intervals of the fine stage.
	fineIntervals = 400
	// boundEMs is the number of exponential mechanisms of a column's bounds:
	// coarse and fine, for the lower and the upper bound.
	boundEMs = 4
)

// gridMantissas are the mantissas of the public log-scale grid.
var gridMantissas = []string{"1", "1.2", "1.5", "2", "2.5", "3", "4", "5", "6", "8"}

// realGrid is the coarse grid of real values: {0} ∪ {±m·10^e : m in
// gridMantissas, e in −6..15}, sorted. It is public: nothing in it comes
// from the data.
var realGrid = func() []float64 {
	g := []float64{0}
	for e := -6; e <= 15; e++ {
		for _, m := range gridMantissas {
			v, _ := strconv.ParseFloat(m+"e"+strconv.Itoa(e), 64)
			g = append(g, v, -v)
		}
	}
	slices.Sort(g)
	return g
}()

// intGrid is realGrid rounded to integers, without duplicates.
var intGrid = func() []float64 {
	var g []float64
	for _, v := range realGrid {
		g = append(g, math.Round(v))
	}
	return slices.Compact(g)
}()

// First and last years of the date and timestamp grids.
const (
	gridFirstYear = 1900
	gridLastYear  = 2100
)

// dateGrid is the coarse grid of dates: January 1 of every year from 1900
// to 2101, as days since 1970-01-01.
var dateGrid = func() []float64 {
	var g []float64
	for y := gridFirstYear; y <= gridLastYear+1; y++ {
		g = append(g, float64(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).Unix()/86400))
	}
	return g
}()

// timestampGrid is the coarse grid of timestamps: January 1, 00:00 in loc,
// of every year from 1900 to 2101, as Unix seconds.
func timestampGrid(loc *time.Location) []float64 {
	var g []float64
	for y := gridFirstYear; y <= gridLastYear+1; y++ {
		g = append(g, float64(time.Date(y, 1, 1, 0, 0, 0, 0, loc).Unix()))
	}
	return g
}

// nice125 returns the smallest (up) or largest (!up) number of the form
// {1, 2, 2.5, 5}·10^e (without 2.5 when integer) at or above (below) x > 0.
func nice125(x float64, up, integer bool) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	e := math.Floor(math.Log10(x))
	best := math.NaN()
	for de := -1.0; de <= 1; de++ {
		p := math.Pow(10, e+de)
		for _, m := range []float64{1, 2, 2.5, 5} {
			v := m * p
			if integer && (v < 1 || v != math.Trunc(v)) {
				continue
			}
			v = clean(v)
			if up && v >= x && (math.IsNaN(best) || v < best) || !up && v <= x && (math.IsNaN(best) || v > best) {
				best = v
			}
		}
	}
	if math.IsNaN(best) {
		return 1
	}
	return best
}

// clean rounds away the binary noise of decimal arithmetic (0.30000000000000004).
func clean(v float64) float64 {
	c, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return c
}

// fineGrid returns the points of the fine stage on the coarse interval
// [a, b]: nice numbers (integers for kindInt) at most fineIntervals
// intervals apart, every day for dates, and hours (or multiples of an hour,
// at most fineIntervals intervals) for timestamps; a and b included.
func fineGrid(k kind, a, b float64) []float64 {
	var g []float64
	switch k {
	case kindReal, kindInt:
		step := nice125((b-a)/fineIntervals, true, k == kindInt)
		for i := math.Ceil(a / step); i*step < b; i++ {
			g = append(g, clean(i*step))
		}
	case kindDate:
		for d := math.Ceil(a); d < b; d++ {
			g = append(g, d)
		}
	case kindTimestamp:
		step := 3600 * max(1, math.Ceil((b-a)/3600/fineIntervals))
		for s := math.Ceil(a/3600) * 3600; s < b; s += step {
			g = append(g, s)
		}
	}
	g = append(g, a, b)
	slices.Sort(g)
	return slices.Compact(g)
}

// dist returns the distance from t to the interval [lo, hi].
func dist(t, lo, hi float64) float64 { return max(0, lo-t, t-hi) }

// intervalEM selects an interval [grid[i], grid[i+1]] of a grid that holds the q quantile of the values (lower) or the 1 − q quantile
// (!lower), by the exponential mechanism, and returns i.
//
// Privacy: with t = q·n̂ (n̂ a noisy output of the vote, fixed here), the
// score of interval i is −dist(t, [#{x < grid[i]}, #{x < grid[i+1]}])
// (lower) or −dist(t, [#{x > grid[i+1]}, #{x > grid[i]}]) (upper), over
// the kept rows' values that parse as the column's kind; the grid is
// public (a fixed grid, or one built from an earlier stage's output). Adding or removing one unit adds or removes at most K values, so
// each end of the interval of counts moves by at most K and so does the
// score: the exponential mechanism with sensitivity K and parameter ε0 is
// ε0-DP and ε0²/8-zCDP (privacy.BoundedRangeCost). Every interval outside
// the data scores −t, and q is chosen (draftBounds) so that their total
// weight is negligible.
func intervalEM(r *privacy.Rand, sorted, grid []float64, q, nhat, eps0 float64, k int, lower bool) int {
	n := len(sorted)
	at := make([]float64, len(grid))
	for i, g := range grid {
		if lower {
			c, _ := slices.BinarySearch(sorted, g)
			at[i] = float64(c) // #{x < g}
		} else {
			at[i] = float64(n - upperBound(sorted, g)) // #{x > g}
		}
	}
	t := q * nhat
	scores := make([]float64, len(grid)-1)
	for i := range scores {
		a, b := at[i], at[i+1]
		scores[i] = -dist(t, min(a, b), max(a, b))
	}
	return privacy.ExponentialMechanism(r, scores, eps0, float64(k))
}

// upperBound returns #{x <= c} in sorted.
func upperBound(sorted []float64, c float64) int {
	lo, hi := 0, len(sorted)
	for lo < hi {
		m := lo + (hi-lo)/2
		if sorted[m] <= c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// values returns the kept rows' values that parse as the column's kind,
// sorted (a null spelling is a null, as in the vote, even if it parses).
func values(c *column, k kind, rows []int32, st *settings) []float64 {
	loc := st.loc
	var out []float64
	for _, i := range rows {
		if c.isNull(i) {
			continue
		}
		if c.src != srcText {
			if v := c.num[i]; !math.IsNaN(v) && !math.IsInf(v, 0) {
				out = append(out, v)
			}
			continue
		}
		s := c.text[i]
		if slices.Contains(st.nulls, s) {
			continue
		}
		var v float64
		var ok bool
		switch k {
		case kindInt:
			var n int64
			n, ok = parseInt(s)
			v = float64(n)
		case kindReal:
			v, ok = parseReal(s)
		case kindDate:
			v, ok = parseDate(s)
		case kindTimestamp:
			if v, ok = parseTimestamp(s, loc); !ok {
				if v, ok = parseDate(s); ok { // a date: its midnight in loc
					d := time.Unix(int64(v)*86400, 0).UTC()
					v = float64(time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc).Unix())
				}
			}
		}
		if ok {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// coarseGrid returns the public coarse grid of a kind.
func coarseGrid(k kind, loc *time.Location) []float64 {
	switch k {
	case kindInt:
		return intGrid
	case kindReal:
		return realGrid
	case kindDate:
		return dateGrid
	}
	return timestampGrid(loc)
}

// newBoundsEps returns the largest ε0 (within 1e-12) of the boundEMs
// exponential mechanisms of a column's bounds whose cost, boundsCost(ε0),
// is at most ρ.
func newBoundsEps(rho float64) float64 {
	eps := math.Sqrt(8 * rho / boundEMs)
	for boundsCost(eps).Rho > rho {
		eps *= 1 - 1e-12
	}
	return eps
}

// boundsCost is the cost of a column's bounds: boundEMs exponential
// mechanisms of parameter ε0 (sensitivity K each, see intervalEM), each
// ε0-bounded range hence ε0²/8-zCDP, composed.
func boundsCost(eps0 float64) privacy.Cost { return privacy.BoundedRangeCost(eps0).Times(boundEMs) }

// widening returns w(q) = (L(targetQuantile) − L(q))/(2·L(q)), L(p) =
// ln((1 − p)/p): for a logistic distribution (quantiles ±s·L(p); a normal
// centre with exponential tails), the q and 1 − q quantiles A and B
// widened by w·(B − A) on each side are the targetQuantile and
// 1 − targetQuantile quantiles. w(2%) ≈ 0.18, w(5%) ≈ 0.40.
func widening(q float64) float64 {
	if q <= targetQuantile {
		return 0
	}
	l := func(p float64) float64 { return math.Log((1 - p) / p) }
	return (l(targetQuantile) - l(q)) / (2 * l(q))
}

// boundsQuantile returns the quantile q the bounds of a column estimate,
// for n̂ values, exponential mechanisms of parameter eps0 and units of k
// rows, and a coarse grid of m intervals; ok is false when q would exceed
// maxCoarseQuantile (too few values).
func boundsQuantile(nhat, eps0 float64, k, m int) (q float64, ok bool) {
	if !(nhat > 0) {
		return 0, false
	}
	m = max(m, fineIntervals+1)
	q = max(coarseQuantile, 2*float64(k)*(math.Log(float64(m))+tieNats)/(eps0*nhat))
	return q, q <= maxCoarseQuantile
}

// draftBounds drafts the bounds of an integer, numeric, date or timestamp
// column from two DP quantiles, the q and 1 − q quantiles with
// q = max(2%, 2K(ln M + 9)/(ε0·n̂)) (boundsQuantile), each found in two
// stages by intervalEM: a coarse stage on the kind's public grid
// (log-scale numbers; January 1 of every year 1900–2101 for dates and
// timestamps), then a fine stage on the coarse interval cut into at most
// 400 (nice numbers; days for dates; hours or multiples of an hour for
// timestamps), a grid built from the coarse output only. Post-processing
// then widens [A, B] (the outer ends of the fine intervals) by w(q)·(B − A)
// on each side (widening: the 0.5% and 99.5% quantiles of a logistic
// distribution), moves a negative lower bound to 0 when A >= 0 and the vote
// found no negative values, and rounds outward to nice values: a nice step
// of about (upper − lower)/Bins for numbers, a nice integer width for
// integers, the start or end of the bin unit for dates and timestamps (the
// unit chosen from the span).
//
// Privacy: four exponential mechanisms (intervalEM, sensitivity K each)
// with the column's ε0, hence 4·ε0²/8-zCDP, at most the column's values
// share of ρ (newPlan). Everything else reads only their outputs, n̂ and
// the negatives flag (noisy outputs of the vote) and public constants.
func draftBounds(c *column, cp *colPlan, v *vote, rows []int32, st *settings, r *privacy.Rand, a *attribute) ([]string, error) {
	k := v.kind
	grid := coarseGrid(k, st.loc)
	eps0 := cp.emEps
	q, ok := boundsQuantile(v.nhat, eps0, st.k, len(grid)-1)
	if !ok {
		placeholder(k, st, a)
		return []string{fmt.Sprintf("column %q: too few values for DP bounds (noisy count %s): the bounds are placeholders to fill in from public knowledge",
			c.name, fmtCount(max(v.nhat, 0)))}, nil
	}
	sorted := values(c, k, rows, st)
	find := func(lower bool) float64 {
		i := intervalEM(r, sorted, grid, q, v.nhat, eps0, st.k, lower)
		fine := fineGrid(k, grid[i], grid[i+1])
		j := intervalEM(r, sorted, fine, q, v.nhat, eps0, st.k, lower)
		if lower {
			return fine[j]
		}
		return fine[j+1]
	}
	lo := find(true)
	hi := find(false)
	if lo > hi {
		lo, hi = hi, lo
	}
	w := widening(q)
	notes := []string{fmt.Sprintf("column %q: bounds from the DP %.3g%% and %.3g%% quantiles (exponential mechanisms over a public grid, then over the interval found; ε0 = %.3g each, sensitivity %d), widened by %.3g times their distance on each side (the %g%% and %g%% quantiles of a logistic distribution) and rounded outward",
		c.name, 100*q, 100*(1-q), eps0, st.k, w, 100*targetQuantile, 100*(1-targetQuantile))}
	lower, upper := lo-w*(hi-lo), hi+w*(hi-lo)
	switch k {
	case kindReal, kindInt:
		if lower < 0 && lo >= 0 && !v.negatives {
			lower = 0
			notes = append(notes, fmt.Sprintf("column %q: no negative values found (noisily): lower bound 0", c.name))
		}
		if k == kindInt {
			lower, upper = math.Floor(lower), math.Ceil(upper)
			w := nice125((upper-lower+1)/float64(st.Bins), true, true)
			mn := math.Floor(lower/w) * w
			mx := math.Ceil((upper+1)/w)*w - 1
			a.Type = "integer"
			a.Min, a.Max, a.Width = ptr(int64(mn)), ptr(int64(mx)), ptr(int64(w))
		} else {
			span := upper - lower
			if span <= 0 {
				span = max(math.Abs(lower), 1)
			}
			step := nice125(span/float64(st.Bins), true, false)
			l := clean(math.Floor(lower/step) * step)
			u := clean(math.Ceil(upper/step) * step)
			if u <= l {
				u = clean(l + step)
			}
			a.Type = "numeric"
			a.Lower, a.Upper, a.Bins = l, u, st.Bins
		}
	case kindDate:
		lower, upper = math.Floor(lower), math.Floor(upper)
		unit := dateUnit(upper - lower)
		l := floorUnit(time.Unix(int64(lower)*86400, 0).UTC(), unit)
		u := ceilUnit(time.Unix(int64(upper)*86400, 0).UTC().AddDate(0, 0, 1), unit).AddDate(0, 0, -1)
		a.Type = "date"
		a.Lower, a.Upper, a.Bin = l.Format(time.DateOnly), u.Format(time.DateOnly), unit
		notes = append(notes, fmt.Sprintf("column %q: the search covers %d–%d", c.name, gridFirstYear, gridLastYear))
	case kindTimestamp:
		unit := timestampUnit((upper - lower) / 86400)
		l := floorUnit(time.Unix(int64(math.Floor(lower)), 0).In(st.loc), unit)
		// The engine's timestamp bounds are [lower, upper): upper is the
		// start of the unit after the one that holds the widened bound.
		u := addUnit(floorUnit(time.Unix(int64(math.Floor(upper)), 0).In(st.loc), unit), unit)
		a.Type = "timestamp"
		a.Lower, a.Upper, a.Bin, a.TimeZone = l.Format(time.RFC3339), u.Format(time.RFC3339), unit, st.TimeZone
		notes = append(notes, fmt.Sprintf("column %q: the search covers %d–%d in %s", c.name, gridFirstYear, gridLastYear, st.TimeZone))
	}
	return notes, nil
}

// placeholder fills an attribute of kind k with bounds to be replaced.
func placeholder(k kind, st *settings, a *attribute) {
	switch k {
	case kindInt:
		a.Type = "integer"
		a.Min, a.Max, a.Width = ptr(int64(0)), ptr(int64(0)), ptr(int64(1))
	case kindReal:
		a.Type = "numeric"
		a.Lower, a.Upper, a.Bins = 0.0, 1.0, st.Bins
	case kindDate:
		a.Type = "date"
		a.Lower, a.Upper, a.Bin = "1900-01-01", "2100-12-31", "year"
	case kindTimestamp:
		a.Type = "timestamp"
		a.Lower = time.Date(1970, 1, 1, 0, 0, 0, 0, st.loc).Format(time.RFC3339)
		a.Upper = time.Date(2101, 1, 1, 0, 0, 0, 0, st.loc).Format(time.RFC3339)
		a.Bin, a.TimeZone = "year", st.TimeZone
	}
}

func ptr[T any](v T) *T { return &v }

// dateUnit chooses a date bin from a span in days: more than 20 years
// "year", more than 3 years "quarter", more than 6 months "month", more
// than 2 months "week", else "day".
func dateUnit(days float64) string {
	switch {
	case days > 20*365.25:
		return "year"
	case days > 3*365.25:
		return "quarter"
	case days > 183:
		return "month"
	case days > 61:
		return "week"
	}
	return "day"
}

// timestampUnit is dateUnit down to "hour" (spans of at most 3 days) and
// "minute" (at most 3 hours).
func timestampUnit(days float64) string {
	switch {
	case days > 3:
		return dateUnit(days)
	case days > 3.0/24:
		return "hour"
	}
	return "minute"
}

// floorUnit returns the start of t's unit (weeks start on Monday, quarters
// in January, April, July and October), in t's location.
func floorUnit(t time.Time, unit string) time.Time {
	y, m, d := t.Date()
	loc := t.Location()
	switch unit {
	case "year":
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	case "quarter":
		return time.Date(y, m-(m-1)%3, 1, 0, 0, 0, 0, loc)
	case "month":
		return time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case "week":
		wd := (int(t.Weekday()) + 6) % 7 // Monday = 0
		return time.Date(y, m, d-wd, 0, 0, 0, 0, loc)
	case "day":
		return time.Date(y, m, d, 0, 0, 0, 0, loc)
	case "hour":
		return time.Date(y, m, d, t.Hour(), 0, 0, 0, loc)
	}
	return time.Date(y, m, d, t.Hour(), t.Minute(), 0, 0, loc)
}

// addUnit returns t plus one unit.
func addUnit(t time.Time, unit string) time.Time {
	switch unit {
	case "year":
		return t.AddDate(1, 0, 0)
	case "quarter":
		return t.AddDate(0, 3, 0)
	case "month":
		return t.AddDate(0, 1, 0)
	case "week":
		return t.AddDate(0, 0, 7)
	case "day":
		return t.AddDate(0, 0, 1)
	case "hour":
		return t.Add(time.Hour)
	}
	return t.Add(time.Minute)
}

// ceilUnit returns the first unit boundary at or after t.
func ceilUnit(t time.Time, unit string) time.Time {
	f := floorUnit(t, unit)
	if f.Equal(t) {
		return f
	}
	return addUnit(f, unit)
}
