package solvers

import (
	"context"
	"math"
	"slices"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
)

// Scores on a sample of the model. A candidate that no clique of the
// model covers has a marginal only through the tree: a carry of one of its
// attributes across the cliques between them, or variable elimination over
// them, each about a pass over the model's cells. Where that would touch
// more cells than a sample of the model has rows (and the reads saved pay
// for drawing the sample: sampledScores.reset), the rounds score the
// candidate on a sample instead: M rows drawn from the model
// (independently, along the junction tree) answer every such candidate
// with M reads, whatever the model's size. The covered candidates keep
// their exact marginals (a sum over one clique's belief), and the selected
// candidate's exact marginal is taken for the annealing test.
//
// The sample's marginal p̂ = (cell counts)/M is unbiased, with variance
// p(1−p)/M per cell; its noise adds to the L1 distance ‖t − n̂·p̂‖₁ about
// √(2/π)·|n̂|·√(p(1−p)/M) per cell where the model is right (the mean of
// a half-normal), which the score subtracts beside the measurement's own
// allowance (sampledAllowance), as AIM's score subtracts the measurement's.
//
// M is the estimated record count n̂, within [minSampledRows,
// maxSampledRows]: a sample as large as the data, whose noise per cell is
// the data's own sampling noise (about √count), never so small that its
// noise swamps small tables, and never more than 1 MiB per attribute
// (2 MiB with 16-bit codes).
//
// Privacy: the sample is drawn from the model, which is fitted to released
// measurements only, with the solver's randomness; given the sample, a
// candidate's score w·(‖t − n̂·p̂‖₁ − allowances) changes by at most w times
// the change of ‖t‖ between neighbours, the exact score's sensitivity. The
// exponential mechanism over these scores is the one the rounds charge.
// The lazy selection's bound ‖t‖₁ + |n̂|·‖p̂‖₁ holds for them too; the bounds
// carried across fits (drifted) do not, since the next fit draws a new
// sample, so a sampled score leaves the trivial bound behind.

// The fewest and the most rows a sample for the scores has.
const (
	minSampledRows = 1 << 16
	maxSampledRows = 1 << 20
)

// sampledRows is the sample's size for n̂ records: n̂ rounded up, within
// [minSampledRows, maxSampledRows].
func sampledRows(nHat float64) int {
	return int(math.Ceil(min(max(math.Abs(nHat), minSampledRows), maxSampledRows)))
}

// sampledBytes bounds the memory of the rounds' sample on a domain of
// these attribute sizes under a model cap of capBytes: the most rows a
// sample has, one or two bytes per value, and the conditionals and alias
// tables it is drawn from (20 bytes per model cell, 8 bytes a cell).
func sampledBytes(sizes []int, capBytes uint64) uint64 {
	per := codeBytes(sizes)
	if per == 0 {
		return 0
	}
	return maxSampledRows*uint64(len(sizes))*uint64(per) + capBytes/8*20
}

// codeBytes is the bytes a sample keeps per value on a domain of these
// attribute sizes: 1 when every attribute has at most 256 values, 2 up to
// 65,536, else 0 (no sample: those rounds score exactly).
func codeBytes(sizes []int) int {
	switch mx := slices.Max(sizes); {
	case mx <= 1<<8:
		return 1
	case mx <= 1<<16:
		return 2
	}
	return 0
}

// sampledScores holds the rounds' sample of the current model and which
// candidates it scores.
type sampledScores struct {
	rows  int
	sizes []int
	// Per attribute, the sample's codes (rows of them): one byte each
	// when every attribute has at most 256 values, else two.
	cols8  [][]uint8
	cols16 [][]uint16
	on     bool   // some candidate of the current model is scored on the sample
	drawn  bool   // cols hold a sample of the current model
	is     []bool // per candidate: scored on the sample on the current model
	list   []int  // split's candidates on the sample
	job    sampleTablesJob
	rands  []model.Rand // the parts' streams (split off the solver's at the first draw)
}

