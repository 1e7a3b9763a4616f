package ingest

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/dpsynth/synth/universe"
)

// Format is the format of an input file.
type Format uint8

// Input formats.
const (
	// Auto detects the format: Parquet for files that start with the
	// Parquet magic "PAR1" or end in .parquet, .parq or .pq; CSV otherwise.
	Auto Format = iota
	CSV
	Parquet
)

var formatNames = [...]string{Auto: "auto", CSV: "csv", Parquet: "parquet"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", f)
}

// ParseFormat returns the format called s ("auto", "csv" or "parquet").
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if strings.EqualFold(s, n) {
			return Format(i), nil
		}
	}
	return Auto, fmt.Errorf("unknown format %q (want auto, csv or parquet)", s)
}

// DefaultBatchRows is the number of rows per record batch when
// Options.BatchRows is zero.
const DefaultBatchRows = 16384

// Options configure a read. The zero value reads one record per row,
// detects the format, repairs nothing, uses batches of DefaultBatchRows rows
// and one worker per CPU (GOMAXPROCS).
type Options struct {
	// Format of the input; Auto (the zero value) detects it. Only ReadFile
	// looks at it.
	Format Format
	// Policy lists the row-wise repairs allowed; the zero value allows none.
	Policy universe.Policy
	// CountColumn names the count column of pre-aggregated input; "" means
	// every row is one record.
	CountColumn string
	// BatchRows is the number of rows per record batch (0: DefaultBatchRows).
	BatchRows int
	// Workers is the number of goroutines that encode batches (0: GOMAXPROCS).
	Workers int
}

func (o *Options) batchRows() int {
	if o.BatchRows > 0 {
		return o.BatchRows
	}
	return DefaultBatchRows
}

func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Stats describes a completed read.
type Stats struct {
	File   string
	Format Format
	// Rows is the number of data rows read (the header is not counted).
	Rows int64
	// N is the number of records counted: Rows, or the sum of the count
	// column for pre-aggregated input.
	N int64
	// Distinct is the number of distinct cells with a positive count.
	Distinct int
	// Repairs holds the repairs made under the Policy, one entry per
	// attribute in domain order.
	Repairs []Repairs
}

// Repairs counts the values of one attribute changed by a Policy.
type Repairs struct {
	Attribute     string
	Clamped       int64 // moved to the nearest bound (Policy.Clamp)
	MappedToOther int64 // mapped to the declared other value (Policy.UnknownToOther)
}

// Repaired is the total number of values repaired, over all attributes.
func (s *Stats) Repaired() int64 {
	var t int64
	for _, r := range s.Repairs {
		t += r.Clamped + r.MappedToOther
	}
	return t
}
