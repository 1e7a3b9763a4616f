package main

// Tests of what a batch job relies on, run on the built binary: the plan
// printed before any data is read (--dry-run), the budget sanity warnings,
// the spent budget never printed above the budget.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dpsynth/synth/release"
)

// TestDryRunBinary: --dry-run prints the plan without opening the data (a
// FIFO: opening it would block until runBinary's 2-minute limit) and
// without making the output folder; --json prints it as JSON; refusals
// have a release's exit codes.
func TestDryRunBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	data := fifo(t)
	domain := filepath.Join(rawDir, "adult-raw-domain.json")
	out := filepath.Join(t.TempDir(), "out")
	base := []string{"release", "--dry-run", "--data", data, "--domain", domain, "--marginals", "2", "--out", out}

	r := runBinary(t, "", append(base, "--epsilon", "1")...)
	if r.code != ExitOK {
		t.Fatalf("dry run: %s", r)
	}
	for _, w := range []string{"plan (dry run: the data was not read, nothing was written)", "solver: project (tuned)",
		"model: explicit (auto: the universe has", "estimated peak memory:", "budget: ε = 1, δ = 1e-09 (ρ = ",
		"charges (28):", "ρ = ", "total: ε = 1 at δ = 1e-09", "time: solve about", "rough",
		"noise of the measured tables", "marginal {education, marital-status}, 112 cells: σ = ", "counts"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("dry run: stdout does not contain %q:\n%s", w, r.stdout)
		}
	}
	if r.stderr != "" {
		t.Errorf("dry run at ε = 1: stderr %q, want nothing", r.stderr)
	}
	noOutput(t, out)

	r = runBinary(t, "", append(base, "--epsilon", "1", "--json")...)
	var p release.Preview
	jsonLine(t, r.stdout, &p)
	if r.code != ExitOK || p.Model != "explicit" || len(p.Charges) != 28 || len(p.Noise) != 28 || p.Total.Epsilon > 1 || p.Memory.PeakBytes == 0 || p.Time.Seconds <= 0 {
		t.Errorf("dry run --json: %s\npreview %+v", r, p)
	}

	r = runBinary(t, "", append(base, "--epsilon", "20")...)
	if r.code != ExitOK || !strings.Contains(r.stderr, "synth: warning: ε = 20 is above 10") {
		t.Errorf("dry run at ε = 20: %s\nwant a warning", r)
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--epsilon", "1", "--delta", "0"}, ExitBudget, "the budget is pure"},
		{[]string{"--epsilon", "1", "--memory-cap", "1KiB"}, ExitMemory, "over --memory-cap"},
		{[]string{"--epsilon", "0"}, ExitUsage, "--epsilon must be > 0"},
		{[]string{}, ExitUsage, "--epsilon is required"},
		{[]string{"--epsilon", "1", "--solver", "nope"}, ExitUsage, `unknown solver "nope"`},
	} {
		r := runBinary(t, "", append(base, tt.args...)...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
			t.Errorf("dry run %q: %s\nwant exit %d and %q", tt.args, r, tt.code, tt.want)
		}
		noOutput(t, out)
	}
}