// newSampledScores returns the sample state for the candidates of a
// domain with these attribute sizes, or nil when an attribute has more
// than 65,536 values (the sample keeps 16-bit codes; those rounds score
// exactly).
func newSampledScores(sizes []int, cands int, nHat float64) *sampledScores {
	s := &sampledScores{rows: sampledRows(nHat), sizes: sizes, is: make([]bool, cands)}
	switch codeBytes(sizes) {
	case 0:
		return nil
	case 1:
		s.cols8 = make([][]uint8, len(sizes))
	default:
		s.cols16 = make([][]uint16, len(sizes))
	}
	return s
}

// reset prepares the scores on a new model m: a candidate is scored on
// the sample when no clique covers it and its exact marginal would touch
// more of the model's cells than the sample has rows (model.MarginalCosts;
// a cell and a row cost about one memory read each), and only when the
// reads saved outweigh drawing the sample (drawReads per value). The
// costs depend on the tree, the candidates and n̂ only.
func (s *sampledScores) reset(m *model.Model, cands [][]int) {
	s.drawn, s.on = false, false
	costs := m.MarginalCosts(cands)
	saved := 0.0
	for i, c := range costs {
		s.is[i] = c > float64(s.rows) && !math.IsInf(c, 1)
		if s.is[i] {
			saved += c - float64(s.rows)
		}
	}
	// The sample pays for itself: the reads it saves outweigh drawing it.
	if saved <= drawReads*float64(s.rows*len(s.sizes)) {
		clear(s.is)
		return
	}
	s.on = true
}

// drawReads is what drawing one value of the sample costs, in reads of a
// table cell: about 20 (a row of 64 values drawn along the junction tree,
// about 1.2 µs, against under 1 ns per row read in a table count on this kind of
// machine: BenchmarkSampledTables and a profile of wide64-2way).
const drawReads = 20

// sampleParts is the number of streams a sample is drawn in, on as many
// goroutines: a fixed number, so that the rows do not depend on the cores.
const sampleParts = 2

// draw samples the model's rows into the columns (once per model), in
// sampleParts parts drawn at once, each from its own stream split off rnd
// at the first draw.
func (s *sampledScores) draw(ctx context.Context, m *model.Model, rnd *privacy.Rand) error {
	if s.drawn {
		return nil
	}
	if s.rands == nil {
		base := rnd.Split()
		s.rands = make([]model.Rand, sampleParts)
		for k := range s.rands {
			s.rands[k] = base.Split()
		}
	}
	d := len(m.Tree().Sizes()) // the model's variables: the domain's first
	for a := range s.cols8 {
		s.cols8[a] = slices.Grow(s.cols8[a][:0], s.rows)[:s.rows]
	}
	for a := range s.cols16 {
		s.cols16[a] = slices.Grow(s.cols16[a][:0], s.rows)[:s.rows]
	}
	var n, at [sampleParts]int64
	for k := range n {
		at[k] = int64(s.rows * k / sampleParts)
		n[k] = int64(s.rows*(k+1)/sampleParts) - at[k]
	}
	next := at // each part's next row
	err := m.SampleIIDParts(ctx, n[:], s.rands, func(k int, rows []int32) error {
		r0 := next[k]
		for o := 0; o < len(rows); o += d {
			r := r0 + int64(o/d)
			if s.cols8 != nil {
				for a, v := range rows[o : o+len(s.sizes)] {
					s.cols8[a][r] = uint8(v)
				}
				continue
			}
			for a, v := range rows[o : o+len(s.sizes)] {
				s.cols16[a][r] = uint16(v)
			}
		}
		next[k] = r0 + int64(len(rows)/d)
		return nil
	})
	s.drawn = err == nil
	return err
}

