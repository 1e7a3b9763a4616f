package draft

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpsynth/synth/privacy"
)

// exactTail is P(Z >= t) for the discrete Gaussian, summed in float64.
func exactTail(t int64, sigma float64) float64 {
	w := func(z float64) float64 { return math.Exp(-z * z / (2 * sigma * sigma)) }
	lim := int64(40*sigma) + 50
	var num, den float64
	for z := -lim; z <= lim; z++ {
		den += w(float64(z))
		if z >= t {
			num += w(float64(z))
		}
	}
	return num / den
}

func TestDGTailBound(t *testing.T) {
	for _, sigma := range []float64{0.3, 1, 2.5, 10, 40} {
		for _, m := range []float64{0, 0.5, 1, 2, 4, 6, 8} {
			tt := int64(math.Ceil(m * sigma))
			exact := exactTail(tt, sigma)
			b := dgTail(float64(tt), sigma)
			if b < exact {
				t.Errorf("σ = %g, t = %d: bound %g below the exact tail %g", sigma, tt, b, exact)
			}
			// The bound is tight for σ >= 1 (within a factor 2 beyond σ).
			if sigma >= 1 && tt >= int64(sigma) && tt > 0 && b > 2*exact+1e-300 {
				t.Errorf("σ = %g, t = %d: bound %g loose against %g", sigma, tt, b, exact)
			}
		}
	}
}

func TestSelectionCalibration(t *testing.T) {
	for _, c := range []struct {
		sigma float64
		k     int
		delta float64
	}{{6.6, 1, 5e-10}, {20, 1, 1e-6}, {9.3, 2, 1e-9}, {150, 16, 1e-10}, {0.8, 1, 1e-3}} {
		s := newSelection(c.sigma, c.k, c.delta)
		k := float64(c.k)
		if k*dgTail(float64(s.tau-1), c.sigma) > c.delta {
			t.Errorf("%+v: τ = %d lets a single-unit value through with probability above δ/K", c, s.tau)
		}
		if s.tau > 1 && k*dgTail(float64(s.tau-2), c.sigma) <= c.delta {
			t.Errorf("%+v: τ = %d is not the smallest", c, s.tau)
		}
		if s.pSingle > c.delta/k {
			t.Errorf("%+v: pSingle %g", c, s.pSingle)
		}
		if dgTail(float64(s.appear+1-s.tau), c.sigma) > appearProb {
			t.Errorf("%+v: a value held by %d units misses with probability above %g", c, s.appear, appearProb)
		}
	}
}

// selectionTable returns the values of a text column in which each of
// `common` values is held by exactly `each` rows and `singles` values by
// one row each.
func selectionTable(common, each, singles int) []string {
	var out []string
	for i := range common {
		for range each {
			out = append(out, fmt.Sprintf("common%d", i))
		}
	}
	for i := range singles {
		out = append(out, fmt.Sprintf("single%d", i))
	}
	return out
}

// TestPartitionSelection runs the selection on a column where 4 values are
// held by exactly T units (T the stated "appears" threshold) and 100 values
// by a single unit, with a fixed seed and over 200 secure runs, at ε = 1,
// δ = 1e-9 (one text column: δ_sel = 5e-10).
//
// False failures: a single-unit value appears with probability at most
// pSingle <= δ_sel = 5e-10 per run, so at most 201·100·5e-10 ≈ 1e-5 for
// the test; a value held by T units misses with probability at most 1e-9
// per run: at most 201·4·1e-9 ≈ 8e-7 for the test.
func TestPartitionSelection(t *testing.T) {
	s := Settings{Epsilon: 1, Delta: 1e-9}
	st, _ := s.check()
	sc, _ := stringRecords([]string{"v"}, [][]string{{"x"}}, 1)
	tb, _ := newTable(sc, st)
	p, err := newPlan(tb, st)
	if err != nil {
		t.Fatal(err)
	}
	sel := p.cols[0].sel
	t.Logf("σ = %.3g, τ = %d, T = %d, P(single appears) <= %.2g", sel.sigma, sel.tau, sel.appear, sel.pSingle)
	if bound := 201 * 100 * sel.pSingle; bound > 2e-5 {
		t.Fatalf("false-failure bound %g", bound)
	}
	vals := selectionTable(4, int(sel.appear), 100)
	runs := []*privacy.Rand{privacy.NewSeeded(3)}
	for range 200 {
		r, err := privacy.NewSecure()
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	for i, r := range runs {
		sc, next := stringRecords([]string{"v"}, [][]string{vals}, 1000)
		d, err := Records(context.Background(), sc, next, s, r)
		if err != nil {
			t.Fatal(err)
		}
		a := parseDomain(t, d.JSON).Attributes[0]
		if got := strings.Join(a.Values, ","); got != "common0,common1,common2,common3,"+OtherValue || a.Other != OtherValue {
			t.Fatalf("run %d: values %s", i, got)
		}
	}
}

func TestMaxCategoriesAndNoneFound(t *testing.T) {
	// 30 values of 200 rows each; keep 5.
	vals := selectionTable(30, 200, 0)
	sc, next := stringRecords([]string{"v"}, [][]string{vals}, 1000)
	d, err := Records(context.Background(), sc, next, Settings{Epsilon: 2, Delta: 1e-9, MaxCategories: 5}, privacy.NewSeeded(1))
	if err != nil {
		t.Fatal(err)
	}
	a := parseDomain(t, d.JSON).Attributes[0]
	if len(a.Values) != 6 || !sortedStrings(a.Values[:5]) || a.Values[5] != OtherValue {
		t.Errorf("values %q: want 5, sorted, then %q", a.Values, OtherValue)
	}
	if !hasNote(d, "the 5 with the largest noisy counts") {
		t.Errorf("no note about the cut: %q", d.Notes)
	}
	// Identifiers: every value is held by one unit, nothing passes.
	ids := selectionTable(0, 0, 3000)
	sc, next = stringRecords([]string{"id"}, [][]string{ids}, 1000)
	d, err = Records(context.Background(), sc, next, Settings{Epsilon: 1, Delta: 1e-9}, privacy.NewSeeded(1))
	if err != nil {
		t.Fatal(err)
	}
	a = parseDomain(t, d.JSON).Attributes[0]
	if len(a.Values) != 1 || a.Values[0] != NoneFound || !hasNote(d, "no value passed the threshold") {
		t.Errorf("identifiers: values %q, notes %q", a.Values, d.Notes)
	}
}

func sortedStrings(xs []string) bool {
	for i := 1; i < len(xs); i++ {
		if xs[i-1] >= xs[i] {
			return false
		}
	}
	return true
}

func hasNote(d *Draft, part string) bool {
	for _, n := range d.Notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}