// TestReleaseBudgetWarnings: ε above 10 and δ >= 1/n (n public under
// replace-one: the raw table has 2,000 records) are warned about on stderr
// and in the manifest; under add/remove the true n is never compared.
func TestReleaseBudgetWarnings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	data, domain := filepath.Join(rawDir, "adult-raw.csv"), filepath.Join(rawDir, "adult-raw-domain.json")
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want []string // substrings of the warnings
		not  []string
	}{
		{"none", []string{"--epsilon", "1"}, nil, []string{"above 10", "1/n"}},
		{"large epsilon", []string{"--epsilon", "11"}, []string{"ε = 11 is above 10"}, []string{"1/n"}},
		{"delta 1/n", []string{"--epsilon", "1", "--delta", "0.0005"}, []string{"δ = 0.0005 is at least 1/n (n = 2000, the number of records released"}, nil},
		{"delta below 1/n", []string{"--epsilon", "1", "--delta", "0.0004"}, nil, []string{"1/n"}},
		// Under add/remove only the noisy estimate of n may be compared.
		{"add-remove", []string{"--epsilon", "1", "--delta", "0.0004", "--neighbours", "add-remove"}, nil, []string{"n = 2000,", "number of records released"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out"+strconv.Itoa(i))
			args := append([]string{"release", "--data", data, "--domain", domain, "--marginals", "2", "--seed", "3", "--out", out}, tt.args...)
			r := runBinary(t, "", args...)
			if r.code != ExitOK {
				t.Fatalf("synth %s: %s", strings.Join(args, " "), r)
			}
			b, err := os.ReadFile(filepath.Join(out, release.ManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			man, err := release.ParseManifest(b)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(man.Warnings, "\n")
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, "synth: warning: "+w) || !strings.Contains(all, w) {
					t.Errorf("%q: warning %q missing: stderr %q, manifest warnings %q", tt.args, w, r.stderr, man.Warnings)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(r.stderr, w) || strings.Contains(all, w) {
					t.Errorf("%q: unexpected %q: stderr %q, manifest warnings %q", tt.args, w, r.stderr, man.Warnings)
				}
			}
		})
	}
}

// TestSpentNotAboveBudget: the ε the CLI prints as spent, in its summary
// line, its --json outcome and the manifest, is never above the budget,
// for several budgets, solvers and both conversions.
func TestSpentNotAboveBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	data, domain := filepath.Join(rawDir, "adult-raw.csv"), filepath.Join(rawDir, "adult-raw-domain.json")
	dir := t.TempDir()
	line := regexp.MustCompile(`privacy: \(ε = ([0-9.e+-]+), δ = [^)]*\) spent of \(ε = ([0-9.e+-]+),`)
	i := 0
	for _, c := range []struct{ eps, solver, conv string }{
		{"0.1", "project", "tight"}, {"0.3", "project", "standard"}, {"1", "mwem", "tight"}, {"3", "dpfw", "tight"}, {"0.7", "project", "tight"},
	} {
		i++
		out := filepath.Join(dir, "out"+strconv.Itoa(i))
		args := []string{"release", "--data", data, "--domain", domain, "--marginals", "1", "--seed", "5", "--out", out,
			"--epsilon", c.eps, "--solver", c.solver, "--conversion", c.conv}
		r := runBinary(t, "", args...)
		m := line.FindStringSubmatch(r.stdout)
		if r.code != ExitOK || m == nil {
			t.Fatalf("synth %s: %s\nwant a privacy line", strings.Join(args, " "), r)
		}
		spent, _ := strconv.ParseFloat(m[1], 64)
		budget, _ := strconv.ParseFloat(m[2], 64)
		want, _ := strconv.ParseFloat(c.eps, 64)
		if budget != want || spent > budget {
			t.Errorf("ε %s, %s, %s: printed spent %v of %v", c.eps, c.solver, c.conv, spent, budget)
		}
		b, err := os.ReadFile(filepath.Join(out, release.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		var man struct {
			Privacy struct {
				Total struct{ Epsilon float64 } `json:"total"`
			} `json:"privacy"`
		}
		if err := json.Unmarshal(b, &man); err != nil {
			t.Fatal(err)
		}
		if man.Privacy.Total.Epsilon > want {
			t.Errorf("ε %s, %s, %s: manifest total ε %v", c.eps, c.solver, c.conv, man.Privacy.Total.Epsilon)
		}
		// --json
		r = runBinary(t, "", append(args, "--json", "--force")...)
		var oc release.Outcome
		jsonLine(t, r.stdout, &oc)
		if oc.Spent > oc.Epsilon || oc.Epsilon != want {
			t.Errorf("ε %s, %s, %s: --json spent %v of %v", c.eps, c.solver, c.conv, oc.Spent, oc.Epsilon)
		}
	}
}
