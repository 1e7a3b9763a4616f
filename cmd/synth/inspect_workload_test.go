package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsynth/synth/release"
)

func TestInspectWorkload(t *testing.T) {
	_, domain := extract(t, "adult-reduced")
	code, out, errs := run(t, "inspect", "--domain", domain, "--marginals", "3")
	if code != ExitOK {
		t.Fatalf("inspect --marginals 3: exit %d, stderr %q", code, errs)
	}
	for _, w := range []string{"queries (m): 14,955\n", "marginal sets: 35 ", "education, occupation, age              2400"} {
		if !strings.Contains(out, w) {
			t.Errorf("inspect --marginals 3 output does not contain %q:\n%s", w, out)
		}
	}
	code, _, errs = run(t, "inspect", "--domain", domain, "--marginals", "8")
	if code != ExitData || !strings.Contains(errs, "k") {
		t.Errorf("inspect --marginals 8 on 7 attributes: exit %d, stderr %q; want %d", code, errs, ExitData)
	}
	code, _, _ = run(t, "inspect", "--domain", domain, "--marginals", "2", "--workload", "w.json")
	if code != ExitUsage {
		t.Errorf("inspect with --workload and --marginals: exit %d, want %d", code, ExitUsage)
	}
}

// TestInspectEstimate: with a workload, inspect prints the same model and
// peak memory estimate as synth release --dry-run, for the solver, model
// and caps given; an estimate over the cap is reported, not an error.
func TestInspectEstimate(t *testing.T) {
	_, domain := extract(t, "adult-reduced")
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"release estimate (solver project, --model auto, --memory-cap 4.0 GiB", "model: explicit (auto: the universe has 336,000 cells", "estimated peak memory: 46.7 MiB", "the workload's 14,955 answers and the report: 584.2 KiB"}},
		{[]string{"--solver", "dpam"}, []string{"model: explicit", "dpam's vectors over the 336,000-cell universe"}},
		{[]string{"--model", "factored"}, []string{"model: factored (--model factored)", "junction tree"}},
		{[]string{"--model", "explicit", "--memory-cap", "10MiB"}, []string{"refused: the explicit model of project over 336,000 cells", "synth release would exit 78"}},
	} {
		args := append([]string{"inspect", "--domain", domain, "--marginals", "3"}, tt.args...)
		code, out, errs := run(t, args...)
		if code != ExitOK {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errs)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: output does not contain %q:\n%s", args, w, out)
			}
		}
		if tt.args != nil {
			continue
		}
		// The dry run of the same release states the same estimate.
		r := inProcess(t, "release", "--dry-run", "--json", "--data", fifo(t), "--domain", domain, "--marginals", "3", "--epsilon", "1", "--out", "out")
		var p release.Preview
		jsonLine(t, r.stdout, &p)
		if r.code != ExitOK || p.Memory.Text == "" || !strings.Contains(out, p.Memory.Text) {
			t.Errorf("dry run: %s\nits estimate %q is not in inspect's output:\n%s", r, p.Memory.Text, out)
		}
	}
}

// TestInspectPrivacyUnit: --privacy-unit prints the rows per unit and what
// each K keeps, marked internal, and never a value of the unit column.
func TestInspectPrivacyUnit(t *testing.T) {
	dir := t.TempDir()
	dom := filepath.Join(dir, "d.json")
	if err := os.WriteFile(dom, []byte(`{"attributes": [{"name": "g", "type": "categorical", "values": ["a", "b"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("who,g\n")
	for u, rows := range []int{1, 1, 2, 3, 9} { // 16 rows of 5 units
		for i := range rows {
			fmt.Fprintf(&b, "person-%d,%s\n", u, []string{"a", "b"}[i%2])
		}
	}
	data := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := inProcess(t, "inspect", "--domain", dom, "--data", data, "--privacy-unit", "who")
	for _, w := range []string{"internal, not DP", "units: 5\n", "rows per unit: min 1, median 2, p90 9, p99 9, max 9 (mean 3.2)",
		"   1      31.2%            60.0%", "  16     100.0%             0.0%"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("inspect --privacy-unit: stdout does not contain %q:\n%s", w, r.stdout)
		}
	}
	if r.code != ExitOK || strings.Contains(r.stdout+r.stderr, "person-") {
		t.Errorf("inspect --privacy-unit: %s\nwant exit 0 and no unit value", r)
	}
	r = inProcess(t, "inspect", "--domain", dom, "--data", data, "--privacy-unit", "who", "--max-rows-per-unit", "2")
	if !strings.Contains(r.stdout, "with --max-rows-per-unit 2: 8 rows kept, 8 dropped") || !strings.Contains(r.stdout, "n: 8\n") {
		t.Errorf("inspect --max-rows-per-unit 2: %s", r)
	}
	for _, args := range [][]string{{"--privacy-unit", "who"}, {"--data", data, "--max-rows-per-unit", "2"}} {
		if r := inProcess(t, append([]string{"inspect", "--domain", dom}, args...)...); r.code != ExitUsage {
			t.Errorf("inspect %v: exit %d, want %d", args, r.code, ExitUsage)
		}
	}
}
