package draft

import (
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dpsynth/synth/privacy"
)

func TestGrids(t *testing.T) {
	if len(realGrid) != 441 || !slices.IsSorted(realGrid) || len(slices.Compact(slices.Clone(realGrid))) != 441 {
		t.Fatalf("realGrid: %d values", len(realGrid))
	}
	for _, v := range []float64{0, 1.2e-6, -1.2e-6, 2.5, 8e15, -8e15, 1e-6, 6e3} {
		if _, ok := slices.BinarySearch(realGrid, v); !ok {
			t.Errorf("realGrid lacks %g", v)
		}
	}
	for i, v := range intGrid {
		if v != math.Trunc(v) || i > 0 && intGrid[i-1] >= v {
			t.Fatalf("intGrid[%d] = %g", i, v)
		}
	}
	if len(dateGrid) != 202 || dateGrid[0] != float64(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix()/86400) {
		t.Errorf("dateGrid: %d values from %g", len(dateGrid), dateGrid[0])
	}
}

func TestNice(t *testing.T) {
	for _, c := range []struct {
		x           float64
		up, integer bool
		want        float64
	}{
		{6.2, true, true, 10}, {6.2, true, false, 10}, {2.1, true, false, 2.5}, {2.1, true, true, 5},
		{0.031, true, false, 0.05}, {0.031, false, false, 0.025}, {0.4, false, true, 1}, {1234, false, false, 1000},
		{0.3, true, false, 0.5}, {20, true, true, 20},
	} {
		if got := nice125(c.x, c.up, c.integer); got != c.want {
			t.Errorf("nice125(%g, %v, %v) = %g, want %g", c.x, c.up, c.integer, got, c.want)
		}
	}
	if w := widening(0.02); math.Abs(w-0.18) > 0.001 {
		t.Errorf("widening(2%%) = %g", w)
	}
	if w := widening(targetQuantile); w != 0 {
		t.Errorf("widening(target) = %g", w)
	}
}

func TestUnits(t *testing.T) {
	for _, c := range []struct {
		days float64
		date string
		ts   string
	}{{30 * 365, "year", "year"}, {5 * 365, "quarter", "quarter"}, {300, "month", "month"}, {90, "week", "week"},
		{30, "day", "day"}, {2, "day", "hour"}, {0.1, "day", "minute"}} {
		if got := dateUnit(c.days); got != c.date {
			t.Errorf("dateUnit(%g) = %s", c.days, got)
		}
		if got := timestampUnit(c.days); got != c.ts {
			t.Errorf("timestampUnit(%g) = %s", c.days, got)
		}
	}
	at := time.Date(2024, 5, 16, 13, 45, 10, 0, time.UTC) // a Thursday
	for unit, want := range map[string]string{"year": "2024-01-01", "quarter": "2024-04-01", "month": "2024-05-01", "week": "2024-05-13", "day": "2024-05-16"} {
		if got := floorUnit(at, unit).Format(time.DateOnly); got != want {
			t.Errorf("floorUnit %s = %s, want %s", unit, got, want)
		}
	}
	if got := ceilUnit(at, "hour").Format(time.RFC3339); got != "2024-05-16T14:00:00Z" {
		t.Errorf("ceilUnit hour = %s", got)
	}
	if got := ceilUnit(time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), "quarter"); !got.Equal(time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("ceilUnit on a boundary = %s", got)
	}
}

// genDist returns n values of a named synthetic distribution, as text.
func genDist(name string, n int, g *privacy.Rand) []string {
	out := make([]string, n)
	for i := range out {
		switch name {
		case "normal":
			out[i] = strconv.FormatFloat(1000+100*g.NormFloat64(), 'f', 3, 64)
		case "lognormal":
			out[i] = strconv.FormatFloat(math.Exp(10+g.NormFloat64()), 'f', 2, 64)
		case "exponential":
			out[i] = strconv.FormatFloat(-50*math.Log(1-g.Float64()), 'f', 3, 64)
		case "signed":
			out[i] = strconv.FormatFloat(20*g.NormFloat64(), 'f', 2, 64)
		case "age":
			out[i] = strconv.Itoa(int(g.Uint64N(100)))
		case "year":
			out[i] = strconv.Itoa(1950 + int(g.Uint64N(71)))
		case "date":
			out[i] = time.Date(1930, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(g.Uint64N(80*365))).Format(time.DateOnly)
		case "timestamp":
			out[i] = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(g.Uint64N(30*24*3600)) * time.Second).Format(time.RFC3339)
		}
	}
	return out
}

