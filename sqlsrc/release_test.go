package sqlsrc_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/sqlsrc"
)

// TestReleaseFromDatabase: a release counted in PostgreSQL, and one counted
// in the two-shard ClickHouse cluster, each holding adult-reduced, equal the
// release from the CSV file with the same seed — the same synthetic rows —
// for the default solver (measurements from the engine's marginal tables,
// or its histogram on the explicit model) and a full-histogram solver.
func TestReleaseFromDatabase(t *testing.T) {
	engines := map[string]func(*testing.T) *sqlsrc.TestEngine{
		"postgres":   sqlsrc.StartPostgresAdult,
		"clickhouse": sqlsrc.StartClickHouseAdult,
	}
	ds, err := datasets.Lookup("adult-reduced")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	csvPath, domPath, err := ds.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, name string, set func(*release.Config)) []byte {
		t.Helper()
		seed := uint64(5)
		cfg := &release.Config{Neighbours: solvers.ReplaceOne, Domain: domPath, Marginals: 2, Epsilon: 1, Delta: 1e-9, Seed: &seed,
			Sampling: release.Balanced, Out: filepath.Join(dir, name), Output: release.OutputSettings{Format: release.CSV}}
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
		want[v.name] = run(t, "file-"+v.name, func(c *release.Config) { c.Data = csvPath; c.Model = v.model; c.Solver = v.sol })
	}
	for name, start := range engines {
		t.Run(name, func(t *testing.T) {
			e := start(t)
			for _, v := range variants {
				got := run(t, name+"-"+v.name, func(c *release.Config) {
					c.Source, c.Table, c.Model, c.Solver = e.DSN, "adult", v.model, v.sol
				})
				if !bytes.Equal(got, want[v.name]) {
					t.Errorf("%s, %s: the synthetic rows differ from the release of the CSV file", name, v.name)
				}
			}
		})
	}
}
