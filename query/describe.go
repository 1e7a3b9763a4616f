package query

import (
	"fmt"
	"io"
	"math/big"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/dpsynth/synth/universe"
)

// Summary describes a workload for "synth inspect --workload": its size,
// its marginal sets and the memory an operator over it needs.
type Summary struct {
	Queries      int
	Families     []Family
	MarginalSets int
	// Cells of the marginal sets: smallest, largest and total.
	MinCells, MaxCells, TotalCells int
	Sets                           []SetSummary
	MaxCellsGuard                  int64

	// Explicit is false when the universe is too large for an explicit
	// vector (then the byte counts below are zero and Reason says why).
	Explicit     bool
	Reason       string
	VectorBytes  int64 // one float64 vector over the universe (D)
	AnswerBytes  int64 // one vector of answers
	ScratchBytes int64 // the operator's marginal tables
	Tables       int   // local tables of a tile (the tile included) and target tables
	// StageCellsPerK is the number of table cells added to per cell of D
	// in one Answer (the local lattice and the rows added into the target
	// tables).
	StageCellsPerK float64
}

// SetSummary is one marginal set.
type SetSummary struct {
	Attrs []string
	Cells int
}

// Summary computes the summary; memCap is the cap on one explicit vector
// in bytes (0: universe.DefaultMemoryCap).
func (w *Workload) Summary(memCap uint64) Summary {
	s := Summary{Queries: w.m, Families: w.families, MarginalSets: len(w.sets), MaxCellsGuard: w.maxCells}
	for i, m := range w.sets {
		s.Sets = append(s.Sets, SetSummary{Attrs: w.SetNames(m), Cells: m.Cells})
		s.TotalCells += m.Cells
		if i == 0 || m.Cells < s.MinCells {
			s.MinCells = m.Cells
		}
		s.MaxCells = max(s.MaxCells, m.Cells)
	}
	s.AnswerBytes = int64(w.m) * 8
	k, err := w.dom.CheckExplicit(memCap)
	if err != nil {
		s.Reason = err.Error()
		return s
	}
	s.Explicit = true
	s.VectorBytes = int64(k) * 8
	p := newPlan(w, runtime.GOMAXPROCS(0))
	s.ScratchBytes = int64(p.scratch) * 8
	s.Tables = len(p.nodes) + len(p.targets)
	s.StageCellsPerK = p.work
	return s
}

// Describe writes a human-readable summary of the workload: m, the
// families, the marginal sets with their cells, and the memory of an
// operator over an explicit universe.
func (w *Workload) Describe(out io.Writer, memCap uint64) error {
	s := w.Summary(memCap)
	var b strings.Builder
	fmt.Fprintf(&b, "queries (m): %s\n", universe.FormatCount(big.NewInt(int64(s.Queries))))
	fmt.Fprintf(&b, "families: %d\n", len(s.Families))
	for i, f := range s.Families {
		fmt.Fprintf(&b, "  %d. %s: %s, %d queries", i+1, f.Kind, f.Description, f.Len)
		if f.Weight != 1 {
			fmt.Fprintf(&b, ", weight %g", f.Weight)
		}
		b.WriteByte('\n')
	}
	if s.MarginalSets > 0 {
		fmt.Fprintf(&b, "marginal sets: %d (cells per set: min %d, max %d, total %d; max_cells %d)\n",
			s.MarginalSets, s.MinCells, s.MaxCells, s.TotalCells, s.MaxCellsGuard)
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  set\tattributes\tcells\n")
		for i, st := range s.Sets {
			fmt.Fprintf(tw, "  %d\t%s\t%d\n", i+1, strings.Join(st.Attrs, ", "), st.Cells)
		}
		tw.Flush()
	}
	if s.Explicit {
		fmt.Fprintf(&b, "memory: D %s, answers %s, operator tables %s (%d tables, %.2f cell-adds per cell of D)\n",
			fmtBytes(s.VectorBytes), fmtBytes(s.AnswerBytes), fmtBytes(s.ScratchBytes), s.Tables, s.StageCellsPerK)
	} else {
		fmt.Fprintf(&b, "memory: answers %s; no explicit operator: %s\n", fmtBytes(s.AnswerBytes), s.Reason)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func fmtBytes(n int64) string { return universe.FormatBytes(big.NewInt(n)) }