// TestBoundsCover drafts one column of n = 10,000 values at ε = 1,
// δ = 1e-9 for eight distributions and checks that at least 98% of the
// values lie inside the drafted bounds, and that the bounds are not
// absurdly wide (their width at most 4 times the data's 0.1%–99.9% range,
// or the type's bin rounding).
//
// False failures: the seeds are fixed (3 per distribution), so the test is
// deterministic. With secure randomness (DRAFT_COVER_RUNS=1000 go test
// -run TestBoundsCoverSecure), 1,000 drafts per distribution (8,000 in
// all, 26 s) had no coverage below 98% (the lowest was 98.16%, on the
// lognormal): a per-draft failure rate below 3.7e-4 (95% confidence).
func TestBoundsCover(t *testing.T) {
	want := map[string]string{"normal": "numeric", "lognormal": "numeric", "exponential": "numeric", "signed": "numeric",
		"age": "integer", "year": "integer", "date": "date", "timestamp": "timestamp"}
	for dist, typ := range want {
		vals := genDist(dist, 10000, privacy.NewSeeded(7))
		for seed := uint64(1); seed <= 3; seed++ {
			sc, next := stringRecords([]string{"x"}, [][]string{vals}, 4096)
			d, err := Records(context.Background(), sc, next, Settings{Epsilon: 1, Delta: 1e-9}, privacy.NewSeeded(seed))
			if err != nil {
				t.Fatal(err)
			}
			f := parseDomain(t, d.JSON)
			a := f.Attributes[0]
			if a.Type != typ {
				t.Fatalf("%s: type %s, want %s", dist, a.Type, typ)
			}
			cov := coverage(t, d, vals)
			if cov < 0.98 {
				t.Errorf("%s, seed %d: %.4f of the values inside %s", dist, seed, cov, attrText(a))
			}
			if typ == "numeric" || typ == "integer" {
				xs := make([]float64, len(vals))
				for i, s := range vals {
					xs[i], _ = parseReal(s)
				}
				slices.Sort(xs)
				rng := xs[len(xs)*999/1000] - xs[len(xs)/1000]
				var width float64
				if typ == "numeric" {
					width = a.Upper.(float64) - a.Lower.(float64)
				} else {
					width = float64(*a.Max-*a.Min) - 2*float64(*a.Width)
				}
				if width > 4*rng {
					t.Errorf("%s, seed %d: bounds %s too wide for a range of %g", dist, seed, attrText(a), rng)
				}
			}
		}
	}
}

func attrText(a domainAttr) string {
	switch a.Type {
	case "integer":
		return "[" + strconv.FormatInt(*a.Min, 10) + ", " + strconv.FormatInt(*a.Max, 10) + "]"
	}
	s, _ := marshal([]any{a.Lower, a.Upper})
	return s
}

// TestBoundsFewValues: with too few values for the quantiles the bounds are
// placeholders, and a note says so.
func TestBoundsFewValues(t *testing.T) {
	vals := genDist("age", 800, privacy.NewSeeded(1))
	sc, next := stringRecords([]string{"x"}, [][]string{vals}, 4096)
	d, err := Records(context.Background(), sc, next, Settings{Epsilon: 0.5, Delta: 1e-9}, privacy.NewSeeded(2))
	if err != nil {
		t.Fatal(err)
	}
	a := parseDomain(t, d.JSON).Attributes[0]
	if a.Type != "integer" || *a.Min != 0 || *a.Max != 0 || !hasNote(d, "placeholders to fill in") {
		t.Errorf("few values: %s %s, notes %q", a.Type, attrText(a), d.Notes)
	}
}

// TestBoundsCoverSecure is TestBoundsCover with secure randomness, run only
// when DRAFT_COVER_RUNS is set (the number of drafts per distribution).
func TestBoundsCoverSecure(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("DRAFT_COVER_RUNS"))
	if runs <= 0 {
		t.Skip("set DRAFT_COVER_RUNS to run")
	}
	for _, dist := range []string{"normal", "lognormal", "exponential", "signed", "age", "year", "date", "timestamp"} {
		vals := genDist(dist, 10000, privacy.NewSeeded(7))
		worst, fails := 1.0, 0
		for range runs {
			r, err := privacy.NewSecure()
			if err != nil {
				t.Fatal(err)
			}
			sc, next := stringRecords([]string{"x"}, [][]string{vals}, 4096)
			d, err := Records(context.Background(), sc, next, Settings{Epsilon: 1, Delta: 1e-9}, r)
			if err != nil {
				t.Fatal(err)
			}
			cov := coverage(t, d, vals)
			worst = min(worst, cov)
			if cov < 0.98 {
				fails++
			}
		}
		t.Logf("%s: lowest coverage %.4f, %d of %d drafts below 98%%", dist, worst, fails, runs)
		if fails > 0 {
			t.Errorf("%s: %d of %d drafts below 98%%", dist, fails, runs)
		}
	}
}
