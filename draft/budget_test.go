package draft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dpsynth/synth/privacy"
)

// TestSpentWithinSettings drafts tables under several budgets, units and
// column mixes and checks that Spent never exceeds the settings, that it
// is an (ε, δ) cost, and that the plan's charges fit a fresh ledger of
// exactly that budget.
func TestSpentWithinSettings(t *testing.T) {
	n := 600
	g := privacy.NewSeeded(9)
	unit, text, num, flag := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i := range n {
		unit[i] = strconv.Itoa(i / 4)
		text[i] = []string{"a", "b", "c"}[g.Uint64N(3)]
		num[i] = strconv.Itoa(int(g.Uint64N(1000)))
		flag[i] = []string{"y", "n"}[g.Uint64N(2)]
	}
	for _, c := range []struct {
		name string
		s    Settings
		cols []string
	}{
		{"ε=1 δ=1e-9", Settings{Epsilon: 1, Delta: 1e-9}, []string{"text", "num", "flag"}},
		{"ε=0.1 δ=1e-6", Settings{Epsilon: 0.1, Delta: 1e-6}, []string{"text", "num"}},
		{"ε=8 δ=1e-12", Settings{Epsilon: 8, Delta: 1e-12}, []string{"text"}},
		{"ε=0.5 δ=1e-5 unit K=4", Settings{Epsilon: 0.5, Delta: 1e-5, PrivacyUnit: "unit", MaxRowsPerUnit: 4}, []string{"unit", "text", "num", "flag"}},
		{"ε=2 δ=1e-9 unit K=1, one excluded", Settings{Epsilon: 2, Delta: 1e-9, PrivacyUnit: "unit", Exclude: []string{"flag"}}, []string{"unit", "text", "num", "flag"}},
		{"ε=3 δ=0.01", Settings{Epsilon: 3, Delta: 0.01}, []string{"num"}},
	} {
		all := map[string][]string{"unit": unit, "text": text, "num": num, "flag": flag}
		var cols [][]string
		for _, name := range c.cols {
			cols = append(cols, all[name])
		}
		sc, next := stringRecords(c.cols, cols, 256)
		d, err := Records(context.Background(), sc, next, c.s, privacy.NewSeeded(1))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sp := d.Spent
		if sp.Kind != privacy.Approx || sp.Eps > c.s.Epsilon || sp.Delta > c.s.Delta || !(sp.Eps > 0.9*c.s.Epsilon) {
			t.Errorf("%s: spent %v over (or far below) the budget (%g, %g)", c.name, sp, c.s.Epsilon, c.s.Delta)
		}
		// The same plan against a fresh ledger.
		st, _ := c.s.check()
		tb, _ := newTable(sc, st)
		p, err := newPlan(tb, st)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := privacy.NewLedger(privacy.Budget{Eps: c.s.Epsilon, Delta: c.s.Delta}, nil)
		if err := l.Charge(p.charges...); err != nil {
			t.Errorf("%s: the plan does not fit: %v", c.name, err)
		}
		var rho, delta float64
		for _, ch := range p.charges {
			rho += ch.Rho
			delta += ch.Delta
		}
		if rho > p.rho*(1+1e-12) || delta > p.deltaSel*(1+1e-12) {
			t.Errorf("%s: charges ρ = %g δ = %g over the plan's %g, %g", c.name, rho, delta, p.rho, p.deltaSel)
		}
		if e := privacy.RhoToEps(rho, c.s.Delta-delta, privacy.Tight); e > c.s.Epsilon {
			t.Errorf("%s: converted ε = %g over %g", c.name, e, c.s.Epsilon)
		}
		if f := parseDomain(t, d.JSON); f.Draft.Epsilon != c.s.Epsilon || f.Draft.Delta != c.s.Delta {
			t.Errorf("%s: draft header %+v", c.name, f.Draft)
		}
	}
}

func TestSettingsErrors(t *testing.T) {
	sc, _ := stringRecords([]string{"a", "u"}, [][]string{{"x"}, {"1"}}, 1)
	read := false
	never := func() (arrowBatch, error) { read = true; return nil, io.EOF }
	for _, c := range []struct {
		s    Settings
		want string
	}{
		{Settings{Epsilon: 1}, "needs delta > 0"},
		{Settings{Epsilon: -1, Delta: 1e-9}, "epsilon"},
		{Settings{Epsilon: math.NaN(), Delta: 1e-9}, "epsilon"},
		{Settings{Epsilon: 1, Delta: 1}, "delta"},
		{Settings{Epsilon: 1, Delta: 1e-9, MaxRowsPerUnit: 2}, "needs a privacy-unit column"},
		{Settings{Epsilon: 1, Delta: 1e-9, PrivacyUnit: "v"}, `privacy-unit column "v" is not a column`},
		{Settings{Epsilon: 1, Delta: 1e-9, Exclude: []string{"b"}}, `excluded column "b"`},
		{Settings{Epsilon: 1, Delta: 1e-9, Exclude: []string{"a"}, PrivacyUnit: "u"}, "no column to draft"},
		{Settings{Epsilon: 1, Delta: 1e-9, TimeZone: "Mars/Olympus"}, "time zone"},
		{Settings{Epsilon: 1e-30, Delta: 1e-300}, "budget"},
	} {
		_, err := Records(context.Background(), sc, never, c.s, privacy.NewSeeded(1))
		if err == nil || !strings.Contains(err.Error(), c.want) || read {
			t.Errorf("%+v: error %v (read a record: %v), want %q before any read", c.s, err, read, c.want)
		}
		read = false
	}
}

func TestMemoryCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,b\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "x%d,%d\n", i%7, i)
	}
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Settings{Epsilon: 1, Delta: 1e-9, MemoryCap: 50_000}
	_, err := File(context.Background(), path, s, privacy.NewSeeded(1))
	var me *MemoryError
	if !errors.As(err, &me) || me.BeforeRead || me.Cap != 50_000 {
		t.Fatalf("File(5,000 rows, cap 50 kB) = %v, want a *MemoryError after reading", err)
	}
	s.MemoryCap = 0
	if _, err := File(context.Background(), path, s, privacy.NewSeeded(1)); err != nil {
		t.Errorf("File(default cap) = %v", err)
	}
}
