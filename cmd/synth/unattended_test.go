package main

// Tests of what a batch job relies on, run on the built binary: the plan
// printed before any data is read (--dry-run), the budget sanity warnings,
// the spent budget never printed above the budget.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
		"model: explicit (auto: the universe has", "estimated peak memory:", "budget: ε = 1, δ = 1e-09; neighbours: ",
		"charges (1):", "exact accounting (the discrete Gaussians' privacy-loss distribution, not zCDP)", "times the zCDP conversion's", "total: ε = 1 at δ = 1e-09", "time: not estimated", "n is not known before reading", "µs per record",
		"noise of the measured tables", "the record count: σ = 54.95, ±107.7 counts",
		"each of the 21 order-2 marginals alone, if the table holds more than about 2409 records (the noisy record count decides): σ = 25.31, ±49.61 counts",
		"each of the 7 order-1 and 21 order-2 marginals, if the table holds more than about 80 records and fewer than about 2409: σ = 29.23, ±57.28 counts",
		"each of the 7 order-1 marginals alone, if fewer than about 80: σ = 14.61, ±28.64 counts"} {
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
	if r.code != ExitOK || p.Model != "explicit" || len(p.Charges) != 1 || len(p.Noise) != 4 || p.Total.Epsilon > 1 || p.Memory.PeakBytes == 0 || p.Time.Seconds != 0 || p.Time.PerRecord <= 0 {
		t.Errorf("dry run --json: %s\npreview %+v", r, p)
	}

	for _, extra := range [][]string{nil, {"--json"}} {
		r = runBinary(t, "", append(append(base, "--epsilon", "20"), extra...)...)
		if r.code != ExitOK || !strings.Contains(r.stderr, "synth: warning: ε = 20 is above 10") {
			t.Errorf("dry run at ε = 20 %q: %s\nwant a warning", extra, r)
		}
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
		{[]string{"--epsilon", "1", "--data", data + ".missing"}, ExitNoInput, data + ".missing: no such file"},
	} {
		args := append([]string(nil), base...)
		for i := 0; i+1 < len(tt.args); i++ {
			if tt.args[i] == "--data" {
				// Replace the base's --data (given twice is a usage error).
				args[3] = tt.args[i+1]
				tt.args = append(append([]string(nil), tt.args[:i]...), tt.args[i+2:]...)
				break
			}
		}
		r := runBinary(t, "", append(args, tt.args...)...)
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
		{"delta 1/n", []string{"--epsilon", "1", "--delta", "0.0005", "--neighbours", "replace-one"}, []string{"δ = 0.0005 is at least 1/n (n = 2000, the number of records released"}, nil},
		{"delta below 1/n", []string{"--epsilon", "1", "--delta", "0.0004", "--neighbours", "replace-one"}, nil, []string{"1/n"}},
		// Under add/remove (the default) only the noisy estimate of n may be
		// compared.
		{"add-remove", []string{"--epsilon", "1", "--delta", "0.0004"}, nil, []string{"n = 2000,", "number of records released"}},
		{"add-remove 1/n", []string{"--epsilon", "1", "--delta", "0.0006"}, []string{"δ = 0.0006 is at least 1/n (n = "}, []string{"n = 2000,"}},
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

// TestReleaseKilledThenRerun kills a release with SIGKILL while it writes
// synthetic.parquet (10^7 rows), checks that it left its temporary file,
// then runs a release into the same folder: it succeeds, says it removed
// the leftover, and the folder holds the release and nothing else but a
// file of the user's.
func TestReleaseKilledThenRerun(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10 million rows; skipped with -short")
	}
	dir := t.TempDir()
	data, domain := extractTo(t, "adult-reduced", dir)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, ".notes.tmp-1"), []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(synthBinary(t), "release", "--data", data, "--domain", domain, "--marginals", "1",
		"--epsilon", "1", "--rows", "10000000", "--out", out, "--quiet")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tmp := filepath.Join(out, "."+release.SyntheticFile+".tmp-*")
	deadline := time.After(2 * time.Minute)
wait:
	for {
		select {
		case err := <-done:
			t.Fatalf("the release ended (%v) before %s appeared; stderr %q", err, tmp, errb.String())
		case <-deadline:
			cmd.Process.Kill()
			<-done
			t.Fatalf("no %s after 2 minutes", tmp)
		default:
		}
		if m, _ := filepath.Glob(tmp); len(m) > 0 {
			break wait
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	left, _ := filepath.Glob(filepath.Join(out, ".*.tmp-*"))
	if len(left) < 2 { // the user's file and at least the killed release's
		t.Fatalf("after SIGKILL the folder holds %q: want a leftover temporary file to test with", left)
	}

	r := runBinary(t, "", "release", "--data", data, "--domain", domain, "--marginals", "1", "--epsilon", "1", "--out", out)
	if r.code != ExitOK || !strings.Contains(r.stderr, "removed temporary files left in the output folder by an interrupted release") ||
		!strings.Contains(r.stderr, "."+release.SyntheticFile+".tmp-") {
		t.Fatalf("release after a kill: %s\nwant success and a note on the removed leftovers", r)
	}
	wantFiles(t, out, append([]string{".notes.tmp-1"}, release.Outputs...)...)
}

// TestReleaseFailureRemovesMadeFolders: a release that fails after making
// its output folder (bad data: exit 65) removes the folder and the parents
// it made; a folder that existed before stays.
func TestReleaseFailureRemovesMadeFolders(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	base := t.TempDir()
	existing := filepath.Join(base, "existing")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	domain, bad := filepath.Join(badDir, "domain.json"), filepath.Join(badDir, "unknown-category.csv")
	for _, out := range []string{filepath.Join(base, "x", "y", "out"), existing, filepath.Join(existing, "new")} {
		r := runBinary(t, "", "release", "--data", bad, "--domain", domain, "--marginals", "1", "--epsilon", "1", "--out", out)
		if r.code != ExitData {
			t.Errorf("release --out %s of bad data: %s\nwant exit %d", out, r, ExitData)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed release left %s/x (%v)", base, err)
	}
	wantFiles(t, existing)
	if got, _ := os.ReadDir(base); len(got) != 1 {
		t.Errorf("%s holds %d entries, want only existing/", base, len(got))
	}
}
