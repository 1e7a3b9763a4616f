//go:build probe

package solvers

import (
	"context"
	"testing"
	"time"

	"github.com/dpsynth/synth/privacy"
)

// go test -tags probe ./solvers -run TestProbeFactoredSeedsAdult -v -timeout 0
func TestProbeFactoredSeedsAdult(t *testing.T) {
	fx := loadFixture(t, "adult", nil, 3)
	for _, s := range []Solver{&DPFW{T: 12}} {
		b := privacy.Budget{Eps: 1, Delta: 1e-9}
		led, _ := privacy.NewLedger(b, nil)
		p := &Problem{Shape: Shape{Neighbours: ReplaceOne, Budget: b, N: int(fx.counts.Total()), Workload: fx.wl, Model: Factored},
			Counts: fx.counts, Data: fx.counts, Answers: fx.answers, Rand: privacy.NewSeeded(1), Ledger: led}
		last := time.Now()
		p.Progress = func(pr Progress) {
			if pr.Iter%5 == 0 {
				t.Logf("%s: iteration %d, %.3f s per iteration", s.Name(), pr.Iter, time.Since(last).Seconds()/5)
				last = time.Now()
			}
		}
		start := time.Now()
		res, err := s.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %v, model %d bytes", s.Name(), time.Since(start), res.Model.Tree().Bytes())
		res.Model.Close()
	}
}
