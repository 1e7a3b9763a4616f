package release

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/solvers"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func f64(x float64) *float64 { return &x }

func testManifest() *Manifest {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	return &Manifest{
		Schema:   ManifestSchema,
		Tool:     ToolInfo{Name: "synth", Version: "v0.0.0-test", Commit: "0123abc"},
		Started:  Timestamp(start),
		Finished: Timestamp(start.Add(4 * time.Second)),
		Solver:   SolverInfo{Name: "dpfw", Setting: "tuned", Iterations: 2},
		Privacy: PrivacyInfo{
			Neighbouring: "replace-one (n public)",
			Accounting:   "zCDP",
			Budget:       Budget{Epsilon: 1, Delta: 1e-9},
			Charges: []Charge{
				{Label: "selection 1/2 (exponential mechanism)", Rho: f64(0.002)},
				{Label: "selection 2/2 (exponential mechanism)", Rho: f64(0.002)},
				{Label: "measurement (Gaussian)", Rho: f64(0.0004), Epsilon: f64(0.5), Delta: f64(1e-10)},
			},
			Total: Total{Rho: f64(0.0044), Epsilon: 0.9876, Delta: 1e-9},
		},
		Randomness: SeededRandomness(),
		Inputs: []InputFile{
			{Role: "domain", Path: "adult-domain.json", SHA256: strings.Repeat("ab", 32)},
			{Role: "workload", Path: "3way.json", SHA256: strings.Repeat("0f", 32)},
		},
		Output: OutputInfo{Rows: 48842, Sampling: Systematic.String(), IntegerValues: Point.String(),
			NumericValues: Uniform.String(), Files: Outputs},
		Warnings: []string{"seeded run: <not private>"},
	}
}

func TestManifestGolden(t *testing.T) {
	got, err := testManifest().JSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "manifest.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("manifest JSON differs from %s (run go test -update after checking):\n%s", path, got)
	}
	// It parses back to the same manifest.
	m, err := ParseManifest(got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, testManifest()) {
		t.Errorf("ParseManifest(JSON(m)) = %+v, want %+v", m, testManifest())
	}
}

func TestManifestTimestampUTC(t *testing.T) {
	if got, want := testManifest().Started, "2026-01-02T02:04:05Z"; got != want {
		t.Errorf("Timestamp = %q, want %q", got, want)
	}
}

func TestManifestEmptyLists(t *testing.T) {
	m := testManifest()
	m.Warnings, m.Inputs, m.Privacy.Charges = nil, nil, nil
	b, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"warnings": []`, `"inputs": []`, `"charges": []`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
}

func TestManifestValidate(t *testing.T) {
	cases := []struct {
		name   string
		modify func(*Manifest)
		want   string
	}{
		{"schema", func(m *Manifest) { m.Schema = "v0" }, "schema"},
		{"local time", func(m *Manifest) { m.Started = "2026-01-02T03:04:05+01:00" }, "UTC"},
		{"bad time", func(m *Manifest) { m.Finished = "yesterday" }, "RFC 3339"},
		{"order", func(m *Manifest) { m.Started, m.Finished = m.Finished, m.Started }, "before started"},
		{"source", func(m *Manifest) { m.Randomness = Randomness{Source: "time"} }, "randomness source"},
		{"seeded note", func(m *Manifest) { m.Randomness.Note = "" }, "note"},
		{"charge cost", func(m *Manifest) { m.Privacy.Charges[0].Rho = nil }, "neither rho nor epsilon"},
		{"negative", func(m *Manifest) { m.Privacy.Charges[1].Rho = f64(-1) }, "non-negative"},
		{"total", func(m *Manifest) { m.Privacy.Total.Epsilon = f64nan() }, "total epsilon"},
		{"hash", func(m *Manifest) { m.Inputs[0].SHA256 = "abc" }, "64 hex"},
		{"neighbours", func(m *Manifest) { m.Privacy.Neighbouring = "" }, "neighbouring"},
		{"rows", func(m *Manifest) { m.Output.Rows = -1 }, "row count"},
	}
	for _, c := range cases {
		m := testManifest()
		c.modify(m)
		_, err := m.JSON()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: JSON() error = %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	if err := (&Manifest{}).Validate(); err == nil {
		t.Error("zero Manifest validates")
	}
}

func f64nan() float64 { var z float64; return z / z }

func TestHashFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.json")
	os.WriteFile(path, []byte("abc"), 0o644)
	got, err := HashFile(path)
	if want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; err != nil || got != want {
		t.Errorf("HashFile(abc) = %q, %v, want %q", got, err, want)
	}
	if _, err := HashFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("HashFile(missing): no error")
	}
}

func TestParseManifestErrors(t *testing.T) {
	good, _ := testManifest().JSON()
	for _, bad := range []string{
		``, `[]`, `{"schema": "synth.manifest/v1", "extra": 1}`,
		string(good) + `{}`,
		strings.Replace(string(good), `"rows": 48842`, `"rows": "many"`, 1),
	} {
		if _, err := ParseManifest([]byte(bad)); err == nil {
			t.Errorf("ParseManifest(%.40q): no error", bad)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	good, _ := testManifest().JSON()
	f.Add(good)
	f.Add([]byte(`{"schema": "synth.manifest/v1"}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		// A manifest that parses writes and parses back identically.
		b, err := m.JSON()
		if err != nil {
			t.Fatalf("parsed manifest does not write: %v", err)
		}
		m2, err := ParseManifest(b)
		if err != nil {
			t.Fatalf("written manifest does not parse: %v", err)
		}
		b2, _ := m2.JSON()
		if !bytes.Equal(b, b2) {
			t.Fatalf("round trip differs:\n%s\n%s", b, b2)
		}
	})
}

// TestExactAccounting checks that the accounting is read from the charges'
// marker, not from their labels.
func TestExactAccounting(t *testing.T) {
	label := "project: " + solvers.ExactChargePrefix + " the tables"
	tests := []struct {
		name string
		c    privacy.Charge
		want bool
	}{
		{"marked", privacy.Charge{Label: "tables", Cost: privacy.ApproxCost(1, 1e-9), Exact: true}, true},
		{"label only", privacy.Charge{Label: label, Cost: privacy.ApproxCost(1, 1e-9)}, false},
		{"zcdp", privacy.Charge{Label: "tables", Cost: privacy.ZCDPCost(0.01)}, false},
	}
	for _, tt := range tests {
		l, err := privacy.NewLedger(privacy.Budget{Eps: 1, Delta: 1e-9}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Charge(tt.c); err != nil {
			t.Fatal(err)
		}
		if got := exactAccounting(l); got != tt.want {
			t.Errorf("%s: exactAccounting = %v, want %v", tt.name, got, tt.want)
		}
	}
}
