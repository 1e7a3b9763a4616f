package release_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/dpsynth/synth/release"
)

// ExampleDryRun plans a release of all 2-way marginals of the raw test
// table: the data file is named (and must exist) but is never opened.
func ExampleDryRun() {
	raw := filepath.Join("..", "ingest", "testdata", "raw")
	p, err := release.DryRun(context.Background(), &release.Config{
		Data: filepath.Join(raw, "adult-raw.csv"), Domain: filepath.Join(raw, "adult-raw-domain.json"),
		Marginals: 2, Epsilon: 1, Delta: 1e-9, Out: "out",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("model: %s\ncharges: %d, total ε = %.6f at δ = %g\n", p.Model, len(p.Charges), p.Total.Epsilon, p.Total.Delta)
	n := p.Noise[0]
	fmt.Printf("%s (%d cells): σ = %.2f counts, 95%% ±%.1f counts\n", n.Table, n.Cells, n.Sigma, n.HalfWidth95)
	// Output:
	// model: explicit
	// charges: 28, total ε = 1.000000 at δ = 1e-09
	// marginal {education} (16 cells): σ = 30.58 counts, 95% ±59.9 counts
}
