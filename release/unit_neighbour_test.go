package release

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The whole-pipeline neighbour test for privacy units: two event tables
// that differ by one whole unit with many rows (more than K), whose rows are
// spread over the file or over part files, released with the same seed,
// must give identical public files except for the documented noisy fields
// (PublicFiles), for every solver and both models.

// unitRow is a row of the unit tables: the unit, then a, b, c, d.
type unitRow struct {
	unit string
	row  nbRow
}

// unitRows draws units with 1..max rows each (a heavy tail: a few units
// hold many rows).
func unitRows(units, maxRows int, seed uint64) []unitRow {
	r := rand.New(rand.NewPCG(seed, 11))
	var out []unitRow
	for u := range units {
		n := 1 + int(float64(maxRows)*r.Float64()*r.Float64()*r.Float64())
		for _, row := range nbRows(n, seed*1000+uint64(u)) {
			out = append(out, unitRow{fmt.Sprintf("user-%03d", u), row})
		}
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// withUnit returns rows plus a new unit of n rows inserted at random
// positions (spread over the whole file).
func withUnit(rows []unitRow, unit string, n int, seed uint64) []unitRow {
	r := rand.New(rand.NewPCG(seed, 13))
	out := append([]unitRow(nil), rows...)
	for _, row := range nbRows(n, seed) {
		i := r.IntN(len(out) + 1)
		out = append(out[:i], append([]unitRow{{unit, row}}, out[i:]...)...)
	}
	return out
}

// writeUnitData writes rows as CSV (header user,a,b,c,d): one file, or parts
// part files cut at equal row counts, in a folder.
func writeUnitData(t *testing.T, dir string, rows []unitRow, parts int) string {
	t.Helper()
	line := func(b *strings.Builder, r unitRow) {
		b.WriteString(r.unit + "," + strings.Join(r.row[:], ",") + "\n")
	}
	if parts <= 1 {
		var b strings.Builder
		b.WriteString("user,a,b,c,d\n")
		for _, r := range rows {
			line(&b, r)
		}
		path := filepath.Join(dir, "data.csv")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	folder := filepath.Join(dir, "data")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for p := range parts {
		var b strings.Builder
		b.WriteString("user,a,b,c,d\n")
		for _, r := range rows[p*len(rows)/parts : (p+1)*len(rows)/parts] {
			line(&b, r)
		}
		if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("part-%05d.csv", p)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return folder
}

// unitRun releases rows with the privacy unit "user" and returns the public
// files, or the error.
func unitRun(t *testing.T, dir string, rows []unitRow, parts int, set func(*Config)) (map[string]string, error) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := writeUnitData(t, dir, rows, parts)
	dom := filepath.Join(filepath.Dir(dir), "domain.json")
	if err := os.WriteFile(dom, []byte(nbDomain), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := uint64(17)
	cfg := &Config{
		Data: data, Domain: dom, Epsilon: 1, Delta: 1e-9, Marginals: 2, Out: filepath.Join(dir, "out"),
		Seed: &seed, Sampling: Balanced, PrivacyUnit: "user", MaxRowsPerUnit: 4,
		DataName: "data", DomainName: "domain.json", Version: "test",
	}
	set(cfg)
	if _, err := Run(t.Context(), cfg, nil); err != nil {
		return nil, err
	}
	return publicArtefacts(t, cfg), nil
}

func TestUnitNeighbourPublicFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs about 30 releases")
	}
	base := unitRows(60, 20, 1)
	// The added unit has 25 rows (K = 4), spread over the whole file.
	plus := withUnit(base, "user-new", 25, 2)
	type unitCase struct {
		name  string
		parts int
		cfg   func(*Config)
	}
	var cases []unitCase
	for _, s := range []string{"project", "dpfw", "smd", "dpam", "mwem"} {
		solver := func(c *Config) { c.Solver = s }
		cases = append(cases, unitCase{s, 1, solver})
		if s != "dpam" {
			cases = append(cases, unitCase{s + "/factored", 1, func(c *Config) { solver(c); c.Model = ModelFactored }})
		}
	}
	cases = append(cases,
		unitCase{"project/parts", 3, func(*Config) {}},
		unitCase{"project/3-way", 2, func(c *Config) { c.Marginals = 3 }},
		unitCase{"project/public-report", 1, func(c *Config) { c.PublicReport = true }},
		unitCase{"project/paper", 1, func(c *Config) { c.Setting = "paper" }},
		unitCase{"project/K1", 1, func(c *Config) { c.MaxRowsPerUnit = 1 }},
		unitCase{"mwem/paper/pure", 1, func(c *Config) { c.Solver = "mwem"; c.Setting = "paper"; c.Delta = 0 }},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ga, errA := unitRun(t, filepath.Join(dir, "a"), base, c.parts, c.cfg)
			gb, errB := unitRun(t, filepath.Join(dir, "b"), plus, c.parts, c.cfg)
			if errA != nil || errB != nil {
				t.Fatalf("releases: %v / %v", errA, errB)
			}
			for k := range ga {
				if ga[k] != gb[k] {
					t.Errorf("%s differs between tables that differ by one unit:\n--- without\n%s\n--- with\n%s", k, ga[k], gb[k])
				}
			}
			if len(ga) != len(gb) {
				t.Errorf("public files %d vs %d", len(ga), len(gb))
			}
			for k, v := range gb {
				if strings.Contains(v, "user-") {
					t.Errorf("%s holds a value of the unit column", k)
				}
			}
		})
	}
}
