package continual

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/dpsynth/synth/privacy"
)

// ErrHorizon reports a period past the plan's horizon: its budget was never
// planned (the CLI exits 77).
var ErrHorizon = fmt.Errorf("past the horizon: %w", privacy.ErrBudgetExceeded)

// Counter counts the period's rows: the count table of each set (attribute
// positions), in the set's mixed radix.
type Counter func(ctx context.Context, sets [][]int) ([][]int64, error)

// Add commits one period: it counts the period's rows with count, adds
// them to the open nodes' exact partial sums (the private carry),
// releases with discrete Gaussian noise every node the period completes,
// and commits the new nodes, the new carry and the period to the state, in
// that order (state.json last, by an atomic rename). It returns the
// committed period and whether it was committed before: a label already in
// the state reads no data and draws no noise. A period past the horizon is
// ErrHorizon.
//
// Privacy: the nodes' noise is the plan's (see NewPlan), charged for the
// whole horizon at init; the only outputs are the noisy nodes. The carry
// holds exact counts and stays private.
func Add(ctx context.Context, dir, label string, count Counter, r *privacy.Rand) (Period, bool, error) {
	s, err := Load(dir)
	if err != nil {
		return Period{}, false, err
	}
	if p, ok := s.Find(label); ok {
		return p, true, nil
	}
	plan := s.Plan
	t := len(s.Periods)
	if t >= plan.Horizon {
		return Period{}, false, fmt.Errorf("continual: period %q would be period %d of a horizon of %d: %w", label, t+1, plan.Horizon, ErrHorizon)
	}
	if label == "" {
		return Period{}, false, errors.New("continual: a period needs a label")
	}
	cleanup(dir, s)
	_, sets, err := plan.Resolve()
	if err != nil {
		return Period{}, false, err
	}
	noise, err := plan.Noise()
	if err != nil {
		return Period{}, false, err
	}
	width := plan.TotalCells()
	carry, err := loadCarry(dir, s, plan.Levels, width)
	if err != nil {
		return Period{}, false, err
	}
	tabs, err := count(ctx, sets)
	if err != nil {
		return Period{}, false, err
	}
	x, err := flatten(tabs, plan.Cells)
	if err != nil {
		return Period{}, false, err
	}
	for l := range plan.Levels {
		row := carry[l*width : (l+1)*width]
		for i, v := range x {
			row[i] += v
		}
	}
	p := Period{Label: label, Index: t}
	for _, n := range Completes(t, plan.Horizon) {
		row := carry[n.Level*width : (n.Level+1)*width]
		noisy := make([]int64, width)
		for i, v := range row {
			noisy[i] = v + noise.Sample(r)
			row[i] = 0
		}
		if err := writeAtomic(nodePath(dir, n), intsBytes(noisy), 0o644); err != nil {
			return Period{}, false, err
		}
		p.Nodes = append(p.Nodes, n)
	}
	if err := ctx.Err(); err != nil {
		return Period{}, false, err
	}
	name := fmt.Sprintf("carry-%06d.i64", t)
	if err := writeAtomic(carryPath(dir, name), intsBytes(carry), 0o600); err != nil {
		return Period{}, false, err
	}
	p.Committed = now()
	old := s.Carry
	s.Periods = append(s.Periods, p)
	s.Carry = name
	if err := writeState(dir, s); err != nil {
		return Period{}, false, err
	}
	if old != "" {
		os.Remove(carryPath(dir, old))
	}
	return p, false, nil
}

// loadCarry reads the carry of the last committed period (zeros before
// the first).
func loadCarry(dir string, s *State, levels, width int) ([]int64, error) {
	if s.Carry == "" {
		return make([]int64, levels*width), nil
	}
	return readInts(carryPath(dir, s.Carry), levels*width)
}

// flatten checks the tables' sizes and puts them one after the other.
func flatten(tabs [][]int64, cells []int) ([]int64, error) {
	if len(tabs) != len(cells) {
		return nil, fmt.Errorf("continual: %d count tables, want %d", len(tabs), len(cells))
	}
	var x []int64
	for i, t := range tabs {
		if len(t) != cells[i] {
			return nil, fmt.Errorf("continual: count table %d has %d cells, want %d", i, len(t), cells[i])
		}
		x = append(x, t...)
	}
	return x, nil
}

// NoisyNode reads a released node of dir's state.
func NoisyNode(dir string, plan *Plan, n Node) ([]int64, error) {
	return readInts(nodePath(dir, n), plan.TotalCells())
}

// Estimates returns the estimate of every measured set's table summed over
// the first t periods, and the noise σ of its cells (counts).
func Estimates(dir string, plan *Plan, t int) ([][]float64, float64, error) {
	e := &Estimator{T: plan.Horizon, Reweight: plan.Mechanism == Reweighted,
		Noisy: func(n Node) ([]int64, error) { return NoisyNode(dir, plan, n) }}
	flat, v, err := e.Prefix(t)
	if err != nil {
		return nil, 0, err
	}
	out := make([][]float64, len(plan.Cells))
	off := 0
	for i, c := range plan.Cells {
		out[i] = flat[off : off+c]
		off += c
	}
	return out, plan.Sigma * math.Sqrt(v), nil
}
