package solvers

import (
	"testing"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// fwProblem builds a Problem over a custom domain, workload and records
// (each record a list of codes), with a seeded source and a fresh ledger.
func fwProblem(t testing.TB, wl *query.Workload, records [][]int, b privacy.Budget, seed uint64) *Problem {
	t.Helper()
	counts := universe.NewCounts(wl.Domain())
	for _, r := range records {
		if err := counts.Add(r, 1); err != nil {
			t.Fatal(err)
		}
	}
	op, err := wl.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Close)
	led, err := privacy.NewLedger(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Problem{
		Shape:   Shape{Neighbours: ReplaceOne, Budget: b, N: len(records), Workload: wl},
		Op:      op,
		Counts:  counts,
		Answers: wl.AnswerCounts(counts, make([]float64, wl.M())),
		Rand:    privacy.NewSeeded(seed),
		Ledger:  led,
	}
}

// fwWorkload parses a domain and a workload.
func fwWorkload(t testing.TB, domain, workload string) *query.Workload {
	t.Helper()
	dom, err := universe.ParseDomain([]byte(domain))
	if err != nil {
		t.Fatal(err)
	}
	wl, err := query.Parse([]byte(workload), dom)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}
