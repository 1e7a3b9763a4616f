package bench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestSummaryGolden(t *testing.T) {
	var b bytes.Buffer
	meta := &Meta{Generated: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Command: "synth bench --protocols adult-reduced",
		Machine: "linux/amd64, 2 CPUs", Version: "synth dev"}
	if err := WriteSummary(&b, fixture(), meta); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "summary.golden.md")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("WriteSummary differs from %s (run go test -update after checking):\n--- got\n%s\n--- want\n%s", path, b.String(), want)
	}
	// The facts the golden file must keep.
	for _, w := range []string{
		"| 0.1 | **0.0202** / **1.2e-4** | 0.0301 / 1.8e-4 | 0.0256 / 5.1e-4 |", // tuned beats AIM at 0.1
		"| wall time | 2.38 s | 2.25–2.38 s | 56–112 s |",
		"| project (paper) | 1 | 1/2 |",
		"project (paper) at ε = 1, seed 2: timeout after 30m0s",
		"not private against anyone who knows the seed",
		"![max error against ε](adult-reduced-max-error.svg)",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("summary does not contain %q", w)
		}
	}
}

func TestWritePlots(t *testing.T) {
	dir := t.TempDir()
	files, err := WritePlots(dir, fixture())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"adult-reduced-max-error.svg", "adult-reduced-mean-error.svg", "adult-reduced-seconds.svg"}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("WritePlots = %v, want %v", files, want)
	}
	for _, f := range files {
		checkSVG(t, filepath.Join(dir, f))
	}
	maxPlot := readFile(t, filepath.Join(dir, want[0]))
	for _, w := range []string{"project (tuned)", "project (paper)", "AIM (private-pgm) (reference)", "MWEM (reference)", "0.1", "Liberation Sans',Arial"} {
		if !strings.Contains(maxPlot, w) {
			t.Errorf("max-error plot has no %q", w)
		}
	}
	if secPlot := readFile(t, filepath.Join(dir, want[2])); strings.Contains(secPlot, "reference") {
		t.Errorf("seconds plot shows reference markers; the references have no per-ε times")
	}
}
