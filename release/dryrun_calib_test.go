//go:build calib

package release

// Calibration of EstimateTime: go test -tags calib -run TestCalibTime -v ./release
// runs real releases of the shared datasets (../shared/data next to the
// repository; about a minute) and prints the estimate next to the measured
// wall time of the whole release. It checks nothing: it is the measurement
// behind the constants in dryrun.go.

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dpsynth/synth/solvers"
)

func TestCalibTime(t *testing.T) {
	for _, c := range []struct {
		ds string
		k  int
	}{{"adult-reduced", 2}, {"adult-reduced", 3}, {"nltcs", 2}, {"nltcs", 3}, {"adult", 2}, {"adult", 3}, {"titanic", 2}, {"titanic", 3}} {
		d := filepath.Join("..", "..", "shared", "data", c.ds)
		if _, err := os.Stat(d); err != nil {
			t.Skipf("no shared data: %v", err)
		}
		seed := uint64(1)
		cfg := &Config{Neighbours: solvers.ReplaceOne, Data: filepath.Join(d, c.ds+".csv"), Domain: filepath.Join(d, c.ds+"-domain.json"), Marginals: c.k,
			Epsilon: 1, Delta: 1e-9, Out: filepath.Join(t.TempDir(), "out"), Seed: &seed}
		p, err := DryRun(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		out, err := Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		whole := time.Since(t0).Seconds()
		t.Logf("%s %d-way (%s): solve estimate %.3g s [%.3g, %.3g] + %d records × %g s; whole release took %.3g s",
			c.ds, c.k, p.Model, p.Time.Seconds, p.Time.Low, p.Time.High, out.Records, p.Time.PerRecord, whole)
	}
}
