package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsynth/synth/release"
)

// TestReleaseModels: the model routing as a user meets it on the built
// binary — a factored release of a universe no vector can hold (full ADULT,
// here with all 2-way marginals to stay quick), with the model and its
// cliques in the manifest; --model explicit refused over the memory cap
// (exit 78, nothing read: the data is a FIFO); a solver without a factored
// form refused on it (exit 2).
func TestReleaseModels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	data, domain := extractTo(t, "adult", dir)
	out := filepath.Join(dir, "out")
	r := runBinary(t, dir, "release", "--data", data, "--domain", domain, "--marginals", "2", "--epsilon", "1",
		"--seed", "3", "--out", out, "--json")
	if r.code != ExitOK {
		t.Fatalf("factored release: %s", r)
	}
	var o release.Outcome
	jsonLine(t, r.stdout, &o)
	// Under add/remove (the default) the rows default to the noisy n̂.
	if o.Model != "factored" || o.Errors == nil || o.Errors.Max > 0.05 || math.Abs(float64(o.Rows)-48842) > 0.01*48842 || !o.RecordsPrivate {
		t.Errorf("outcome %+v: want the factored model, 48,842 rows within 1%% (n̂), max error at most 0.05", o)
	}
	b, err := os.ReadFile(filepath.Join(out, release.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := release.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	// The up-front charges: one per one-way table (14 attributes), then
	// the adaptive rounds'.
	if m.Solver.Model != "factored" || len(m.Solver.Cliques) == 0 || len(m.Privacy.Charges) != 15 || !strings.Contains(m.Privacy.Charges[14].Label, "adaptive rounds") {
		t.Errorf("manifest solver %+v, %d charges: want the factored model, its cliques, the 14 one-way tables' charges and the rounds'", m.Solver, len(m.Privacy.Charges))
	}
	rep, err := os.ReadFile(filepath.Join(out, release.ReportJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var rj struct {
		Solver string `json:"solver"`
	}
	if err := json.Unmarshal(rep, &rj); err != nil || !strings.Contains(rj.Solver, "factored model") || !strings.Contains(string(rep), "model cliques") {
		t.Errorf("report solver %q: want the factored model and its cliques (%v)", rj.Solver, err)
	}

	fifoData := fifo(t)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--model", "explicit"}, ExitMemory, "over --memory-cap"},
		{[]string{"--solver", "dpam"}, ExitMemory, "dpam needs the full noisy histogram"},
		{[]string{"--solver", "dpam", "--model", "factored"}, ExitUsage, "dpam needs the full noisy histogram"},
		{[]string{"--max-model-size", "12"}, ExitOK, ""},
	} {
		o := filepath.Join(dir, "refused")
		args := append([]string{"release", "--data", fifoData, "--domain", domain, "--marginals", "2", "--epsilon", "1", "--out", o}, tt.args...)
		if tt.code == ExitOK {
			args = append(args, "--dry-run")
		}
		r := runBinary(t, dir, args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%q: %s\nwant exit %d and %q", tt.args, r, tt.code, tt.want)
		}
		noOutput(t, o)
	}
}
