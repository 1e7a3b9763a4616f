//go:build probe

package release

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/solvers"
)

func TestAdultProbe(t *testing.T) {
	ds, err := datasets.Lookup("adult")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, dom, err := ds.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(1)
	out, err := Run(context.Background(), &Config{Neighbours: solvers.ReplaceOne, Data: data, Domain: dom, Marginals: 3, Epsilon: 1, Delta: 1e-9,
		Out: filepath.Join(dir, "o"), Seed: &seed, Sampling: Balanced}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.2f s, max %.4f", out.Seconds, out.Errors.Max)
}
