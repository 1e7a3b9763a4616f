package solvers

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// fixture is a dataset, its 3-way marginal workload and the exact answers.
type fixture struct {
	name    string
	dom     *universe.Domain
	counts  *universe.Counts
	wl      *query.Workload
	answers []float64
}

var (
	fixtureMu    sync.Mutex
	fixtureCache = map[string]*fixture{}
)

// loadFixture reads an embedded pre-encoded dataset restricted to attrs (nil:
// all) and builds its k-way marginal workload. The reader is a minimal one
// for tests: the ingest package is the real path.
func loadFixture(t testing.TB, name string, attrs []string, k int) *fixture {
	t.Helper()
	key := name + "|" + strings.Join(attrs, ",") + "|" + strconv.Itoa(k)
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if f, ok := fixtureCache[key]; ok {
		return f
	}
	ds, err := datasets.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	domSrc, _ := datasets.ReadFile(ds.Domain)
	full, err := universe.ParseDomain(domSrc)
	if err != nil {
		t.Fatal(err)
	}
	if attrs == nil {
		attrs = full.Names()
	}
	var sel []*universe.Attribute
	for _, a := range attrs {
		i, ok := full.Index(a)
		if !ok {
			t.Fatalf("no attribute %q in %s", a, name)
		}
		na, _ := universe.NewEncoded(a, full.Attr(i).Size())
		sel = append(sel, na)
	}
	dom, err := universe.NewDomain(sel...)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := datasets.ReadFile(ds.Data)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Scan()
	header := strings.Split(sc.Text(), ",")
	pos := make([]int, len(attrs))
	for i, a := range attrs {
		pos[i] = -1
		for j, h := range header {
			if h == a {
				pos[i] = j
			}
		}
	}
	counts := universe.NewCounts(dom)
	codes := make([]int, len(attrs))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		for i, p := range pos {
			codes[i], _ = strconv.Atoi(f[p])
		}
		if err := counts.Add(codes, 1); err != nil {
			t.Fatal(err)
		}
	}
	wl, err := query.KWay(dom, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{name: name, dom: dom, counts: counts, wl: wl, answers: wl.AnswerCounts(counts, make([]float64, wl.M()))}
	fixtureCache[key] = fx
	return fx
}

// adultReduced is the benchmark protocol: adult-reduced, all 35 3-way
// marginals (k = 336,000, m = 14,955).
func adultReduced(t testing.TB) *fixture { return loadFixture(t, "adult-reduced", nil, 3) }

// small is a 3-attribute projection of adult-reduced (sex, race, age: 100
// cells) with its 2-way marginals, for fast structural tests.
func small(t testing.TB) *fixture {
	return loadFixture(t, "adult-reduced", []string{"sex", "race", "age"}, 2)
}

// problem builds a Problem over the fixture with a fresh seeded source and a
// ledger for the budget.
func (f *fixture) problem(t testing.TB, eps, delta float64, seed uint64) *Problem {
	t.Helper()
	op, err := f.wl.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Close)
	b := privacy.Budget{Eps: eps, Delta: delta}
	led, err := privacy.NewLedger(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Problem{
		Shape:   Shape{Neighbours: ReplaceOne, Budget: b, N: int(f.counts.Total()), Workload: f.wl},
		Op:      op,
		Counts:  f.counts,
		Answers: f.answers,
		Rand:    privacy.NewSeeded(seed),
		Ledger:  led,
	}
}

// maxError is the workload max error of d against the fixture's answers.
func (f *fixture) maxError(t testing.TB, op Operator, d []float64) (maxErr, meanErr float64) {
	out := make([]float64, op.M())
	op.Answer(d, out)
	for j, v := range out {
		e := v - f.answers[j]
		if e < 0 {
			e = -e
		}
		maxErr = max(maxErr, e)
		meanErr += e
	}
	return maxErr, meanErr / float64(len(out))
}

// measured is the fixture's problem at (ε, δ = 1e-9, seed) with the tuned
// project plan's tables measured: what the explicit fit's tests start from.
func (f *fixture) measured(t testing.TB, eps float64, seed uint64) (*Problem, *measured) {
	t.Helper()
	p := f.problem(t, eps, 1e-9, seed)
	plan, err := (&Project{}).Plan(&p.Shape)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := measure(p, plan.groups, p.Neighbours, plan.count)
	if err != nil {
		t.Fatal(err)
	}
	return p, ms
}
