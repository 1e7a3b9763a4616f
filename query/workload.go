package query

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dpsynth/synth/universe"
)

// FamilyKind is the kind of a query family.
type FamilyKind uint8

// Query family kinds.
const (
	// Marginals: every cell of each listed attribute set is one counting
	// query (explicit sets, all k-way, or a random sample of k-way sets).
	Marginals FamilyKind = iota
	// Range: one counting query "lo <= attribute <= hi" on an ordered
	// attribute.
	Range
	// Prefixes: the queries "attribute <= v" for every declared value v of
	// an ordered attribute but the last.
	Prefixes
	// Predicate: one counting query, a conjunction of "attribute in {values}"
	// and "attribute in [lo, hi]" clauses.
	Predicate
)

var familyKindNames = [...]string{Marginals: "marginals", Range: "range", Prefixes: "prefixes", Predicate: "predicate"}

func (k FamilyKind) String() string {
	if int(k) < len(familyKindNames) {
		return familyKindNames[k]
	}
	return "FamilyKind(" + strconv.Itoa(int(k)) + ")"
}

// Family describes one parsed family of queries: its queries are
// Offset..Offset+Len-1.
type Family struct {
	Kind   FamilyKind
	Weight float64
	Offset int
	Len    int
	// Description is a one-line summary, e.g. "all 3-way marginals over 7
	// attributes (35 sets)".
	Description string
}

// Marginal is one marginal attribute set of a workload: its cells are the
// queries Offset..Offset+Cells-1, in mixed-radix order over Attrs (the last
// attribute varies fastest, as in the universe).
type Marginal struct {
	Attrs  []int // attribute positions in the domain, increasing
	Family int   // index of the family that declared it
	Weight float64
	Offset int
	Cells  int
}

// run is an inclusive interval of codes of one attribute.
type run struct{ lo, hi int32 }

type blockKind uint8

const (
	bMarginal blockKind = iota // a marginal set: one query per cell
	bProduct                   // one query: a product of code runs (range, predicate)
	bPrefix                    // the prefixes of one attribute: one query per code but the last
)

// block is a run of consecutive queries of one shape. Every block reads the
// marginal table of its attribute set: a marginal block is that table, a
// product query sums a box of it, a prefix block is its running sum.
type block struct {
	kind   blockKind
	family int
	weight float64
	off, n int
	attrs  []int   // attribute positions, increasing
	runs   [][]run // bProduct: allowed codes of each attribute in attrs
	set    int     // bMarginal: index into Workload.sets
}

// Workload is a list of linear queries over the universe of a domain, in a
// fixed order: query j is the j-th row of the workload matrix A (m × k).
// Every query is a counting query scaled by its family's weight w in
// (0, 1]: q_j(z) = w·1[z ∈ support_j], so its answer on a distribution D is
// w·D(support_j) and on data w·count/n.
//
// A Workload is immutable after construction and safe for concurrent use.
type Workload struct {
	dom      *universe.Domain
	maxCells int64
	families []Family
	blocks   []block
	sets     []Marginal
	m        int
}

// Domain returns the domain the workload is over.
func (w *Workload) Domain() *universe.Domain { return w.dom }

// M is the number of queries (each marginal cell is one query).
func (w *Workload) M() int { return w.m }

// Families returns the parsed families in order. The slice must not be
// modified.
func (w *Workload) Families() []Family { return w.families }

// Marginals returns the marginal sets in query order (eval reports L1 and TV
// distance per set). The slice must not be modified.
func (w *Workload) Marginals() []Marginal { return w.sets }

// MaxCells is the guard on the number of cells of one marginal.
func (w *Workload) MaxCells() int64 { return w.maxCells }

// blockOf returns the index of the block holding query j.
func (w *Workload) blockOf(j int) int {
	if j < 0 || j >= w.m {
		panic(fmt.Sprintf("query: query index %d out of range [0, %d)", j, w.m))
	}
	return sort.Search(len(w.blocks), func(i int) bool { return w.blocks[i].off+w.blocks[i].n > j })
}

// Family returns the index of the family of query j.
func (w *Workload) Family(j int) int { return w.blocks[w.blockOf(j)].family }

