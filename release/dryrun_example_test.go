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
	for _, n := range p.Noise {
		fmt.Printf("%s: σ = %.2f counts, 95%% ±%.1f counts\n", n.Table, n.Sigma, n.HalfWidth95)
	}
	// Output:
	// model: explicit
	// charges: 1, total ε = 1.000000 at δ = 1e-09
	// the record count: σ = 54.95 counts, 95% ±107.7 counts
	// each of the 21 order-2 marginals alone, if the table holds more than about 2409 records (the noisy record count decides): σ = 25.31 counts, 95% ±49.6 counts
	// each of the 7 order-1 and 21 order-2 marginals, if the table holds more than about 80 records and fewer than about 2409: σ = 29.23 counts, 95% ±57.3 counts
	// each of the 7 order-1 marginals alone, if fewer than about 80: σ = 14.61 counts, 95% ±28.6 counts
}
