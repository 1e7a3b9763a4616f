//go:build evidence

package solvers

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
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
	evFDataset  = flag.String("ev.dataset", "adult", "dataset for TestEvidenceFactored")
	evFEps      = flag.Float64("ev.feps", 1, "ε for TestEvidenceFactored")
	evFSeed     = flag.Uint64("ev.fseed", 1, "seed for TestEvidenceFactored")
	evFRounds   = flag.Int("ev.rounds", 0, "Project.Rounds")
	evFIters    = flag.Int("ev.riters", 0, "Project.RoundIters")
	evFCap      = flag.Uint64("ev.cap", 0, "max model bytes")
	evFShare    = flag.Float64("ev.selshare", 0, "selection share")
	evFAnneal   = flag.Float64("ev.anneal", 0, "annealing allowance factor")
	evFPairs    = flag.Bool("ev.pairs", false, "measure the order below and fit what fits")
	evFOracle   = flag.Bool("ev.oracle", false, "fit the measured sets to exact tables")
	evFAlloc    = flag.Float64("ev.alloc", 0, "one-way σ ∝ cells^-p (0: the rule's; negative: equal)")
	evFSample   = flag.String("ev.sample", "stratified", "sampling: stratified, systematic or iid")
	evFSupport  = flag.Float64("ev.support", 0, "κ of the effective supports (0: the rule's; negative: off)")
	evFOneScale = flag.Float64("ev.onescale", 0, "one-way ρ scale (0: the rule's)")
	evFCoarse   = flag.Float64("ev.coarse", 0, "coarse pairs' share (0: the rule's; negative: off)")
	evFSmooth   = flag.Int("ev.smooth", 0, "one-way smoothing's largest half-width (0: 4; negative: off)")
	evFFitIters = flag.Int("ev.fiters", 0, "Project.FitIters")
	evFAR       = flag.Bool("ev.addremove", false, "add/remove neighbours")
	evFExcess   = flag.Bool("ev.excess", false, "print the rows' excess L1 by marginal")
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
	debugRound = func(m string) { t.Log(m) }
	var measuredSets [][]int
	debugMeasured = func(m [][]int) { measuredSets = m }
	start := time.Now()
	s := &Project{Rounds: *evFRounds, FitIters: *evFFitIters, RoundIters: *evFIters}
	setVariant(t, &experiment{selShare: *evFShare, pairsMode: *evFPairs, anneal: *evFAnneal, oneAlloc: *evFAlloc, supportK: *evFSupport, oneScale: *evFOneScale, coarse: *evFCoarse, smoothMax: *evFSmooth})
	sh := Shape{Neighbours: ReplaceOne, Budget: privacy.Budget{Eps: *evFEps, Delta: 1e-9}, N: int(counts.Total()), Workload: wl, Model: Factored, MaxModelBytes: *evFCap}
	if *evFAR {
		sh.Neighbours = AddRemove
	}
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
	method := model.Stratified
	switch *evFSample {
	case "systematic":
		method = model.Systematic
	case "iid":
		method = model.IID
	}
	err = res.Model.Sample(context.Background(), counts.Total(), method, privacy.NewSeeded(2), 0, func(rows []int32) error {
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
	if err := marginalsEach(res.Model, sets, outs); err == nil {
		dl1, dmax, rl1, kept := 0.0, 0.0, 0.0, 0
		for i, m := range wl.Marginals() {
			sum := 0.0
			for _, v := range outs[i] {
				sum += v
			}
			if sum == 0 { // refused
				continue
			}
			kept++
			for c, v := range outs[i] {
				e := math.Abs(v - tru[m.Offset+c])
				dl1 += e
				dmax = max(dmax, e)
				rl1 += math.Abs(got[m.Offset+c] - tru[m.Offset+c])
			}
		}
		if *evFExcess {
			var in, out, inN, outN float64
			type ex struct {
				lab string
				e   float64
			}
			var top []ex
			for i, m := range wl.Marginals() {
				ml, rl := 0.0, 0.0
				for c, v := range outs[i] {
					ml += math.Abs(v - tru[m.Offset+c])
					rl += math.Abs(got[m.Offset+c] - tru[m.Offset+c])
				}
				e := rl - ml
				if res.Model.Tree().Covering(m.Attrs) >= 0 {
					in += e
					inN++
				} else {
					out += e
					outN++
				}
				top = append(top, ex{fmt.Sprint(m.Attrs, m.Cells), e})
			}
			sort.Slice(top, func(a, b int) bool { return top[a].e > top[b].e })
			t.Logf("excess: in one clique %d sets mean %.4f; spanning %d sets mean %.4f; top %v", int(inN), in/max(inN, 1), int(outN), out/max(outN, 1), top[:10])
		}
		t.Logf("distribution (before sampling): max %.4f avg-L1 %.4f; rows on the same %d sets %.4f", dmax, dl1/float64(kept), kept, rl1/float64(kept))
		line := ""
		for a := range dom.Len() {
			tt, _ := counts.Marginals(context.Background(), [][]int{{a}})
			mo := make([]float64, len(tt[0]))
			_ = res.Model.Marginal([]int{a}, mo)
			e := 0.0
			for k, v := range tt[0] {
				e += math.Abs(float64(v)/float64(counts.Total()) - mo[k])
			}
			line += fmt.Sprintf(" %d:%.3f", a, e)
		}
		t.Logf("one-way L1:%s", line)
	}
	if *evFOracle && measuredSets != nil {
		// The structural floor: the same sets fitted to their exact tables.
		tabs, _ := counts.Marginals(context.Background(), measuredSets)
		f := newFactoredFit(&model.Settings{})
		tree, _ := model.NewTree(dom.Sizes(), measuredSets)
		var ms []fmeas
		for i, c := range measuredSets {
			y := make([]float64, len(tabs[i]))
			for k, v := range tabs[i] {
				y[k] = float64(v)
			}
			ms = append(ms, toMeas(c, y, 1, float64(counts.Total())))
		}
		f.add(tree, ms...)
		_ = f.run(context.Background(), 3000, 1e-9)
		if err := marginalsEach(f.cur, sets, outs); err == nil {
			dl1, dmax := 0.0, 0.0
			for i, m := range wl.Marginals() {
				for c, v := range outs[i] {
					e := math.Abs(v - tru[m.Offset+c])
					dl1 += e
					dmax = max(dmax, e)
				}
			}
			t.Logf("oracle fit of the same sets: max %.4f avg-L1 %.4f steps %d", dmax, dl1/float64(len(sets)), f.iters)
		}
		f.close()
	}
	l1 /= float64(len(wl.Marginals()))
	t.Logf("%s ε=%g: max %.4f avg-L1 %.4f solve %.2fs total %.2fs rounds %v steps %v cliques %d model %.1f MiB charges %d",
		*evFDataset, *evFEps, maxE, l1, solveT.Seconds(), time.Since(start).Seconds(), res.Plan.Params["rounds"], res.Plan.Params["fit_steps"], len(res.Cliques), res.Plan.Params["model_bytes"]/(1<<20), len(plan.Charges))
	_ = filepath.Join
	_ = os.Getenv
}

// marginalsEach is Marginals, set by set when the batch refuses some: the
// refused sets' tables are left at 0 (their error counted in full).
func marginalsEach(m *model.Model, sets [][]int, outs [][]float64) error {
	if err := m.Marginals(sets, outs); err == nil {
		return nil
	}
	failed := 0
	for i, set := range sets {
		if err := m.Marginal(set, outs[i]); err != nil {
			clear(outs[i])
			failed++
		}
	}
	if failed > 0 {
		fmt.Printf("marginals: %d of %d sets refused\n", failed, len(sets))
	}
	return nil
}
