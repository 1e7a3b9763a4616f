package release

import (
	"context"
	"fmt"

	"github.com/dpsynth/synth/universe"
)

// RowWriter is where synthetic rows go: the Parquet and CSV writers
// implement it. Rows are per-attribute codes, row-major, dom.Len() codes
// per row, so any model that can draw rows (an explicit vector, a factored
// model) can stream them in batches; a writer holds at most one row group
// (Parquet) or one buffer (CSV) in memory, whatever the number of rows.
type RowWriter interface {
	// WriteRows writes len(rows)/dom.Len() rows. A code out of its
	// attribute's range, or a length that is not a multiple of dom.Len(),
	// is a programming error and panics.
	WriteRows(ctx context.Context, rows []int32) error
	// Rows returns the number of rows written so far.
	Rows() int64
	// Close writes what is buffered (and a file footer); it does not
	// close the underlying io.Writer.
	Close() error
}

var (
	_ RowWriter = (*ParquetWriter)(nil)
	_ RowWriter = (*CSVWriter)(nil)
)

// checkRows panics unless rows holds whole rows of valid codes of dom.
func checkRows(dom *universe.Domain, rows []int32) {
	na := dom.Len()
	if len(rows)%na != 0 {
		panic(fmt.Sprintf("release: %d codes are not whole rows of %d attributes", len(rows), na))
	}
	for i, c := range rows {
		if a := dom.Attr(i % na); c < 0 || int(c) >= a.Size() {
			panic(fmt.Sprintf("release: code %d out of range for attribute %q of size %d (row %d)", c, a.Name, a.Size(), i/na))
		}
	}
}

// cellCodes decodes cells (of an indexable universe) into codes, row-major.
func cellCodes(dom *universe.Domain, cells []uint32, codes []int32) {
	na := dom.Len()
	strides := dom.Strides()
	for i, a := range dom.Attrs() {
		// Cells, strides and sizes fit in 32 bits (Sample refuses more than
		// 2^32 cells), and 32-bit division is the cheaper one.
		stride, size := uint32(strides[i]), uint32(a.Size())
		for r, cell := range cells {
			codes[r*na+i] = int32(cell / stride % size)
		}
	}
}

// WriteCells writes cells through w, decoding them into codes a batch at a
// time (the universe of dom must be indexable).
func WriteCells(ctx context.Context, w RowWriter, dom *universe.Domain, cells []uint32) error {
	if _, ok := dom.Size(); !ok {
		return fmt.Errorf("release: universe of %s cells has no 64-bit cell index: write rows as codes", universe.FormatCount(dom.SizeBig()))
	}
	codes := make([]int32, min(len(cells), batchRows)*dom.Len())
	for len(cells) > 0 {
		n := min(len(cells), batchRows)
		cellCodes(dom, cells[:n], codes)
		if err := w.WriteRows(ctx, codes[:n*dom.Len()]); err != nil {
			return err
		}
		cells = cells[n:]
	}
	return nil
}
