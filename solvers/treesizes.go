package solvers

import (
	"math"

	"github.com/dpsynth/synth/model"
)

// treeSizes caches, per candidate set, the bytes of the junction tree of
// the measured sets with that candidate added. A junction tree depends on
// its sets only through the interaction graph they draw (NewTree joins the
// attributes of each set, then works on that graph), so a candidate's size
// stays valid while the measured sets add no new edge: it is kept with the
// graph's version. Calls of bytesWith for different candidates may run
// concurrently (each with its own scratch); note may not.
type treeSizes struct {
	sizes    []int
	edge     [][]bool // the measured sets' interaction graph
	ver      int      // its version
	bytes    []uint64 // tree bytes with candidate i added, at graph version bytesVer[i]
	bytesVer []int
}

func newTreeSizes(sizes []int, candidates int) *treeSizes {
	t := &treeSizes{sizes: sizes, edge: make([][]bool, len(sizes)), bytes: make([]uint64, candidates), bytesVer: make([]int, candidates)}
	for a := range t.edge {
		t.edge[a] = make([]bool, len(sizes))
	}
	for i := range t.bytesVer {
		t.bytesVer[i] = -1
	}
	return t
}

// note adds measured sets to the interaction graph, moving to a new
// version if they add an edge.
func (t *treeSizes) note(sets ...[]int) {
	for _, s := range sets {
		for x, a := range s {
			for _, b := range s[:x] {
				if !t.edge[a][b] {
					t.edge[a][b], t.edge[b][a] = true, true
					t.ver++
				}
			}
		}
	}
}

// bytesWith returns the bytes of the junction tree of measured and
// candidate i's set (math.MaxUint64 if there is none), and scratch for the
// next call.
func (t *treeSizes) bytesWith(i int, set []int, measured, scratch [][]int) (uint64, [][]int) {
	if t.bytesVer[i] != t.ver {
		sets := append(append(scratch[:0], measured...), set)
		t.bytes[i] = math.MaxUint64
		if tr, err := model.NewTree(t.sizes, sets); err == nil {
			t.bytes[i] = tr.Bytes()
		}
		t.bytesVer[i] = t.ver
		clear(sets)
		scratch = sets[:0]
	}
	return t.bytes[i], scratch
}
