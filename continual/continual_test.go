package continual

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/universe"
)

func TestTreeShape(t *testing.T) {
	for _, T := range []int{1, 2, 3, 5, 7, 8, 16, 100, 365} {
		L := Levels(T)
		// Every period is in exactly one released node per level.
		inNodes := make([]int, T)
		for p := range T {
			for _, n := range Completes(p, T) {
				lo, hi := n.Span(T)
				if hi-1 != p {
					t.Fatalf("T=%d: node %v spans [%d, %d) but completes at %d", T, n, lo, hi, p)
				}
				for q := lo; q < hi; q++ {
					inNodes[q]++
				}
			}
		}
		for p, c := range inNodes {
			if c != L {
				t.Errorf("T=%d: period %d is in %d released nodes, want %d (one per level)", T, p, c, L)
			}
		}
		// A prefix is the disjoint union of at most L nodes complete by then.
		for tt := 1; tt <= T; tt++ {
			covered := make([]int, T)
			ns := Prefix(tt)
			if len(ns) > L {
				t.Errorf("T=%d: prefix %d uses %d nodes, over %d levels", T, tt, len(ns), L)
			}
			for _, n := range ns {
				lo, hi := n.Span(T)
				if hi > tt {
					t.Errorf("T=%d: prefix %d uses node %v ending at %d", T, tt, n, hi)
				}
				for q := lo; q < hi; q++ {
					covered[q]++
				}
			}
			for q := range T {
				if want := map[bool]int{true: 1, false: 0}[q < tt]; covered[q] != want {
					t.Errorf("T=%d: prefix %d covers period %d %d times, want %d", T, tt, q, covered[q], want)
				}
			}
		}
	}
}

func TestVariances(t *testing.T) {
	v := Variances(5, true)
	want := []float64{1, 2.0 / 3, 4.0 / 7, 8.0 / 15, 16.0 / 31}
	for i := range v {
		if math.Abs(v[i]-want[i]) > 1e-12 {
			t.Errorf("Variances(5, true)[%d] = %v, want %v", i, v[i], want[i])
		}
	}
	if v := Variances(3, false); !slices.Equal(v, []float64{1, 1, 1}) {
		t.Errorf("Variances(3, false) = %v, want all 1", v)
	}
}

const testDomain = `{"attributes": [
  {"name": "a", "type": "categorical", "values": ["x", "y", "z"]},
  {"name": "b", "type": "integer", "min": 0, "max": 3}
]}`

func newState(t *testing.T, T int, eps float64, mech string) (string, *Plan) {
	t.Helper()
	dom, err := universe.ParseDomain([]byte(testDomain))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan([]byte(testDomain), dom, [][]int{{0}, {0, 1}}, T, eps, 1e-9, mech)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Create(dir, p); err != nil {
		t.Fatal(err)
	}
	return dir, p
}

// rows returns a counter of the given records (a, b codes).
func rows(recs ...[2]int) Counter {
	return func(_ context.Context, sets [][]int) ([][]int64, error) {
		out := [][]int64{make([]int64, 3), make([]int64, 12)}
		for _, r := range recs {
			out[0][r[0]]++
			out[1][r[0]*4+r[1]]++
		}
		return out, nil
	}
}

func TestPlanCost(t *testing.T) {
	for _, T := range []int{1, 16, 365} {
		_, p := newState(t, T, 1, Reweighted)
		c := p.Charges()[0].Cost
		if c.Rho > p.Rho || c.Rho < p.Rho*(1-1e-6) {
			t.Errorf("T=%d: charge ρ = %v, plan ρ = %v: want the whole ρ, never more", T, c.Rho, p.Rho)
		}
		if want := math.Sqrt(float64(p.Levels*2) / (2 * p.Rho)); math.Abs(p.Sigma/want-1) > 1e-6 {
			t.Errorf("T=%d: σ = %v, want √(L·M/2ρ) = %v", T, p.Sigma, want)
		}
	}
}

