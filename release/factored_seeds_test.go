package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// TestFactoredSeedReleases: mwem, dpfw and smd release end to end on the
// factored model (the manifest names the model and its cliques, the rows
// and the report are written), and dpam is refused on it with a
// ConfigError (exit 2) that says why, before anything is read.
func TestFactoredSeedReleases(t *testing.T) {
	dir := t.TempDir()
	data, dom := writeNbFiles(t, dir, nbRows(400, 5))
	for _, s := range []string{"mwem", "dpfw", "smd"} {
		t.Run(s, func(t *testing.T) {
			seed := uint64(4)
			cfg := &Config{Neighbours: solvers.ReplaceOne, Data: data, Domain: dom, Epsilon: 1, Delta: 1e-9, Marginals: 2, Solver: s, Model: ModelFactored,
				Out: filepath.Join(dir, s), Seed: &seed}
			o, err := Run(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if o.Model != "factored" || o.Rows != 400 || o.Errors == nil || !(o.Errors.Max < 0.5) {
				t.Errorf("outcome: model %s, %d rows, errors %+v; want factored, 400 rows, a max error", o.Model, o.Rows, o.Errors)
			}
			t.Logf("%s factored: max error %.3f, mean %.4f", s, o.Errors.Max, o.Errors.Mean)
			b, err := os.ReadFile(filepath.Join(o.Dir, ManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParseManifest(b)
			if err != nil {
				t.Fatal(err)
			}
			if m.Solver.Name != s || m.Solver.Model != "factored" || len(m.Solver.Cliques) == 0 {
				t.Errorf("manifest solver %+v: want %s on the factored model with its cliques", m.Solver, s)
			}
		})
	}
	seed := uint64(4)
	cfg := &Config{Neighbours: solvers.ReplaceOne, Data: data, Domain: dom, Epsilon: 1, Delta: 1e-9, Marginals: 2, Solver: "dpam", Model: ModelFactored,
		Out: filepath.Join(dir, "dpam"), Seed: &seed}
	_, err := Run(context.Background(), cfg, nil)
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "dpam needs the full noisy histogram") {
		t.Errorf("dpam --model factored: err = %v, want a ConfigError about the full noisy histogram", err)
	}
	if _, err := os.Stat(cfg.Out); !os.IsNotExist(err) {
		t.Errorf("dpam refused, yet the output folder exists (%v)", err)
	}
}

// TestRouteSeedSolvers: --model auto gives the seed solvers the factored
// model beyond AutoExplicitCells, and the estimate counts their model
// copies and workload vectors.
func TestRouteSeedSolvers(t *testing.T) {
	dom, wl := adultDomainWorkload(t)
	for _, s := range []string{"mwem", "dpfw", "smd"} {
		est, err := Route(&Config{}, dom, wl, s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if est.Model != solvers.Factored {
			t.Errorf("%s on full ADULT, auto: model %v, want factored", s, est.Model)
		}
	}
	if _, err := Route(&Config{}, dom, wl, "dpam"); err == nil {
		t.Errorf("dpam on full ADULT, auto: no refusal")
	}
}

// adultDomainWorkload is full ADULT's domain (6.4·10^17 cells) with its
// 2-way marginals.
func adultDomainWorkload(t *testing.T) (*universe.Domain, *query.Workload) {
	t.Helper()
	ds, err := datasets.Lookup("adult")
	if err != nil {
		t.Fatal(err)
	}
	src, err := datasets.ReadFile(ds.Domain)
	if err != nil {
		t.Fatal(err)
	}
	dom, err := universe.ParseDomain(src)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := query.KWay(dom, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dom, wl
}

// TestSMDRecordMemoryRefused: smd's per-record tables are sized once the
// data is read; a memory cap that holds the estimate but not them refuses
// the release with a MemoryError (exit 78) before any private step, and
// nothing is released.
func TestSMDRecordMemoryRefused(t *testing.T) {
	dir := t.TempDir()
	data, dom := writeNbFiles(t, dir, nbRows(400, 5))
	seed := uint64(4)
	cfg := &Config{Neighbours: solvers.ReplaceOne, Data: data, Domain: dom, Epsilon: 1, Delta: 1e-9, Marginals: 2, Solver: "smd", Model: ModelFactored,
		Out: filepath.Join(dir, "out"), Seed: &seed}
	p, err := DryRun(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MemoryCap = p.Memory.PeakBytes + 1000 // the estimate fits, the per-record tables do not
	_, err = Run(context.Background(), cfg, nil)
	var me *MemoryError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "per-record tables") {
		t.Fatalf("Run with the cap %d = %v, want a MemoryError on smd's per-record tables", cfg.MemoryCap, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", ManifestFile)); err == nil {
		t.Errorf("a refused release left a manifest")
	}
	cfg.MemoryCap = p.Memory.PeakBytes + 10<<20
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Errorf("Run with room for the per-record tables: %v", err)
	}
}
