package ledger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dpsynth/synth/internal/pgtest"
	"github.com/dpsynth/synth/privacy"
)

// The same suite runs on a file ledger and on a PostgreSQL ledger (a real
// server on 127.0.0.1; under CI=true it must run).

func fileLoc(t *testing.T) Location {
	return Location{Path: filepath.Join(t.TempDir(), "table.ledger.json")}
}

// pgLoc starts a PostgreSQL server for the test and names a ledger in it.
func pgLoc(t *testing.T) Location {
	return Location{Path: pgtest.Start(t), Name: "table_" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))}
}

func stores(t *testing.T, run func(t *testing.T, loc func(*testing.T) Location)) {
	t.Run("file", func(t *testing.T) { run(t, fileLoc) })
	t.Run("postgres", func(t *testing.T) {
		if testing.Short() && os.Getenv("CI") != "true" {
			t.Skip("starts PostgreSQL")
		}
		run(t, pgLoc)
	})
}

func zcdp(label string, rho float64) privacy.Charge {
	return privacy.Charge{Label: label, Cost: privacy.ZCDPCost(rho)}
}

func budgetRho(t *testing.T, b privacy.Budget) float64 {
	rho, err := b.Rho(privacy.Tight)
	if err != nil {
		t.Fatal(err)
	}
	return rho
}

// TestComposeExactly: entries compose in zCDP: two reservations of ρ/2 fit
// a budget of ρ (the ε each alone would be converted to sums to far more
// than ε), a third tiny one does not and changes nothing; a refusal is
// errors.Is privacy.ErrBudgetExceeded.
func TestComposeExactly(t *testing.T) {
	stores(t, func(t *testing.T, loc func(*testing.T) Location) {
		ctx := context.Background()
		l0 := loc(t)
		b := privacy.Budget{Eps: 1, Delta: 1e-9}
		if err := Init(ctx, l0, b, privacy.Tight); err != nil {
			t.Fatal(err)
		}
		if err := Init(ctx, l0, b, privacy.Tight); err == nil || !strings.Contains(err.Error(), "exists") {
			t.Errorf("second Init: err = %v, want one saying the ledger exists", err)
		}
		l, err := Open(ctx, l0)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		rho := budgetRho(t, b)
		for i := range 2 {
			r, err := l.Reserve(ctx, Request{Charges: []privacy.Charge{zcdp("half", rho/2*(1-1e-9))}, What: "release", Solver: "project"})
			if err != nil {
				t.Fatalf("reservation %d of ρ/2: %v", i+1, err)
			}
			if err := r.Finish(ctx, Complete); err != nil {
				t.Fatal(err)
			}
		}
		_, err = l.Reserve(ctx, Request{Charges: []privacy.Charge{zcdp("tiny", rho*1e-4)}, What: "release"})
		var re *RefusedError
		if !errors.As(err, &re) || !errors.Is(err, privacy.ErrBudgetExceeded) {
			t.Fatalf("a third reservation: err = %v, want a RefusedError (budget exceeded)", err)
		}
		rep, err := l.Show(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Entries) != 2 || rep.Remaining.Rho > rho*1e-6 || rep.Spent.Eps > 1 {
			t.Errorf("Show after the refusal: %d entries, remaining ρ %g, spent ε %g; want 2 entries, nothing left, ε ≤ 1", len(rep.Entries), rep.Remaining.Rho, rep.Spent.Eps)
		}
		for _, e := range rep.Entries {
			if e.Shown != "complete" || e.Rho <= 0 {
				t.Errorf("entry %+v: want complete with its ρ", e)
			}
		}
		if _, err := l.Check(ctx, []privacy.Charge{zcdp("tiny", rho*1e-4)}); !errors.Is(err, privacy.ErrBudgetExceeded) {
			t.Errorf("Check of a tiny charge: err = %v, want budget exceeded", err)
		}
	})
}