// TestRecordEntersItsNodes: with noise of σ ≈ 0 (ε huge; a draw is 0 but
// with probability below 1e-300), every released node is the exact count of
// its periods: a record of period s is in the nodes that hold s and in no
// other.
func TestRecordEntersItsNodes(t *testing.T) {
	const T = 11
	dir, p := newState(t, T, 1e7, Tree)
	r := privacy.NewSeeded(1)
	for s := range T {
		var recs [][2]int
		for k := 0; k <= s%3; k++ {
			recs = append(recs, [2]int{s % 3, k})
		}
		if _, _, err := Add(context.Background(), dir, fmt.Sprint("p", s), rows(recs...), r); err != nil {
			t.Fatal(err)
		}
	}
	for l := range p.Levels {
		for j := 0; j<<l < T; j++ {
			n := Node{l, j}
			lo, hi := n.Span(T)
			got, err := NoisyNode(dir, p, n)
			if err != nil {
				t.Fatalf("node %v: %v", n, err)
			}
			want := make([]int64, 15)
			for s := lo; s < hi; s++ {
				for k := 0; k <= s%3; k++ {
					want[s%3]++
					want[3+(s%3)*4+k]++
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("node %v (periods %d..%d) = %v, want %v", n, lo, hi-1, got, want)
			}
		}
	}
	// The prefix estimates are then the exact cumulative tables.
	est, sigma, err := Estimates(dir, p, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(est[0], []float64{1 + 1 + 1, 2 + 2, 3 + 3}) || sigma <= 0 {
		t.Errorf("Estimates(7) = %v (σ %v)", est[0], sigma)
	}
}

// TestNodeNoise: on an empty table every node value is pure noise; its
// sample variance over 127 nodes × 15 cells (1,905 draws) must be σ²
// within 15% (the sample variance's relative sd is √(2/1905) ≈ 3.2%, so a
// false failure needs a 4.6-sd deviation: probability below 1e-5).
func TestNodeNoise(t *testing.T) {
	const T = 64
	dir, p := newState(t, T, 1, Tree)
	r := privacy.NewSeeded(7)
	for s := range T {
		if _, _, err := Add(context.Background(), dir, fmt.Sprint(s), rows(), r); err != nil {
			t.Fatal(err)
		}
	}
	var sum, sum2, n float64
	for l := range p.Levels {
		for j := 0; j<<l < T; j++ {
			v, err := NoisyNode(dir, p, Node{l, j})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range v {
				sum += float64(x)
				sum2 += float64(x) * float64(x)
				n++
			}
		}
	}
	if n != 127*15 {
		t.Fatalf("%v noise draws, want %d", n, 127*15)
	}
	variance := sum2/n - (sum/n)*(sum/n)
	if r := variance / (p.Sigma * p.Sigma); r < 0.85 || r > 1.15 {
		t.Errorf("node noise variance %.4g, want σ² = %.4g (ratio %.3f)", variance, p.Sigma*p.Sigma, r)
	}
}

// TestReweightedPrefixVariance: the prefix estimates of both mechanisms are
// unbiased, and re-weighting lowers their variance as Variances says. Over
// 120 horizons of T = 8 on an empty table (so an estimate is its error),
// the variance of the estimate of 7 periods (three nodes: levels 2, 1, 0)
// is within 20% of the formula (relative sd of a variance from 120·15
// independent cells: √(2/1800) ≈ 3.3%, so a false failure needs a 6-sd
// deviation: below 1e-8).
func TestReweightedPrefixVariance(t *testing.T) {
	if testing.Short() {
		t.Skip("400 horizons")
	}
	for _, mech := range []string{Tree, Reweighted} {
		var sum, sum2, n float64
		var sigma, formula float64
		for rep := range 120 {
			dir, p := newState(t, 8, 1, mech)
			r := privacy.NewSeeded(uint64(1000 + rep))
			for s := range 8 {
				if _, _, err := Add(context.Background(), dir, fmt.Sprint(s), rows(), r); err != nil {
					t.Fatal(err)
				}
			}
			est, sd, err := Estimates(dir, p, 7)
			if err != nil {
				t.Fatal(err)
			}
			sigma = p.Sigma
			formula = sd * sd
			for _, tab := range est {
				for _, x := range tab {
					sum += x
					sum2 += x * x
					n++
				}
			}
		}
		variance := sum2/n - (sum/n)*(sum/n)
		v := Variances(4, mech == Reweighted)
		want := (v[2] + v[1] + v[0]) * sigma * sigma
		if math.Abs(formula/want-1) > 1e-9 {
			t.Errorf("%s: Estimates' σ² = %v, want %v", mech, formula, want)
		}
		if r := variance / want; r < 0.8 || r > 1.2 {
			t.Errorf("%s: prefix variance %.4g, want %.4g (ratio %.3f)", mech, variance, want, r)
		}
		if math.Abs(sum/n) > 4*math.Sqrt(want/n)*4 {
			t.Errorf("%s: prefix mean %.4g, want 0 (unbiased)", mech, sum/n)
		}
	}
}

func TestAddCommittedAndHorizon(t *testing.T) {
	dir, _ := newState(t, 2, 1, Reweighted)
	r := privacy.NewSeeded(3)
	if _, again, err := Add(context.Background(), dir, "mon", rows([2]int{0, 1}), r); err != nil || again {
		t.Fatalf("Add(mon) = %v, again %v", err, again)
	}
	before, _ := os.ReadFile(filepath.Join(dir, stateFile))
	called := false
	count := func(context.Context, [][]int) ([][]int64, error) { called = true; return nil, nil }
	p, again, err := Add(context.Background(), dir, "mon", count, r)
	if err != nil || !again || called || p.Index != 0 {
		t.Errorf("Add(mon) again = %+v, %v, %v (counter called: %v); want the committed period, no read", p, again, err, called)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, stateFile)); string(after) != string(before) {
		t.Error("re-adding a committed period changed the state")
	}
	if _, _, err := Add(context.Background(), dir, "tue", rows(), r); err != nil {
		t.Fatal(err)
	}
	_, _, err = Add(context.Background(), dir, "wed", count, r)
	if !errors.Is(err, ErrHorizon) || !errors.Is(err, privacy.ErrBudgetExceeded) || called {
		t.Errorf("Add past the horizon = %v (counter called: %v), want ErrHorizon before reading", err, called)
	}
}

// TestInterruptedAdd: an add that stops after writing its nodes but before
// committing leaves the state as it was; the next add of the same period
// commits it, and no leftover remains.
func TestInterruptedAdd(t *testing.T) {
	dir, p := newState(t, 4, 1, Tree)
	r := privacy.NewSeeded(5)
	if _, _, err := Add(context.Background(), dir, "1", rows([2]int{1, 1}), r); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, stateFile))
	ctx, cancel := context.WithCancel(context.Background())
	count := func(_ context.Context, sets [][]int) ([][]int64, error) {
		cancel() // "killed" after reading, while the nodes are written
		return rows([2]int{2, 3})(ctx, sets)
	}
	if _, _, err := Add(ctx, dir, "2", count, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Add = %v, want context.Canceled", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, stateFile)); string(after) != string(before) {
		t.Fatal("an interrupted add changed the state")
	}
	// A stray temporary file, as a kill during a write leaves.
	os.WriteFile(filepath.Join(dir, privateDir, ".carry-000001.i64.tmp-123"), []byte("x"), 0o600)
	if _, _, err := Add(context.Background(), dir, "2", rows([2]int{2, 3}), r); err != nil {
		t.Fatalf("Add after an interrupted add = %v", err)
	}
	s, err := Load(dir)
	if err != nil || len(s.Periods) != 2 || s.Carry != "carry-000001.i64" {
		t.Fatalf("state after the retry: %+v, %v", s, err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, privateDir))
	if len(ents) != 1 || ents[0].Name() != s.Carry {
		t.Errorf("private folder holds %v, want only %s", ents, s.Carry)
	}
	if fi, _ := os.Stat(filepath.Join(dir, privateDir, s.Carry)); fi.Mode().Perm() != 0o600 {
		t.Errorf("carry mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := NoisyNode(dir, p, Node{1, 0}); err != nil {
		t.Errorf("node of periods 1..2: %v", err)
	}
}

