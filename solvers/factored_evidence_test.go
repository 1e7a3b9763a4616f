//go:build evidence

package solvers

import (
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

var (
	evFDataset = flag.String("ev.dataset", "adult", "dataset for TestEvidenceFactored")
	evFEps     = flag.Float64("ev.feps", 1, "ε for TestEvidenceFactored")
	evFSeed    = flag.Uint64("ev.fseed", 1, "seed for TestEvidenceFactored")
	evFRounds  = flag.Int("ev.rounds", 0, "Project.Rounds")
	evFIters   = flag.Int("ev.riters", 0, "Project.RoundIters")
	evFCap     = flag.Uint64("ev.cap", 0, "max model bytes")
	evFFinal   = flag.Int("ev.final", 0, "final fit mode")
	evFShare   = flag.Float64("ev.selshare", 0, "selection share")
	evFAnneal  = flag.Float64("ev.anneal", 0, "annealing allowance factor")
	evFPairs   = flag.Bool("ev.pairs", false, "measure the order below and fit what fits")
)

// TestEvidenceFactored runs the project solver on the factored model on a
// shipped dataset with all 3-way marginals and prints the max absolute error
// over all cells and the average per-marginal L1 error of n sampled rows.
func TestEvidenceFactored(t *testing.T) {
	ds, err := datasets.Lookup(*evFDataset)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, domf, err := ds.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	dom, err := universe.LoadDomain(domf)
	if err != nil {
		t.Fatal(err)
	}
	counts, _, err := ingest.ReadFile(context.Background(), data, dom, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wl, err := query.KWay(dom, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s := &Project{Rounds: *evFRounds, RoundIters: *evFIters, finalMode: *evFFinal, selShare: *evFShare, pairsMode: *evFPairs, anneal: *evFAnneal}
	sh := Shape{Budget: privacy.Budget{Eps: *evFEps, Delta: 1e-9}, N: int(counts.Total()), Workload: wl, Model: Factored, MaxModelBytes: *evFCap}
	plan, err := s.Plan(&sh)
	if err != nil {
		t.Fatal(err)
	}
	ledger, _ := privacy.NewLedger(sh.Budget, nil)
	res, err := s.Solve(context.Background(), &Problem{Shape: sh, Data: counts, Rand: privacy.NewSeeded(*evFSeed), Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	solveT := time.Since(start)
	defer res.Model.Close()
	syn := universe.NewCounts(dom)
	codes := make([]int, dom.Len())
	err = res.Model.Sample(context.Background(), counts.Total(), model.Systematic, privacy.NewSeeded(2), 0, func(rows []int32) error {
		for i := 0; i < len(rows); i += dom.Len() {
			for a := range codes {
				codes[a] = int(rows[i+a])
			}
			if err := syn.Add(codes, 1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tru := wl.AnswerCounts(counts, make([]float64, wl.M()))
	got := wl.AnswerCounts(syn, make([]float64, wl.M()))
	maxE, l1 := 0.0, 0.0
	worst := -1
	for j := range tru {
		e := math.Abs(tru[j] - got[j])
		if e > maxE {
			maxE, worst = e, j
		}
		l1 += e
	}
	if worst >= 0 {
		t.Logf("worst query %s: true %.4f synthetic %.4f", wl.Label(worst), tru[worst], got[worst])
	}
	for _, st := range res.Trace {
		if st.Selected >= 0 {
			t.Logf("round %d selected candidate %d", st.Iter, st.Selected)
		}
	}
	t.Logf("cliques %v", res.Cliques)
	// The model's own marginals (before sampling).
	sets := make([][]int, len(wl.Marginals()))
	outs := make([][]float64, len(sets))
	for i, m := range wl.Marginals() {
		sets[i] = m.Attrs
		outs[i] = make([]float64, m.Cells)
	}
	if err := res.Model.Marginals(sets, outs); err == nil {
		dl1, dmax := 0.0, 0.0
		for i, m := range wl.Marginals() {
			for c, v := range outs[i] {
				e := math.Abs(v - tru[m.Offset+c])
				dl1 += e
				dmax = max(dmax, e)
			}
		}
		t.Logf("distribution (before sampling): max %.4f avg-L1 %.4f", dmax, dl1/float64(len(sets)))
	}
	l1 /= float64(len(wl.Marginals()))
	t.Logf("%s ε=%g: max %.4f avg-L1 %.4f solve %.2fs total %.2fs rounds %v steps %v cliques %d model %.1f MiB charges %d",
		*evFDataset, *evFEps, maxE, l1, solveT.Seconds(), time.Since(start).Seconds(), res.Plan.Params["rounds"], res.Plan.Params["fit_steps"], len(res.Cliques), res.Plan.Params["model_bytes"]/(1<<20), len(plan.Charges))
	_ = filepath.Join
	_ = os.Getenv
}
