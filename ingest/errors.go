package ingest

import (
	"errors"
	"strconv"
	"strings"
)

// Kinds of data errors that are not about one value; a DataError's Err
// wraps one of these (test with errors.Is). Value errors wrap a
// *universe.ValueError instead.
var (
	ErrEmpty          = errors.New("empty file: no header row")
	ErrNoRows         = errors.New("no data rows")
	ErrMissingColumn  = errors.New("missing column")
	ErrDuplicateCol   = errors.New("duplicate column")
	ErrExtraColumn    = errors.New("extra column")
	ErrFieldCount     = errors.New("wrong number of fields")
	ErrMalformed      = errors.New("malformed input")
	ErrBadCount       = errors.New("count must be a non-negative integer")
	ErrColumnType     = errors.New("unsupported column type")
	ErrCountConflict  = errors.New("count column is also an attribute")
	ErrCountOverflows = errors.New("total count exceeds 2^63-1")
)

// DataError is bad input: a value outside the declared domain, a problem
// with the columns, a malformed row or an empty file.
type DataError struct {
	File string
	// Row is the 1-based data row: the header is not counted and blank CSV
	// lines are skipped. It is 0 when the error is not about one row (the
	// header, the columns, an empty file).
	Row int64
	// Column is the column's name, or "" when the error is not about one
	// column (a malformed row, an empty file).
	Column string
	// Err says what is wrong. For values it is a *universe.ValueError, whose
	// message includes the declared domain.
	Err error
}

func (e *DataError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": ")
	switch {
	case e.Row > 0:
		b.WriteString("row ")
		b.WriteString(strconv.FormatInt(e.Row, 10))
	case e.Column != "":
		b.WriteString("header")
	}
	if e.Column != "" {
		b.WriteString(", column ")
		b.WriteString(strconv.Quote(e.Column))
	}
	if e.Row > 0 || e.Column != "" {
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *DataError) Unwrap() error { return e.Err }

// ReadError is a failure of the underlying reader (an I/O error), as
// opposed to bad data.
type ReadError struct {
	File string
	Err  error
}

func (e *ReadError) Error() string { return "reading " + e.File + ": " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }
