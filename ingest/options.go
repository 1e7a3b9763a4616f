package ingest

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/dpsynth/synth/contrib"
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

	// Columns, when set, names the attributes to use: the caller projects
	// the domain onto them (Options.Domain) and table columns not listed
	// are ignored.
	Columns []string
	// ExcludeColumns names attributes to leave out: the caller drops them
	// from the domain (Options.Domain) and table columns of these names are
	// ignored.
	ExcludeColumns []string
	// ShowValues prints the bad values themselves in a DataError's
	// message. By default a message says where a bad value is and why it
	// is refused, not what it is: values are private data, and messages
	// land in logs.
	ShowValues bool

	// IgnoreExtraColumns ignores table columns the domain does not list;
	// by default they are an error (ErrExtraColumn) naming the column.
	IgnoreExtraColumns bool

	// Stdin is what ReadFile reads for the path "-" (nil: os.Stdin).
	Stdin io.Reader

	// PrivacyUnit names the column that identifies a privacy unit (a
	// person, an account); "" makes every row its own unit. With it, each
	// unit keeps at most MaxRowsPerUnit rows, chosen by the rule of package
	// contrib keyed by UnitSalt, before anything is counted (across every
	// part file), and the returned counts are the kept rows. The column may
	// be text, an integer, a float, a boolean or a dictionary of them; a
	// null or empty unit is a bad value. Its values never appear in an
	// error. It must not be an attribute of the domain.
	PrivacyUnit    string
	MaxRowsPerUnit int
	UnitSalt       contrib.Salt
	// UnitMemory bounds the grouping by unit (about UnitEntryBytes per
	// distinct (unit, cell) pair) before it spills to files in SpillDir
	// (0: DefaultUnitMemory; "": os.TempDir()).
	UnitMemory uint64
	SpillDir   string

	grouping *grouping // the read's grouping by unit, shared by its part files
}

// Domain returns dom projected onto Columns (when set) and without
// ExcludeColumns: the domain to read with these options (and to compile
// workloads against). Unknown names are a *universe.NameError naming the
// option (--columns or --exclude-columns).
func (o *Options) Domain(dom *universe.Domain) (*universe.Domain, error) {
	var err error
	if len(o.Columns) > 0 {
		if dom, err = dom.Project(o.Columns); err != nil {
			return nil, withOption(err, "--columns")
		}
	}
	if len(o.ExcludeColumns) > 0 {
		if dom, err = dom.Exclude(o.ExcludeColumns); err != nil {
			return nil, withOption(err, "--exclude-columns")
		}
	}
	return dom, nil
}

func withOption(err error, option string) error {
	if ne, ok := err.(*universe.NameError); ok {
		ne.Option = option
	}
	return err
}

// ignores reports whether a table column that is not an attribute of the
// (projected) domain is skipped under these options.
func (o *Options) ignores(name string) bool {
	return o.IgnoreExtraColumns || len(o.Columns) > 0 && !slices.Contains(o.Columns, name) || slices.Contains(o.ExcludeColumns, name)
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
	// Parts lists the part files read, in order, when the input was a
	// folder or a glob pattern (nil for a single file or stdin).
	Parts []string
	// Distinct is the number of distinct cells with a positive count.
	Distinct int
	// Repairs holds the repairs made under the Policy, one entry per
	// attribute in domain order.
	Repairs []Repairs

	// With Options.PrivacyUnit: the distinct units, the rows dropped beyond
	// MaxRowsPerUnit, how many rows the units have, and the counts of every
	// row before the bound (N and Distinct describe the kept rows). All of
	// them are exact statistics of the private data: for the operator and
	// the internal report only.
	Units           int64
	UnitRowsDropped int64
	RowsPerUnit     *UnitSummary
	AllCounts       *universe.Counts
}

// Repairs counts the values of one attribute changed by a Policy.
type Repairs struct {
	Attribute     string `json:"attribute"`
	Clamped       int64  `json:"clamped"`         // moved to the nearest bound (Policy.Clamp)
	MappedToOther int64  `json:"mapped_to_other"` // mapped to the declared other value (Policy.UnknownToOther)
}

// Repaired is the total number of values repaired, over all attributes.
func (s *Stats) Repaired() int64 {
	var t int64
	for _, r := range s.Repairs {
		t += r.Clamped + r.MappedToOther
	}
	return t
}
