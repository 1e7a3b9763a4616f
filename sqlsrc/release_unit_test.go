package sqlsrc_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/sqlsrc"
)

// unitTable is adult-reduced's records (the first n; all for n <= 0) with a
// unit column "who" in front: a heavy tail of rows per unit.
func unitTable(t *testing.T, n int) (domPath string, header []string, recs [][]string) {
	t.Helper()
	ds, err := datasets.Lookup("adult-reduced")
	if err != nil {
		t.Fatal(err)
	}
	csvPath, domPath, err := ds.Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	all, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows := all[1:]
	if n > 0 {
		rows = rows[:n]
	}
	r := rand.New(rand.NewPCG(8, 9))
	units := max(len(rows)/20, 2)
	for _, row := range rows {
		x := r.Float64()
		recs = append(recs, append([]string{fmt.Sprintf("p%05d", int(float64(units)*x*x*x))}, row...))
	}
	return domPath, append([]string{"who"}, all[0]...), recs
}

func writeRecs(t *testing.T, path string, header []string, recs [][]string) {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(header)
	w.WriteAll(recs)
	w.Flush()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseUnitsFromDatabase: with a privacy unit, a release counted in
// PostgreSQL or in the two-shard ClickHouse cluster writes the same
// synthetic rows as the release of the same CSV file with the same seed
// (the engines keep the same rows as the file reader), on both models and
// for a histogram solver.
func TestReleaseUnitsFromDatabase(t *testing.T) {
	domPath, header, recs := unitTable(t, 0)
	dir := t.TempDir()
	file := filepath.Join(dir, "events.csv")
	writeRecs(t, file, header, recs)
	run := func(t *testing.T, name string, set func(*release.Config)) []byte {
		t.Helper()
		seed := uint64(6)
		cfg := &release.Config{Domain: domPath, Marginals: 2, Epsilon: 1, Delta: 1e-9, Seed: &seed, Sampling: release.Balanced,
			PrivacyUnit: "who", MaxRowsPerUnit: 4, Out: filepath.Join(dir, name), Output: release.OutputSettings{Format: release.CSV}}
		set(cfg)
		if _, err := release.Run(context.Background(), cfg, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := os.ReadFile(filepath.Join(cfg.Out, "synthetic.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	type variant struct {
		name  string
		model release.ModelChoice
		sol   string
	}
	variants := []variant{{"project", release.ModelAuto, "project"}, {"project-factored", release.ModelFactored, "project"}, {"mwem", release.ModelAuto, "mwem"}}
	want := map[string][]byte{}
	for _, v := range variants {
		want[v.name] = run(t, "file-"+v.name, func(c *release.Config) {
			c.Data, c.Model, c.Solver = file, v.model, v.sol
			c.Inputs.IgnoreExtraColumns = false
		})
	}
	for name, start := range map[string]func(*testing.T) *sqlsrc.TestEngine{"postgres": sqlsrc.StartPostgresAdult, "clickhouse": sqlsrc.StartClickHouseAdult} {
		t.Run(name, func(t *testing.T) {
			e := start(t)
			e.LoadText(t, "events", header, recs)
			for _, v := range variants {
				got := run(t, name+"-"+v.name, func(c *release.Config) { c.Source, c.Table, c.Model, c.Solver = e.DSN, "events", v.model, v.sol })
				if !bytes.Equal(got, want[v.name]) {
					t.Errorf("%s, %s: the synthetic rows differ from the release of the CSV file", name, v.name)
				}
			}
		})
	}
}

// TestUnitNeighboursInDatabase: the whole-pipeline neighbour test in the
// engines: two tables that differ by one unit of 30 rows (K = 4), counted
// in PostgreSQL and in the ClickHouse cluster with the same seed, give
// identical public files except the documented noisy fields, for every
// solver on both models.
func TestUnitNeighboursInDatabase(t *testing.T) {
	domPath, header, recs := unitTable(t, 400)
	plus := append([][]string(nil), recs...)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 30 {
		row := append([]string{"newcomer"}, recs[(i*37)%len(recs)][1:]...)
		j := r.IntN(len(plus) + 1)
		plus = append(plus[:j], append([][]string{row}, plus[j:]...)...)
	}
	type variant struct {
		solver string
		model  release.ModelChoice
	}
	var variants []variant
	for _, s := range []string{"project", "dpfw", "smd", "dpam", "mwem"} {
		variants = append(variants, variant{s, release.ModelExplicit})
		if s != "dpam" {
			variants = append(variants, variant{s, release.ModelFactored})
		}
	}
	for name, start := range map[string]func(*testing.T) *sqlsrc.TestEngine{"postgres": sqlsrc.StartPostgresAdult, "clickhouse": sqlsrc.StartClickHouseAdult} {
		t.Run(name, func(t *testing.T) {
			e := start(t)
			e.LoadText(t, "a", header, recs)
			e.LoadText(t, "b", header, plus)
			for _, v := range variants {
				t.Run(v.solver+"/"+v.model.String(), func(t *testing.T) {
					files := map[string]map[string]string{}
					for _, table := range []string{"a", "b"} {
						seed := uint64(21)
						cfg := &release.Config{Source: e.DSN, Table: table, Domain: domPath, DomainName: "domain.json", Marginals: 2,
							Epsilon: 1, Delta: 1e-9, Seed: &seed, PrivacyUnit: "who", MaxRowsPerUnit: 4, Solver: v.solver, Model: v.model,
							Out: filepath.Join(t.TempDir(), "out"), Version: "test", Title: "neighbours"}
						if _, err := release.Run(context.Background(), cfg, nil); err != nil {
							t.Fatalf("table %s: %v", table, err)
						}
						pf, err := release.PublicFiles(cfg.Out, true)
						if err != nil {
							t.Fatal(err)
						}
						files[table] = pf
					}
					for k, va := range files["a"] {
						if vb := files["b"][k]; va != vb {
							t.Errorf("%s differs between tables that differ by one unit:\n--- a\n%s\n--- b\n%s", k, va, vb)
						}
						if strings.Contains(va, "newcomer") || strings.Contains(va, "p0") {
							t.Errorf("%s holds a value of the unit column", k)
						}
					}
				})
			}
		})
	}
}
