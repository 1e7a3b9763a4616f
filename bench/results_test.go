package bench

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// fixture returns results of a small made-up grid: two solver settings, two
// ε, two seeds, one failed run, on adult-reduced (so that the summary shows
// the reference rows).
func fixture() []*Result {
	p, _ := LookupProtocol("adult-reduced")
	sh := &Shape{K: 336000, M: 14955}
	var rs []*Result
	for _, eps := range []float64{0.1, 1} {
		for _, setting := range []string{"tuned", "paper"} {
			for seed := uint64(1); seed <= 2; seed++ {
				pt := &Point{Protocol: p, Solver: "project", Setting: setting, Neighbours: "add-remove", Epsilon: eps, Delta: 1e-9, Seed: seed}
				r := newResult(pt, sh)
				f := 1 / eps
				if setting == "paper" {
					f *= 1.5
				}
				s := float64(seed)
				r.Records, r.Rows = 48842, 48842
				r.MaxError, r.MeanError, r.RMSE, r.P95Error = 0.002*f+1e-4*s, 1.2e-5*f+1e-6*s, 2.5e-5*f, 6e-5*f
				r.DistMaxError, r.DistMeanError = 0.0019*f, 1.1e-5*f
				r.EpsilonSpent, r.Iterations, r.TraceIterations = eps*(1-1e-9), 0, int64(100*eps)+int64(seed)
				r.Seconds, r.ReleaseSeconds, r.CPUSeconds, r.PeakRSSMiB = 2+s/4, 1.9+s/4, 3.1+s/4, 80+s
				r.MeanMarginalL1, r.Model = 0.03*f+0.002*s, "explicit"
				r.Status = StatusOK
				if setting == "paper" && eps == 1 && seed == 2 {
					r = newResult(pt, sh)
					r.Seconds, r.Status = 1800, "timeout after 30m0s"
				}
				rs = append(rs, r)
			}
		}
	}
	return rs
}

func TestResultsRoundTrip(t *testing.T) {
	rs := fixture()
	rs[0].Holdout, rs[0].PopMaxError, rs[0].PopMeanError = 0.2, 0.01, 0.0003
	var b bytes.Buffer
	if err := WriteResults(&b, rs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResults(bytes.NewReader(b.Bytes()), "r.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rs) {
		t.Fatalf("ReadResults: %d rows, want %d", len(got), len(rs))
	}
	for i := range rs {
		if !sameResult(got[i], rs[i]) {
			t.Errorf("row %d: ReadResults(WriteResults(r)) = %+v, want %+v", i, got[i], rs[i])
		}
	}
	// The failed run's unknown measures are empty fields.
	last := strings.Split(strings.TrimSpace(b.String()), "\n")[len(rs)]
	if !strings.Contains(last, ",,,,") || !strings.HasSuffix(last, ",1800,,,,timeout after 30m0s,,,,,,,,,") {
		t.Errorf("failed row = %q, want empty measures", last)
	}
}

// sameResult compares results field by field, NaN equal to NaN.
func sameResult(a, b *Result) bool {
	ra, rb := a.record(), b.record()
	for i := range ra {
		if ra[i] != rb[i] {
			return false
		}
	}
	return true
}

func TestReadResultsErrors(t *testing.T) {
	header := strings.Join(Columns(), ",")
	var b bytes.Buffer
	if err := WriteResults(&b, fixture()[:1]); err != nil {
		t.Fatal(err)
	}
	good := strings.Split(strings.TrimSpace(b.String()), "\n")[1]
	fields := strings.Split(good, ",")
	with := func(col, v string) string {
		f := append([]string(nil), fields...)
		for i, c := range Columns() {
			if c == col {
				f[i] = v
			}
		}
		return strings.Join(f, ",")
	}
	tests := []struct {
		name, in string
		line     int
		column   string
	}{
		{"empty", "", 1, ""},
		{"header", "protocol,dataset\n", 1, ""},
		{"short", header + "\n" + good + "\nadult-reduced,x\n", 3, ""},
		{"float", header + "\n" + with("max_error", "big") + "\n", 2, "max_error"},
		{"nan", header + "\n" + with("rmse", "NaN") + "\n", 2, "rmse"},
		{"int", header + "\n" + with("universe", "-3") + "\n", 2, "universe"},
		{"seed", header + "\n" + good + "\n" + with("seed", "x") + "\n", 3, "seed"},
		{"status", header + "\n" + with("status", "") + "\n", 2, "status"},
		{"ok without error", header + "\n" + with("mean_error", "") + "\n", 2, "mean_error"},
		{"epsilon", header + "\n" + with("epsilon", "0") + "\n", 2, "epsilon"},
		{"quote", header + "\n\"unterminated\n", 2, ""},
	}
	for _, tt := range tests {
		_, err := ReadResults(strings.NewReader(tt.in), "r.csv")
		var re *ResultsError
		if !errors.As(err, &re) {
			t.Errorf("%s: ReadResults error = %v, want a *ResultsError", tt.name, err)
			continue
		}
		if re.File != "r.csv" || re.Line != tt.line || re.Column != tt.column {
			t.Errorf("%s: ReadResults error at %s line %d column %q, want line %d column %q (%v)",
				tt.name, re.File, re.Line, re.Column, tt.line, tt.column, err)
		}
	}
}

func FuzzReadResults(f *testing.F) {
	var b bytes.Buffer
	if err := WriteResults(&b, fixture()); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	f.Add(strings.Join(Columns(), ",") + "\n")
	f.Add(strings.Join(Columns()[:legacyColumns], ",") + "\n" +
		"tiny,nltcs,2-way,65536,480,project,tuned,replace-one,0.5,1e-09,1,0,21574,21574,0.01,0.003,0.004,0.007,0.01,0.003,,,0.5,0,281,0.9,0.8,0.9,64,ok\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		rs, err := ReadResults(strings.NewReader(in), "f.csv")
		if err != nil {
			var re *ResultsError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a *ResultsError", err)
			}
			return
		}
		// What parses writes back to results that parse the same.
		var out bytes.Buffer
		if err := WriteResults(&out, rs); err != nil {
			t.Fatal(err)
		}
		again, err := ReadResults(bytes.NewReader(out.Bytes()), "f.csv")
		if err != nil {
			t.Fatalf("re-reading written results: %v", err)
		}
		for i := range rs {
			if !sameResult(rs[i], again[i]) {
				t.Fatalf("row %d changed in a round trip: %+v vs %+v", i, rs[i], again[i])
			}
		}
	})
}

