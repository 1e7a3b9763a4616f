package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	stdcsv "encoding/csv"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/csv"

	"github.com/dpsynth/synth/universe"
)

// ReadCSV counts a CSV table read from r; name is the file name used in
// errors and Stats. The first record is the header. Every field is read as
// text and encoded with universe.Attribute.EncodeString; the declared null
// token is the only missing value.
func ReadCSV(ctx context.Context, r io.Reader, name string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	raw, err := headerRecord(br)
	if err != nil {
		return nil, nil, &ReadError{File: name, Err: err}
	}
	if len(raw) == 0 {
		return nil, nil, &DataError{File: name, Err: ErrEmpty}
	}
	names, err := stdcsv.NewReader(bytes.NewReader(raw)).Read()
	if err != nil {
		return nil, nil, &DataError{File: name, Err: fmt.Errorf("%w: header: %v", ErrMalformed, err)}
	}
	b, err := bind(name, names, dom, opts.CountColumn)
	if err != nil {
		return nil, nil, err
	}
	// Every column is read as text, so that the domain (not the reader)
	// decides what is valid and errors can name row and column.
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String}
	}
	// The Arrow reader reads the header again: its encoding/csv reader then
	// holds every later record to the header's number of fields.
	rr := csv.NewReader(io.MultiReader(bytes.NewReader(raw), br), arrow.NewSchema(fields, nil),
		csv.WithHeader(true), csv.WithChunk(opts.batchRows()))
	defer rr.Release()
	src := &source{file: name, format: CSV, rr: rr, b: b, readErr: func(err error, row int64) error {
		var pe *stdcsv.ParseError
		switch {
		case errors.As(err, &pe) && errors.Is(pe.Err, stdcsv.ErrFieldCount):
			return &DataError{File: name, Row: row, Err: fmt.Errorf("%w: the header has %d (line %d)", ErrFieldCount, len(names), pe.Line)}
		case errors.As(err, &pe):
			return &DataError{File: name, Row: row, Err: fmt.Errorf("%w: line %d, byte %d: %v", ErrMalformed, pe.Line, pe.Column, pe.Err)}
		case errors.Is(err, csv.ErrMismatchFields):
			return &DataError{File: name, Row: row, Err: fmt.Errorf("%w: the header has %d", ErrFieldCount, len(names))}
		}
		return &ReadError{File: name, Err: err}
	}}
	c, st, err := count(ctx, src, dom, &opts)
	var de *DataError
	if errors.As(err, &de) && errors.Is(de.Err, ErrNoRows) {
		return nil, nil, &DataError{File: name, Err: fmt.Errorf("%w: the file has a header but no data rows", ErrNoRows)}
	}
	return c, st, err
}

// headerRecord reads the bytes of the header record: the first non-blank
// line, continued while a quoted field spans lines. A UTF-8 byte order mark
// is dropped. It returns no bytes for an empty file.
func headerRecord(br *bufio.Reader) ([]byte, error) {
	var raw []byte
	quotes := 0
	first := true
	for {
		line, err := br.ReadBytes('\n')
		if first {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			first = false
		}
		if len(raw) == 0 && len(bytes.TrimRight(line, "\r\n")) == 0 {
			line = nil // blank lines before the header are skipped, as encoding/csv does
		}
		raw = append(raw, line...)
		quotes += bytes.Count(line, []byte{'"'})
		if err == io.EOF {
			return raw, nil
		}
		if err != nil {
			return nil, err
		}
		if len(raw) > 0 && quotes%2 == 0 {
			return raw, nil
		}
	}
}