// TestNeighbourHistories: two histories that differ by one record of one
// period, run with the same randomness, release nodes that differ exactly
// in the nodes holding that period, by the record's one cell per table:
// the sensitivity NewPlan charges for (√(levels·tables) in ℓ2).
func TestNeighbourHistories(t *testing.T) {
	const T, s = 13, 6
	var nodes [2]map[Node][]int64
	var plan *Plan
	for h := range 2 {
		dir, p := newState(t, T, 1, Reweighted)
		plan = p
		r := privacy.NewSeeded(11)
		for q := range T {
			recs := [][2]int{{q % 3, q % 4}}
			if h == 1 && q == s {
				recs = append(recs, [2]int{2, 2}) // the neighbour's extra record
			}
			if _, _, err := Add(context.Background(), dir, fmt.Sprint(q), rows(recs...), r); err != nil {
				t.Fatal(err)
			}
		}
		nodes[h] = map[Node][]int64{}
		for l := range p.Levels {
			for j := 0; j<<l < T; j++ {
				v, err := NoisyNode(dir, p, Node{l, j})
				if err != nil {
					t.Fatal(err)
				}
				nodes[h][Node{l, j}] = v
			}
		}
	}
	var sq float64
	for n, a := range nodes[0] {
		b := nodes[1][n]
		lo, hi := n.Span(T)
		holds := lo <= s && s < hi
		diff := 0
		for i := range a {
			d := b[i] - a[i]
			sq += float64(d * d)
			if d != 0 {
				diff++
				if d != 1 || !holds || (i != 2 && i != 3+2*4+2) {
					t.Errorf("node %v cell %d differs by %d (holds period %d: %v)", n, i, d, s, holds)
				}
			}
		}
		if holds && diff != 2 {
			t.Errorf("node %v holds period %d but differs in %d cells, want 2", n, s, diff)
		}
	}
	if want := float64(plan.Levels * 2); sq != want {
		t.Errorf("squared ℓ2 distance of the released nodes = %v, want levels·tables = %v", sq, want)
	}
}