// tables writes into outs[i] the sample's marginal on cands[i] (cell
// counts over the rows) for every i in idx, on the team's workers.
func (s *sampledScores) tables(team *par.Team, cands [][]int, idx []int, outs [][]float64) {
	s.job = sampleTablesJob{s: s, cands: cands, idx: idx, outs: outs}
	team.For(len(idx)*s.rows, s.rows, &s.job)
	s.job = sampleTablesJob{}
}

// sampleTablesJob counts the sample's tables of the candidates idx[lo/rows
// : hi/rows] (each candidate is rows of work).
type sampleTablesJob struct {
	s     *sampledScores
	cands [][]int
	idx   []int
	outs  [][]float64
}

func (j *sampleTablesJob) Run(_, lo, hi int) {
	s := j.s
	for k := lo / s.rows; k < (hi+s.rows-1)/s.rows; k++ {
		i := j.idx[k]
		if s.cols8 != nil {
			sampleTable(s.cols8, s.sizes, j.cands[i], s.rows, j.outs[i])
		} else {
			sampleTable(s.cols16, s.sizes, j.cands[i], s.rows, j.outs[i])
		}
	}
}

// sampleTable writes the marginal on set of the first rows rows of cols
// into out (len: the set's cells, its last attribute fastest): each cell's
// count divided by rows.
func sampleTable[T uint8 | uint16](cols [][]T, sizes []int, set []int, rows int, out []float64) {
	clear(out)
	switch len(set) {
	case 1:
		a := cols[set[0]][:rows]
		for _, v := range a {
			out[v]++
		}
	case 2:
		a, b := cols[set[0]][:rows], cols[set[1]][:rows]
		sa := sizes[set[1]]
		for r, v := range a {
			out[int(v)*sa+int(b[r])]++
		}
	case 3:
		a, b, c := cols[set[0]][:rows], cols[set[1]][:rows], cols[set[2]][:rows]
		sc := sizes[set[2]]
		sa := sizes[set[1]] * sc
		for r, v := range a {
			out[int(v)*sa+int(b[r])*sc+int(c[r])]++
		}
	default:
		for r := range rows {
			x := 0
			for _, at := range set {
				x = x*sizes[at] + int(cols[at][r])
			}
			out[x]++
		}
	}
	inv := 1 / float64(rows)
	for k := range out {
		out[k] *= inv
	}
}

// sampledAllowance is the L1 distance that a sample of rows rows adds, in
// expectation, to a table whose marginal is p where the model is right: a
// cell's estimate has standard deviation √(p(1−p)/rows), and a normal's
// mean absolute value is √(2/π) times it; times |n̂| in counts. For a
// grouped table p holds its groups' probabilities. p is the sample's own
// estimate, so this reads the model only.
func sampledAllowance(p []float64, nHat float64, rows int) float64 {
	sum := 0.0
	for _, v := range p {
		sum += math.Sqrt(v * (1 - v))
	}
	return math.Sqrt(2/math.Pi) * math.Abs(nHat) * sum / math.Sqrt(float64(rows))
}

// split moves the candidates of todo scored on the sample out of it and
// returns them (in s.list).
func (s *sampledScores) split(todo []int) (exact, sampled []int) {
	exact, sampled = todo[:0], s.list[:0]
	for _, i := range todo {
		if s.is[i] {
			sampled = append(sampled, i)
		} else {
			exact = append(exact, i)
		}
	}
	s.list = sampled
	return exact, sampled
}

// onSample reports whether candidate i's score on the current model is
// from the sample (false on a nil s).
func (s *sampledScores) onSample(i int) bool { return s != nil && s.on && s.is[i] }

// sampledOn reports whether the current model's scores are sampled.
func (r *rounds) sampledOn() bool { return r.sampled != nil && r.sampled.on }

// onSample reports whether candidate i's score on the current model is
// from the sample.
func (r *rounds) onSample(i int) bool { return r.sampled.onSample(i) }
