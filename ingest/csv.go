package ingest

import (
	"bufio"
	"bytes"
	"context"
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/csv"

	"github.com/dpsynth/synth/universe"
)

// chunkBytes is the target size of the CSV chunks handed to the workers
// (a variable so that tests can cut tiny chunks).
var chunkBytes = 1 << 20

// maxRecordBytes bounds the bytes read while looking for the end of one
// record: an unbalanced quote would otherwise pull the rest of the file into
// memory. Past it the chunk is parsed as is, and the CSV reader reports the
// open quote at its row.
var maxRecordBytes = 64 << 20

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, chunkBytes); return &b }}

// ReadCSV counts a CSV table read from r; name is the file name used in
// errors and Stats. The first record is the header. Every field is read as
// text and encoded with universe.Attribute.EncodeString; the declared null
// token is the only missing value. Input that starts with the gzip or zstd
// magic bytes is decompressed first (whatever its name); a corrupt stream
// is a *DataError wrapping ErrMalformed.
//
// The input is cut into chunks of whole records (a newline outside quotes
// ends a record) that the workers parse in parallel, each with Arrow's CSV
// reader, so that parsing uses every core.
func ReadCSV(ctx context.Context, r io.Reader, name string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	return withUnits(ctx, name, dom, opts, func(o Options) (*universe.Counts, *Stats, error) { return readCSV(ctx, r, name, dom, o) })
}

func readCSV(ctx context.Context, r io.Reader, name string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	raw := &srcReader{r: r}
	text, kind, closeText, err := decompress(newPeekReader(raw), raw)
	if err != nil {
		return nil, nil, streamErr(name, err)
	}
	defer closeText()
	br, ok := text.(*bufio.Reader)
	if kind != "" || !ok {
		br = newPeekReader(text)
	}
	header, err := headerRecord(br)
	if err != nil {
		return nil, nil, streamErr(name, err)
	}
	if len(header) == 0 {
		return nil, nil, &DataError{File: name, Err: ErrEmpty}
	}
	names, err := stdcsv.NewReader(bytes.NewReader(header)).Read()
	if err != nil {
		return nil, nil, &DataError{File: name, Err: fmt.Errorf("%w: header: %v", ErrMalformed, err)}
	}
	if header[len(header)-1] != '\n' {
		header = append(header, '\n')
	}
	b, err := bind(name, names, dom, &opts)
	if err != nil {
		return nil, nil, err
	}
	// Every column is read as text, so that the domain (not the reader)
	// decides what is valid and errors can name row and column.
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String}
	}
	sc := arrow.NewSchema(fields, nil)
	cols, err := plan(name, sc, b)
	if err != nil {
		return nil, nil, err
	}
	src := &source{file: name, format: CSV, b: b, schema: sc, cols: cols, header: header,
		readErr: func(err error, row int64) error {
			var pe *stdcsv.ParseError
			switch {
			case errors.As(err, &pe) && errors.Is(pe.Err, stdcsv.ErrFieldCount):
				return &DataError{File: name, Row: row, Err: fmt.Errorf("%w: the header has %d", ErrFieldCount, len(names))}
			case errors.As(err, &pe):
				return &DataError{File: name, Row: row, Err: fmt.Errorf("%w: %v", ErrMalformed, pe.Err)}
			case errors.Is(err, csv.ErrMismatchFields):
				return &DataError{File: name, Row: row, Err: fmt.Errorf("%w: the header has %d", ErrFieldCount, len(names))}
			}
			return &ReadError{File: name, Err: err}
		}}
	c, st, err := count(ctx, src, dom, &opts, feedCSV(br, name))
	var de *DataError
	if errors.As(err, &de) && errors.Is(de.Err, ErrNoRows) {
		return nil, nil, &DataError{File: name, Err: fmt.Errorf("%w: the file has only a header row", ErrNoRows)}
	}
	return c, st, err
}

// feedCSV cuts the input into chunks of whole records.
func feedCSV(r io.Reader, name string) feeder {
	return func(emit func(job) bool) error {
		var tail []byte // the start of an incomplete record
		for {
			bp := chunkPool.Get().(*[]byte)
			buf := append((*bp)[:0], tail...)
			size := max(chunkBytes, 2*len(tail))
			var err error
			cut := 0
			for {
				// Fill the buffer; read more when one record does not fit.
				buf = slices.Grow(buf, size-len(buf))
				for len(buf) < size && err == nil {
					var n int
					n, err = r.Read(buf[len(buf):size])
					buf = buf[:len(buf)+n]
				}
				if err != nil {
					cut = len(buf) // at the end every byte is part of a record
					break
				}
				if cut = lastRecordEnd(buf); cut > 0 {
					break
				}
				if size >= maxRecordBytes {
					cut = len(buf) // no record end within maxRecordBytes
					break
				}
				size *= 2
			}
			if err != nil && err != io.EOF {
				chunkPool.Put(bp)
				return streamErr(name, err)
			}
			tail = append(tail[:0], buf[cut:]...)
			*bp = buf[:cut]
			if cut > 0 && !emit(job{chunk: bp}) {
				return nil
			}
			if cut == 0 {
				chunkPool.Put(bp)
			}
			if err == io.EOF {
				return nil
			}
		}
	}
}

// lastRecordEnd returns the length of the longest prefix of b made of
// whole records: the position after the last newline outside quotes (a
// doubled quote inside a quoted field toggles twice, so counting quotes
// is enough). It returns 0 when b holds no complete record.
func lastRecordEnd(b []byte) int {
	end, pos, quoted := 0, 0, false
	for {
		q := bytes.IndexByte(b[pos:], '"')
		seg := b[pos:]
		if q >= 0 {
			seg = seg[:q]
		}
		if !quoted {
			if i := bytes.LastIndexByte(seg, '\n'); i >= 0 {
				end = pos + i + 1
			}
		}
		if q < 0 {
			return end
		}
		quoted = !quoted
		pos += q + 1
	}
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
