package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dpsynth/synth/internal/pgtest"
	"github.com/dpsynth/synth/ledger"
)

// ledgerLocations are the two kinds of ledger the tests run against: a
// file, and a table in a real PostgreSQL (started for the test).
func ledgerLocations(t *testing.T) map[string][]string {
	locs := map[string][]string{"file": {"--ledger", filepath.Join(t.TempDir(), "people.ledger.json")}}
	if !testing.Short() || os.Getenv("CI") == "true" {
		locs["postgres"] = []string{"--ledger", pgtest.Start(t), "--ledger-name", "people"}
	}
	return locs
}

func showLedger(t *testing.T, loc []string) *ledger.Report {
	t.Helper()
	r := inProcess(t, append([]string{"ledger", "show", "--json"}, loc...)...)
	if r.code != ExitOK {
		t.Fatalf("ledger show: %s", r)
	}
	var rep ledger.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("ledger show --json: %v\n%s", err, r.stdout)
	}
	return &rep
}

// TestLedgerRelease: releases reserve in the table's lifetime budget; one
// that does not fit exits 77 before it opens its data (a FIFO) and writes
// nothing; a release whose output folder cannot be created is not charged;
// the dry run states what is left and reserves nothing.
func TestLedgerRelease(t *testing.T) {
	data, domain := filepath.Join(rawDir, "adult-raw.csv"), filepath.Join(rawDir, "adult-raw-domain.json")
	for kind, loc := range ledgerLocations(t) {
		t.Run(kind, func(t *testing.T) {
			if r := inProcess(t, append([]string{"ledger", "init", "--epsilon", "1.2"}, loc...)...); r.code != ExitOK || !strings.Contains(r.stdout, "lifetime budget (ε = 1.2") {
				t.Fatalf("ledger init: %s", r)
			}
			if r := inProcess(t, append([]string{"ledger", "init", "--epsilon", "1.2"}, loc...)...); r.code == ExitOK {
				t.Errorf("a second ledger init succeeded: %s", r)
			}
			dir := t.TempDir()
			base := []string{"release", "--domain", domain, "--marginals", "1", "--seed", "1"}
			r := inProcess(t, append(append(base, "--data", data, "--epsilon", "1", "--out", filepath.Join(dir, "one")), loc...)...)
			if r.code != ExitOK {
				t.Fatalf("first release: %s", r)
			}
			// Two releases of ε = 1 compose (zCDP: ρ ≈ 2·0.0150) to more than
			// the lifetime ε = 1.2 allows (ρ ≈ 0.0214).
			out := filepath.Join(dir, "two")
			r = inProcess(t, append(append(base, "--data", fifo(t), "--epsilon", "1", "--out", out), loc...)...)
			if r.code != ExitBudget || !strings.Contains(r.stderr, "lifetime budget") {
				t.Errorf("release over the lifetime budget: %s\nwant exit %d naming the lifetime budget", r, ExitBudget)
			}
			noOutput(t, out)
			// The dry run: what is left, and exit 77 when over.
			r = inProcess(t, append(append(base, "--dry-run", "--data", fifo(t), "--epsilon", "0.2", "--out", out), loc...)...)
			if r.code != ExitOK || !strings.Contains(r.stdout, "lifetime budget: ") || !strings.Contains(r.stdout, "reserves nothing") {
				t.Errorf("dry run with a ledger: %s", r)
			}
			if r := inProcess(t, append(append(base, "--dry-run", "--data", fifo(t), "--epsilon", "1", "--out", out), loc...)...); r.code != ExitBudget {
				t.Errorf("dry run over the lifetime budget: %s, want exit %d", r, ExitBudget)
			}
			// An output folder that cannot be created: refused after the
			// reservation but before any record was read; not charged.
			blocker := filepath.Join(dir, "file")
			if err := os.WriteFile(blocker, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			r = inProcess(t, append(append(base, "--data", fifo(t), "--epsilon", "0.2", "--out", filepath.Join(blocker, "out")), loc...)...)
			if r.code != ExitCantOut {
				t.Errorf("release into an impossible folder: %s, want exit %d", r, ExitCantOut)
			}
			rep := showLedger(t, loc)
			if len(rep.Entries) != 1 || rep.Entries[0].Shown != "complete" || rep.Entries[0].Out != filepath.Join(dir, "one") {
				t.Errorf("ledger after the refusals: %+v, want the first release only, complete", rep.Entries)
			}
			if r := inProcess(t, append([]string{"ledger", "show"}, loc...)...); r.code != ExitOK || !strings.Contains(r.stdout, "remaining: ε = ") {
				t.Errorf("ledger show: %s", r)
			}
		})
	}
}

// TestLedgerKilledAndConcurrent (processes): a release killed after it
// reserved (while it waits on its data, a FIFO) stays charged and shows as
// incomplete, so a release that would fit only without it is refused; of
// two releases started together where only one fits, exactly one passes.
func TestLedgerKilledAndConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	data, domain := filepath.Join(rawDir, "adult-raw.csv"), filepath.Join(rawDir, "adult-raw-domain.json")
	for kind, loc := range ledgerLocations(t) {
		t.Run(kind, func(t *testing.T) {
			if r := runBinary(t, "", append([]string{"ledger", "init", "--epsilon", "1.5"}, loc...)...); r.code != ExitOK {
				t.Fatalf("ledger init: %s", r)
			}
			dir := t.TempDir()
			base := []string{"release", "--domain", domain, "--marginals", "1"}
			cmd := exec.Command(synthBinary(t), append(append(base, "--data", fifo(t), "--epsilon", "1", "--out", filepath.Join(dir, "killed")), loc...)...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait for its reservation, then kill it.
			deadline := time.Now().Add(30 * time.Second)
			for len(showLedger(t, loc).Entries) == 0 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("the release did not reserve within 30 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			rep := showLedger(t, loc)
			if len(rep.Entries) != 1 || rep.Entries[0].Shown != "incomplete (charged)" {
				t.Fatalf("after kill -9: %+v, want one incomplete entry", rep.Entries)
			}
			// ε = 1.3 (ρ ≈ 0.0250) fits the lifetime ρ ≈ 0.0325 alone, not
			// beside the killed entry's ≈ 0.0150.
			if r := runBinary(t, "", append(append(base, "--data", data, "--epsilon", "1.3", "--out", filepath.Join(dir, "after")), loc...)...); r.code != ExitBudget {
				t.Errorf("a release that fits only without the killed one: %s, want exit %d", r, ExitBudget)
			}
			// Two at once, each of ε = 0.9 (ρ ≈ 0.0123): beside the killed
			// entry's ρ ≈ 0.0150 there is room for one (the budget's ρ ≈ 0.0325).
			var wg sync.WaitGroup
			codes := make([]int, 2)
			for i := range codes {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					c := exec.CommandContext(ctx, synthBinary(t), append(append(base, "--data", data, "--epsilon", "0.9", "--quiet",
						"--out", filepath.Join(dir, "both", string(rune('a'+i)))), loc...)...)
					var errb bytes.Buffer
					c.Stderr = &errb
					err := c.Run()
					if ee, ok := err.(*exec.ExitError); ok {
						codes[i] = ee.ExitCode()
					} else if err != nil {
						t.Errorf("release %d: %v", i, err)
					}
				})
			}
			wg.Wait()
			if !(codes[0] == ExitOK && codes[1] == ExitBudget || codes[0] == ExitBudget && codes[1] == ExitOK) {
				t.Errorf("two concurrent releases where one fits: exit codes %v, want one 0 and one %d", codes, ExitBudget)
			}
		})
	}
}
