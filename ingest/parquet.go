package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpsynth/synth/universe"
)

// ReaderAtSeeker is what a Parquet reader needs: random access to the file
// (its footer is at the end). *os.File and *bytes.Reader satisfy it.
type ReaderAtSeeker interface {
	io.ReaderAt
	io.Seeker
}

// ReadParquet counts a Parquet table read from r; name is the file name
// used in errors and Stats. Columns are matched by their top-level field
// names; string, integer and float columns (plain or dictionary-encoded)
// are supported and Parquet nulls go to the attribute's null code.
//
// The file is decoded by Arrow's pqarrow into record batches, one row group
// after the other (see docs/BENCHMARKS.md for the comparison with
// parquet-go that chose it).
func ReadParquet(ctx context.Context, r ReaderAtSeeker, name string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	return withUnits(ctx, name, dom, opts, func(o Options) (*universe.Counts, *Stats, error) { return readParquet(ctx, r, name, dom, o) })
}

func readParquet(ctx context.Context, r ReaderAtSeeker, name string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	pf, err := file.NewParquetReader(r)
	if err != nil {
		return nil, nil, parquetErr(name, 0, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(opts.batchRows())}, batchAllocator)
	if err != nil {
		return nil, nil, parquetErr(name, 0, err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return nil, nil, parquetErr(name, 0, err)
	}
	names := make([]string, sc.NumFields())
	for i := range names {
		names[i] = sc.Field(i).Name
	}
	b, err := bind(name, names, dom, &opts)
	if err != nil {
		return nil, nil, err
	}
	if pf.NumRows() == 0 {
		return nil, nil, &DataError{File: name, Err: fmt.Errorf("%w: the file has a schema but no rows", ErrNoRows)}
	}
	cols, err := plan(name, sc, b)
	if err != nil {
		return nil, nil, err
	}
	// Read only the columns used: a warehouse table may have many more.
	var leaves []int
	if len(cols) < sc.NumFields() {
		for _, c := range cols {
			leaves = append(leaves, fr.Manifest.Fields[c.field].ColIndex)
		}
	}
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return nil, nil, parquetErr(name, 0, err)
	}
	if leaves != nil {
		sc = rr.Schema()
		names = names[:0]
		for i := range sc.NumFields() {
			names = append(names, sc.Field(i).Name)
		}
		if b, err = bind(name, names, dom, &opts); err == nil {
			cols, err = plan(name, sc, b)
		}
		if err != nil {
			rr.Release()
			return nil, nil, err
		}
	}
	defer rr.Release()
	readErr := func(err error, row int64) error { return parquetErr(name, row, err) }
	src := &source{file: name, format: Parquet, b: b, schema: sc, cols: cols, readErr: readErr}
	return count(ctx, src, dom, &opts, feedRecords(rr, readErr))
}

// parquetErr classifies a failure of the Parquet reader: errors of the
// underlying file are I/O errors, the rest mean the file is not valid
// Parquet (bad data).
func parquetErr(name string, row int64, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) || errors.Is(err, context.Canceled) {
		return &ReadError{File: name, Err: err}
	}
	return &DataError{File: name, Row: row, Err: fmt.Errorf("%w: not a valid Parquet file: %v", ErrMalformed, err)}
}
