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

// pinRefs sets protocol name's references for the test, so that golden
// files do not follow the measured references of refs/pgm.csv.
func pinRefs(t *testing.T, name string, refs []Reference, note string) {
	p, err := LookupProtocol(name)
	if err != nil {
		t.Fatal(err)
	}
	saved, savedNote, savedVs := p.References, p.ReferenceNote, p.Versus
	p.References, p.ReferenceNote, p.Versus = refs, note, "AIM (private-pgm)"
	t.Cleanup(func() { p.References, p.ReferenceNote, p.Versus = saved, savedNote, savedVs })
}

// measuredAdultRefs are adultRefs as if measured here (one run each).
func measuredAdultRefs() []Reference {
	var refs []Reference
	for _, r := range adultRefs {
		r.Points = append([]RefPoint(nil), r.Points...)
		for i := range r.Points {
			r.Points[i].Runs = 1
			if r.Points[i].Epsilon == 0.5 {
				// Four runs with their spread: the suite's table gives
				// the ratios' intervals at this ε only.
				r.Points[i].Runs, r.Points[i].MaxSD, r.Points[i].L1SD = 4, 0.002, 0.01
			}
		}
		refs = append(refs, r)
	}
	return refs
}

func TestSummaryGolden(t *testing.T) {
	pinRefs(t, "adult-reduced", adultReducedRefs, adultReducedRefNote)
	pinRefs(t, "adult", measuredAdultRefs(), adultRefNote)
	var b bytes.Buffer
	meta := &Meta{Generated: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Command: "synth bench --protocols adult-reduced",
		Machine: "linux/amd64, 2 CPUs", Version: "synth dev"}
	if err := WriteSummary(&b, append(fixture(), adultFixture()...), meta); err != nil {
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
		"| 0.1 | **0.0202** / **1.2e-4** / **0.303** | 0.0301 / 1.8e-4 / 0.453 | 0.0256 / 5.1e-4 / — |", // tuned beats AIM at 0.1
		"| wall time | 2.38 s | 2.25–2.38 s | 56–112 s |",
		"| project (paper) | 1 | 1/2 |",
		"project (paper) at ε = 1, seed 2: timeout after 30m0s",
		"not private against anyone who knows the seed",
		"![max error against ε](adult-reduced-max-error.svg)",
		"![mean marginal L1 against ε](adult-reduced-marginal-l1.svg)",
		// adult: the universe, the references' L1, the comparison with AIM.
		"641,263,392,000,000,000 (6.4e17) cells",
		"| 0.1 | **0.05** / **4.0e-5** / **0.39** | 0.0663 / — / 0.404 | 0.0866 / — / 0.507 |",
		"### synth against AIM (private-pgm)",
		"| project (tuned) | 0.1 | 0.05 / 0.0663 | 0.39 / 0.404 | yes | 6.7× | 20 s | 901 |",
		"| project (tuned) | 0.5 | 0.025 / 0.0199 | 0.2 / 0.211 | no (above on max) |",
		"| project (tuned) | 1 | 0.015 / 0.0206 | 0.2 / 0.184 | no (above on L1) |",
		"project (tuned) is at or below AIM (private-pgm) on both max error and mean marginal L1 at 1 of 3 ε",
		"| factored |",
		// The suite's table: adult against the best of AIM and MST.
		"## The accuracy suite: project (tuned) against AIM and MST",
		"| adult | 0.1 | 0.05 / 0.39 | 20 | 0.0663 / 0.404 | 134 | 0.0866 / 0.507 | **0.75** | 0.97 | 7× |",
		"| adult | 0.5 | 0.025 / 0.2 | 20 | 0.0199 / 0.211 | 199 | 0.0293 / 0.263 | 1.26 (1.15–1.37) | **0.95** (0.91–0.99) | 10× |",
		"above the bar on max error at 1 of 3 points (1 with the whole interval above it), on L1 at 2 (0); AIM's time under 20× synth's at 3 (lowest 7×)",
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
	want := []string{"adult-reduced-max-error.svg", "adult-reduced-mean-error.svg", "adult-reduced-marginal-l1.svg", "adult-reduced-seconds.svg"}
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
	if secPlot := readFile(t, filepath.Join(dir, want[3])); strings.Contains(secPlot, "reference") {
		t.Errorf("seconds plot shows reference markers; the references have no per-ε times")
	}
}

// adultFixture returns made-up results of project on the adult protocol,
// 2 seeds per ε: at or below AIM on both measures at ε = 0.1, above on max
// error at 0.5 and on L1 at 1.
func adultFixture() []*Result {
	p, _ := LookupProtocol("adult")
	sh := &Shape{K: 641263392000000000, M: 20894536}
	var rs []*Result
	for _, e := range []struct{ eps, max, l1 float64 }{{0.1, 0.05, 0.39}, {0.5, 0.025, 0.2}, {1, 0.015, 0.2}} {
		for seed := uint64(1); seed <= 2; seed++ {
			pt := &Point{Protocol: p, Solver: "project", Setting: "tuned", Neighbours: "add-remove", Epsilon: e.eps, Delta: 1e-9, Seed: seed}
			r := newResult(pt, sh)
			d := 0.001 * (float64(seed) - 1.5) // the mean over the two seeds is exact
			r.Records, r.Rows = 48842, 48842
			r.MaxError, r.MeanError, r.RMSE, r.P95Error = e.max+d, 4e-5, 1e-4, 2e-4
			r.MeanMarginalL1, r.Model = e.l1+d, "factored"
			r.EpsilonSpent, r.Iterations, r.TraceIterations = e.eps, 20, 400
			r.Seconds, r.ReleaseSeconds, r.CPUSeconds, r.PeakRSSMiB = 20+float64(seed)-1.5, 19, 30, 899+float64(seed)
			r.Status = StatusOK
			rs = append(rs, r)
		}
	}
	return rs
}

// TestSummarySuiteGroups checks that a table's 2-way protocol is compared
// in the 2-way suite table and its 3-way protocol in the suite's, each with
// its own references.
func TestSummarySuiteGroups(t *testing.T) {
	ref := func(max, l1 float64) []Reference {
		return []Reference{{Method: pgmMethods["aim"], Points: []RefPoint{{Epsilon: 1, Max: max, L1: l1, Seconds: 100, Runs: 1}}}}
	}
	pinRefs(t, "wvs", ref(0.02, 0.1), "")
	pinRefs(t, "wvs-2way", ref(0.01, 0.04), "")
	var rs []*Result
	for _, name := range []string{"wvs", "wvs-2way"} {
		p, err := LookupProtocol(name)
		if err != nil {
			t.Fatal(err)
		}
		pt := &Point{Protocol: p, Solver: "project", Setting: "tuned", Neighbours: "add-remove", Epsilon: 1, Delta: 1e-9, Seed: 1}
		r := newResult(pt, &Shape{K: 1632, M: 100})
		r.Records, r.Rows, r.MaxError, r.MeanMarginalL1, r.Seconds, r.ReleaseSeconds = 5381, 5381, 0.01, 0.05, 1, 1
		r.Status, r.Model = StatusOK, "explicit"
		rs = append(rs, r)
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, rs, &Meta{Command: "synth bench"}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	three := strings.Index(s, "## The accuracy suite: project (tuned) against AIM and MST")
	two := strings.Index(s, "## The accuracy suite's tables on their 2-way marginals: project (tuned) against AIM and MST")
	if three < 0 || two < three {
		t.Fatalf("summary has the suite's table at %d and the 2-way table at %d, want both, the suite's first:\n%s", three, two, s)
	}
	for _, w := range []struct{ row, table string }{
		{"| wvs | 1 | 0.01 / 0.05 | 1 | 0.02 / 0.1 | 100 | — | **0.50** | **0.50** | 100× |", s[three:two]},
		{"| wvs-2way | 1 | 0.01 / 0.05 | 1 | 0.01 / 0.04 | 100 | — | **1.00** | 1.25 | 100× |", s[two:]},
	} {
		if !strings.Contains(w.table, w.row) {
			t.Errorf("table does not contain %q:\n%s", w.row, w.table)
		}
	}
}

// TestRefWall checks that the headline's reference wall time covers the
// grid's ε only.
func TestRefWall(t *testing.T) {
	r := &Reference{Wall: "1–500 s", Points: []RefPoint{
		{Epsilon: 0.05, Seconds: 500}, {Epsilon: 0.1, Seconds: 40}, {Epsilon: 1, Seconds: 90}, {Epsilon: 5, Seconds: 1},
	}}
	tests := []struct {
		eps  []float64
		want string
	}{
		{[]float64{0.1, 0.5, 1}, "40–90 s"},
		{[]float64{0.1}, "40–40 s"},
		{[]float64{2}, "1–500 s"}, // no measured point on the grid: the reported range
	}
	for _, tt := range tests {
		if got := refWall(r, tt.eps); got != tt.want {
			t.Errorf("refWall(%v) = %q, want %q", tt.eps, got, tt.want)
		}
	}
}