// TestCancelAndIncomplete: a cancelled entry is not charged; a running
// entry whose process is gone shows as incomplete and stays charged; a
// failed one stays charged.
func TestCancelAndIncomplete(t *testing.T) {
	stores(t, func(t *testing.T, loc func(*testing.T) Location) {
		ctx := context.Background()
		l0 := loc(t)
		b := privacy.Budget{Eps: 2, Delta: 1e-9}
		if err := Init(ctx, l0, b, privacy.Tight); err != nil {
			t.Fatal(err)
		}
		l, err := Open(ctx, l0)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		rho := budgetRho(t, b)
		r1, err := l.Reserve(ctx, Request{Charges: []privacy.Charge{zcdp("a", rho/4)}, What: "release"})
		if err != nil {
			t.Fatal(err)
		}
		if err := r1.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		r2, err := l.Reserve(ctx, Request{Charges: []privacy.Charge{zcdp("b", rho/4)}, What: "release"})
		if err != nil {
			t.Fatal(err)
		}
		if err := r2.Finish(ctx, Failed); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Reserve(ctx, Request{Charges: []privacy.Charge{zcdp("c", rho/4)}, What: "release"}); err != nil {
			t.Fatal(err)
		}
		// A reservation of a process that is gone (another host).
		if err := l.st.update(ctx, func(s *State) (bool, error) {
			s.Entries = append(s.Entries, Entry{ID: "dead", Started: now(), Status: Running, What: "release", Host: "elsewhere", PID: 1,
				Charges: toCharges([]privacy.Charge{zcdp("d", rho/4)})})
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		rep, err := l.Show(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var shown []string
		for _, e := range rep.Entries {
			shown = append(shown, e.Shown)
		}
		if got, want := strings.Join(shown, ", "), "failed, running, incomplete (charged)"; got != want {
			t.Errorf("shown statuses = %s, want %s", got, want)
		}
		if rep.Spent.Rho < 0.75*rho*(1-1e-9) || rep.Spent.Rho > 0.75*rho*(1+1e-9) {
			t.Errorf("spent ρ = %g, want 3/4 of %g (the cancelled entry free, the others charged)", rep.Spent.Rho, rho)
		}
		if _, err := l.Reserve(ctx, Request{Charges: []privacy.Charge{zcdp("e", rho/3)}, What: "release"}); !errors.Is(err, privacy.ErrBudgetExceeded) {
			t.Errorf("ρ/3 with ρ/4 left: err = %v, want refused", err)
		}
	})
}

// TestConcurrentReservations: eight reservations at once, each of 60% of
// the budget, against one ledger opened eight times (on a file: eight
// locks on one lock file): exactly one is accepted.
func TestConcurrentReservations(t *testing.T) {
	stores(t, func(t *testing.T, loc func(*testing.T) Location) {
		ctx := context.Background()
		l0 := loc(t)
		b := privacy.Budget{Eps: 1, Delta: 1e-9}
		if err := Init(ctx, l0, b, privacy.Tight); err != nil {
			t.Fatal(err)
		}
		rho := budgetRho(t, b)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				l, err := Open(ctx, l0)
				if err != nil {
					errs[i] = err
					return
				}
				defer l.Close()
				_, errs[i] = l.Reserve(ctx, Request{Charges: []privacy.Charge{zcdp("big", 0.6*rho)}, What: "release"})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, privacy.ErrBudgetExceeded):
				t.Errorf("unexpected error: %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d of 8 concurrent reservations of 0.6ρ accepted, want exactly 1", ok)
		}
	})
}

// TestFileAtomic: a crash while writing leaves the old ledger readable (the
// temporary file is not the ledger), and the ledger never holds a partial
// write.
func TestFileAtomic(t *testing.T) {
	ctx := context.Background()
	loc := fileLoc(t)
	if err := Init(ctx, loc, privacy.Budget{Eps: 1, Delta: 1e-9}, privacy.Tight); err != nil {
		t.Fatal(err)
	}
	// A crash after the temporary file was written, before the rename.
	tmp := filepath.Join(filepath.Dir(loc.Path), "."+filepath.Base(loc.Path)+".tmp-123")
	if err := os.WriteFile(tmp, []byte(`{"schema": "synth.ledger/v1", "entr`), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Open(ctx, loc)
	if err != nil {
		t.Fatalf("the ledger after a crash mid-write: %v", err)
	}
	if _, err := l.Reserve(ctx, Request{Charges: []privacy.Charge{zcdp("x", 1e-3)}, What: "release"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(loc.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseState(b); err != nil {
		t.Errorf("the ledger file after a reservation: %v", err)
	}
	// A damaged ledger is an error, not an empty ledger.
	if err := os.WriteFile(loc.Path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, loc); err == nil {
		t.Error("a truncated ledger opened without error")
	}
}

// FuzzParseState: the ledger parser never panics, and what it accepts
// writes back to a form it accepts again with the same content.
func FuzzParseState(f *testing.F) {
	s := &State{Schema: Schema, Name: "default", Created: "2026-11-24T00:00:00Z", Budget: privacy.Budget{Eps: 1, Delta: 1e-9}, Conversion: "tight",
		Entries: []Entry{{ID: "a1", Started: "2026-11-24T00:00:01Z", Status: Complete, What: "release", Charges: toCharges([]privacy.Charge{zcdp("m", 1e-3)})}}}
	b, _ := s.json()
	f.Add(b)
	f.Add([]byte(`{"schema": "synth.ledger/v1", "budget": {"eps": 1, "delta": 0}, "conversion": "standard", "entries": []}`))
	f.Add([]byte(`{"schema": "synth.ledger/v1", "budget": {"eps": 1, "delta": 1e-9}, "conversion": "tight", "entries": [{"id": "x", "status": "running", "charges": [{"label": "l", "kind": "pure", "rho": 0.5, "epsilon": 1}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseState(b)
		if err != nil {
			return
		}
		out, err := s.json()
		if err != nil {
			t.Fatal(err)
		}
		s2, err := parseState(out)
		if err != nil {
			t.Fatalf("a parsed ledger does not parse again: %v\n%s", err, out)
		}
		out2, _ := s2.json()
		if string(out) != string(out2) {
			t.Fatalf("round trip changed the ledger:\n%s\n%s", out, out2)
		}
	})
}

// TestChargeJSONKeepsExact checks that a charge's exact-accounting marker
// survives the ledger's JSON form, and that its absence does too.
func TestChargeJSONKeepsExact(t *testing.T) {
	in := []privacy.Charge{
		{Label: "exact", Cost: privacy.ApproxCost(1, 1e-9), Exact: true},
		{Label: "paper", Cost: privacy.ApproxCost(1, 1e-9)},
		{Label: "zcdp", Cost: privacy.ZCDPCost(0.1)},
	}
	for i, c := range toCharges(in) {
		got, err := c.privacy()
		if err != nil {
			t.Fatal(err)
		}
		if got != in[i] {
			t.Errorf("toCharges(%+v).privacy() = %+v, want it back", in[i], got)
		}
	}
}