func TestFmtErr(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0.0256, "0.0256"}, {5.1e-4, "5.1e-4"}, {1.1e-3, "0.0011"}, {0.00912345, "0.00912"},
		{9.44e-5, "9.4e-5"}, {0.3, "0.3"}, {0, "0"}, {math.NaN(), "—"}, {9.96e-4, "1.0e-3"},
	}
	for _, tt := range tests {
		if got := fmtErr(tt.in); got != tt.want {
			t.Errorf("fmtErr(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestReadLegacyResults: a file in the first schema (up to status) and one
// with some of the appended columns parse, the missing fields unknown; a
// header that is not a prefix of the schema from status on is refused.
func TestReadLegacyResults(t *testing.T) {
	rs := fixture()
	var full bytes.Buffer
	if err := WriteResults(&full, rs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(full.String()), "\n")
	cut := func(n int) string {
		var out []string
		for _, l := range lines {
			f := strings.Split(l, ",")
			out = append(out, strings.Join(f[:n], ","))
		}
		return strings.Join(out, "\n") + "\n"
	}
	for _, n := range []int{legacyColumns, legacyColumns + 1} {
		got, err := ReadResults(strings.NewReader(cut(n)), "old.csv")
		if err != nil {
			t.Fatalf("ReadResults(first %d columns) = %v, want no error", n, err)
		}
		if len(got) != len(rs) {
			t.Fatalf("ReadResults(first %d columns): %d rows, want %d", n, len(got), len(rs))
		}
		for i := range rs {
			want := *rs[i]
			if n <= legacyColumns {
				want.MeanMarginalL1 = math.NaN()
			}
			want.Model = ""
			if !sameResult(got[i], &want) {
				t.Errorf("first %d columns, row %d = %+v, want %+v", n, i, got[i], &want)
			}
		}
	}
	for _, in := range []string{cut(legacyColumns - 1), strings.Replace(cut(legacyColumns+1), "mean_marginal_l1", "l1", 1)} {
		var re *ResultsError
		if _, err := ReadResults(strings.NewReader(in), "old.csv"); !errors.As(err, &re) || re.Line != 1 {
			t.Errorf("ReadResults(header %.40q…) = %v, want a header error on line 1", in, err)
		}
	}
}
