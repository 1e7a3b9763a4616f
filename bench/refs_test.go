package bench

import (
	"math"
	"strings"
	"testing"
)

func TestParseRefsErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"fields", "adult,aim,1,1,0.1,0.2,30\n", "7 fields, want 8"},
		{"method", "adult,gem,1,1,0.1,0.2,30,100\n", `unknown method "gem"`},
		{"number", "adult,aim,1,1,zero,0.2,30,100\n", "line 1"},
		{"ε NaN", "adult,mst,NaN,1,0.1,0.2,30,100\n", `ε "NaN" is not a positive number`},
		{"ε 0", "adult,aim,1,1,0.1,0.2,30,100\nadult,aim,0,1,0.1,0.2,30,100\n", "line 2: ε"},
		{"ε Inf", "adult,aim,+Inf,1,0.1,0.2,30,100\n", "not a positive number"},
	}
	for _, tt := range tests {
		_, err := parseRefs([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: parseRefs(%q) error = %v, want one containing %q", tt.name, tt.in, err, tt.want)
		}
	}
}

func TestMeasuredRefs(t *testing.T) {
	runs, err := parseRefs([]byte(`p,aim,1,1,0.1,0.4,10,100
p,aim,1,2,0.3,0.2,30,100
p,aim,0.1,1,NaN,NaN,3600,NaN
p,mst,1,1,0.2,0.5,5,90
q,aim,1,1,9,9,9,9
`))
	if err != nil {
		t.Fatal(err)
	}
	refs := measuredRefs(runs, "p")
	if len(refs) != 2 || refs[0].Method != "AIM (private-pgm)" || refs[1].Method != "MST (private-pgm)" {
		t.Fatalf("measuredRefs = %+v, want AIM then MST", refs)
	}
	aim := refs[0]
	if len(aim.Points) != 2 || aim.Points[0].Epsilon != 0.1 || aim.Points[1].Epsilon != 1 {
		t.Fatalf("AIM points = %+v, want ε 0.1 then 1", aim.Points)
	}
	if p := aim.Points[0]; p.Runs != 0 || !math.IsNaN(p.Max) || !math.IsNaN(p.L1) || !math.IsNaN(p.Seconds) {
		t.Errorf("AIM at ε = 0.1 (only a stopped run) = %+v, want NaN figures and no runs", p)
	}
	if p := aim.Points[1]; p.Runs != 2 || math.Abs(p.Max-0.2) > 1e-12 || math.Abs(p.L1-0.3) > 1e-12 || p.Seconds != 20 {
		t.Errorf("AIM at ε = 1 = %+v, want the mean of two runs: max 0.2, L1 0.3, 20 s", p)
	}
	if aim.Wall != "20–20 s" {
		t.Errorf("AIM wall = %q, want the finished points' range", aim.Wall)
	}
	if got := measuredRefs(runs, "r"); got != nil {
		t.Errorf("measuredRefs(r) = %+v, want none", got)
	}
}

// TestEmbeddedRefs checks refs/pgm.csv: it parses, and names only
// protocols of the suite.
func TestEmbeddedRefs(t *testing.T) {
	runs, err := parseRefs(pgmCSV)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if _, err := LookupProtocol(r.protocol); err != nil {
			t.Errorf("refs/pgm.csv: %v", err)
		}
	}
}

// FuzzParseRefs: parseRefs never panics, and what it accepts averages into
// references without panicking either.
func FuzzParseRefs(f *testing.F) {
	f.Add([]byte("adult,aim,1,1,0.1,0.2,30,100\n"))
	f.Add([]byte("p,mst,0.5,2,NaN,NaN,3600,NaN\np,aim,0.5,1,0.1,0.2,3,4\n"))
	f.Add([]byte("a,b\n\"x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		runs, err := parseRefs(b)
		if err != nil {
			return
		}
		for _, r := range runs {
			measuredRefs(runs, r.protocol)
		}
	})
}