// Weight returns the weight of query j.
func (w *Workload) Weight(j int) float64 { return w.blocks[w.blockOf(j)].weight }

// MarginalOf returns the index in Marginals() of the marginal set query j
// belongs to, or -1 if query j is not a marginal cell.
func (w *Workload) MarginalOf(j int) int {
	b := &w.blocks[w.blockOf(j)]
	if b.kind != bMarginal {
		return -1
	}
	return b.set
}

// Range returns the minimum and maximum of q_j over the universe: [0, w]
// for a counting query of weight w, or [w, w] when the query holds on every
// cell. The sensitivity of its answer as a fraction of n under replace-one
// is (hi - lo)/n.
func (w *Workload) Range(j int) (lo, hi float64) {
	b := &w.blocks[w.blockOf(j)]
	if w.covers(b, j-b.off) {
		return b.weight, b.weight
	}
	return 0, b.weight
}

// covers reports whether query i of block b holds on every cell.
func (w *Workload) covers(b *block, i int) bool {
	switch b.kind {
	case bMarginal:
		return w.sets[b.set].Cells == 1
	case bPrefix:
		return i+1 == w.dom.Attr(b.attrs[0]).Size()
	default:
		for p, a := range b.attrs {
			size := int32(w.dom.Attr(a).Size())
			if len(b.runs[p]) != 1 || b.runs[p][0].lo != 0 || b.runs[p][0].hi != size-1 {
				return false
			}
		}
		return true
	}
}

// Label returns a human-readable label of query j, e.g. "sex=1,race=4,age=3"
// for a marginal cell, "age<=30..39" for a prefix or
// "sex=F,age in [20..29, 30..39]" for a predicate. The null code of a
// nullable attribute is labelled NullLabel ("<null>").
func (w *Workload) Label(j int) string {
	b := &w.blocks[w.blockOf(j)]
	i := j - b.off
	var s strings.Builder
	switch b.kind {
	case bMarginal:
		cells := w.sets[b.set].Cells
		for p, a := range b.attrs {
			attr := w.dom.Attr(a)
			cells /= attr.Size()
			c := (i / cells) % attr.Size()
			if p > 0 {
				s.WriteByte(',')
			}
			s.WriteString(attr.Name + "=" + codeLabel(attr, c))
		}
	case bPrefix:
		attr := w.dom.Attr(b.attrs[0])
		s.WriteString(attr.Name + "<=" + codeLabel(attr, i))
	default:
		for p, a := range b.attrs {
			if p > 0 {
				s.WriteByte(',')
			}
			writeClause(&s, w.dom.Attr(a), b.runs[p])
		}
	}
	return s.String()
}

func writeClause(s *strings.Builder, a *universe.Attribute, runs []run) {
	if len(runs) == 1 && runs[0].lo == runs[0].hi {
		s.WriteString(a.Name + "=" + codeLabel(a, int(runs[0].lo)))
		return
	}
	if len(runs) == 1 && a.Ordered() {
		s.WriteString(a.Name + " in [" + codeLabel(a, int(runs[0].lo)) + ", " + codeLabel(a, int(runs[0].hi)) + "]")
		return
	}
	s.WriteString(a.Name + " in {")
	first := true
	for _, r := range runs {
		for c := r.lo; c <= r.hi; c++ {
			if !first {
				s.WriteString(", ")
			}
			first = false
			s.WriteString(codeLabel(a, int(c)))
		}
	}
	s.WriteString("}")
}

// Signed maps an index of the negation closure A' = [A; -A] (2m rows, used
// for absolute error) to a query of the workload and a sign: s < m is +q_s,
// s >= m is -q_{s-m}.
func Signed(s, m int) (j int, sign float64) {
	if s < 0 || s >= 2*m {
		panic(fmt.Sprintf("query: signed index %d out of range [0, %d)", s, 2*m))
	}
	if s < m {
		return s, 1
	}
	return s - m, -1
}

// SetNames returns the attribute names of a marginal set, in domain order.
func (w *Workload) SetNames(s Marginal) []string {
	names := make([]string, len(s.Attrs))
	for i, a := range s.Attrs {
		names[i] = w.dom.Attr(a).Name
	}
	return names
}
