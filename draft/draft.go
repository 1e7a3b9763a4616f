package draft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/dpsynth/synth/privacy"
)

// Settings are the public inputs of a draft.
type Settings struct {
	// Epsilon and Delta are the total budget of the draft. Epsilon == 0
	// means "schema only": no row is read, nothing is spent, and every
	// column gets a placeholder to fill in. With Epsilon > 0, Delta must be
	// in (0, 1): Gaussian noise and partition selection need it.
	Epsilon, Delta float64
	// PrivacyUnit names the column that identifies the person; "" means one
	// row is one unit. The column is read to group rows, never drafted and
	// never written.
	PrivacyUnit string
	// MaxRowsPerUnit is K, the most rows a unit keeps (default 1 when
	// PrivacyUnit is set; it must be 0 or 1 without PrivacyUnit). The rows
	// of a unit beyond K are dropped at random (package contrib's rule,
	// keyed by a salt drawn from the Rand) before any statistic.
	MaxRowsPerUnit int
	// NullSpellings are the public candidate spellings of a missing value
	// in text columns; an empty list means DefaultNullSpellings.
	NullSpellings []string
	// Bins is the target number of bins of numeric and integer columns
	// (default 16).
	Bins int
	// MaxCategories is the most categories kept per column (default 1000).
	MaxCategories int
	// TimeZone is the IANA zone of timestamps written without an offset and
	// of the drafted timestamp bounds (default "UTC").
	TimeZone string
	// Exclude lists columns not drafted (the unit column always is).
	Exclude []string
	// Created is the time written in the draft's "created" field; the zero
	// value means now.
	Created time.Time
	// MemoryCap bounds the memory of the values held for the draft, in
	// bytes (0: DefaultMemoryCap). A draft holds every kept value of the
	// drafted columns (about 16 bytes per text field and 8 per number, plus
	// the unit's text); a table over the cap is refused with a
	// *MemoryError, before any row is read when its size is known (a
	// Parquet file's row count), else as soon as the rows read pass it.
	MemoryCap uint64
}

// DefaultMemoryCap is the default of Settings.MemoryCap: 4 GiB.
const DefaultMemoryCap = 4 << 30

// MemoryError refuses a table whose values would not fit
// Settings.MemoryCap. BeforeRead says no row was read.
type MemoryError struct {
	Rows       int64
	Need, Cap  uint64
	BeforeRead bool
}

func (e *MemoryError) Error() string {
	when := "after reading"
	if e.BeforeRead {
		when = "before reading: the table has"
	}
	return fmt.Sprintf("draft: %s %d rows, the draft's values need about %.1f GiB, over the memory cap of %.1f GiB: "+
		"draft from a uniformly random sample of the rows (its guarantee then holds for the sample, and sampling only strengthens it), "+
		"leave wide text columns out with --exclude-columns, or raise --memory-cap",
		when, e.Rows, float64(e.Need)/(1<<30), float64(e.Cap)/(1<<30))
}

// DefaultNullSpellings are the candidate spellings of a missing value when
// Settings.NullSpellings is empty.
var DefaultNullSpellings = []string{"", "NA", "N/A", "NULL", "null", "?", "NaN"}

// Draft is a proposed domain file.
type Draft struct {
	// JSON is the domain file: {"draft": {...}, "attributes": [...]}.
	JSON []byte
	// Spent is what the draft spent: privacy.ApproxCost(ε, δ) with ε <=
	// Settings.Epsilon and δ <= Settings.Delta; ApproxCost(0, 0) for a
	// schema-only draft.
	Spent privacy.Cost
	// Notes are public statements about the draft, the same as the JSON's
	// "draft"."notes": the privacy guarantee, and per column how it was
	// drafted (thresholds, quantiles, placeholders to fill in).
	Notes []string
}

// Defaults of Settings.
const (
	DefaultBins          = 16
	DefaultMaxCategories = 1000
	DefaultTimeZone      = "UTC"
)

// settings are the validated Settings with their defaults applied.
type settings struct {
	Settings
	k     int // MaxRowsPerUnit
	loc   *time.Location
	nulls []string // deduplicated spellings
}

// Validate reports an error for settings a draft refuses (before it reads
// anything).
func (s Settings) Validate() error {
	_, err := s.check()
	return err
}

func (s Settings) check() (*settings, error) {
	out := &settings{Settings: s}
	switch {
	case math.IsNaN(s.Epsilon) || math.IsInf(s.Epsilon, 0) || s.Epsilon < 0:
		return nil, fmt.Errorf("draft: epsilon = %v: must be finite and >= 0 (0 drafts from the schema only)", s.Epsilon)
	case math.IsNaN(s.Delta) || s.Delta < 0 || s.Delta >= 1:
		return nil, fmt.Errorf("draft: delta = %v: must be in [0, 1)", s.Delta)
	case s.Epsilon > 0 && s.Delta == 0:
		return nil, errors.New("draft: a draft with epsilon > 0 needs delta > 0 (its Gaussian noise and partition selection are (ε, δ)-DP), e.g. 1e-9")
	}
	switch {
	case s.MaxRowsPerUnit < 0:
		return nil, fmt.Errorf("draft: max rows per unit = %d: must be >= 1", s.MaxRowsPerUnit)
	case s.MaxRowsPerUnit > 1 && s.PrivacyUnit == "":
		return nil, fmt.Errorf("draft: max rows per unit = %d needs a privacy-unit column (without one, a unit is one row)", s.MaxRowsPerUnit)
	}
	out.k = max(s.MaxRowsPerUnit, 1)
	if out.MemoryCap == 0 {
		out.MemoryCap = DefaultMemoryCap
	}
	if out.Bins <= 0 {
		out.Bins = DefaultBins
	}
	if out.MaxCategories <= 0 {
		out.MaxCategories = DefaultMaxCategories
	}
	if out.TimeZone == "" {
		out.TimeZone = DefaultTimeZone
	}
	loc, err := time.LoadLocation(out.TimeZone)
	if err == nil && out.TimeZone == "Local" {
		err = errors.New("not an IANA zone name")
	}
	if err != nil {
		return nil, fmt.Errorf("draft: time zone %q: %v", out.TimeZone, err)
	}
	out.loc = loc
	src := s.NullSpellings
	if len(src) == 0 {
		src = DefaultNullSpellings
	}
	for _, n := range src {
		if !slices.Contains(out.nulls, n) {
			out.nulls = append(out.nulls, n)
		}
	}
	return out, nil
}

// Records drafts a domain for the table whose schema is schema and whose
// record batches next returns, one after the other, until it returns io.EOF.
// Records reads each batch completely before it calls next again and keeps
// no reference to it; the producer keeps ownership (as with
// array.RecordReader). String and dictionary-of-string columns are voted on
// as text; boolean, integer, float, decimal, date and timestamp columns take
// their kind from the schema; columns of other types are left out (a note
// says so). With Settings.Epsilon == 0, next is never called.
//
// r is the only source of randomness (privacy.NewSecure for a release,
// privacy.NewSeeded for tests: a seeded draft is not private against anyone
// who knows the seed).
func Records(ctx context.Context, schema *arrow.Schema, next func() (arrow.RecordBatch, error), s Settings, r *privacy.Rand) (*Draft, error) {
	st, err := s.check()
	if err != nil {
		return nil, err
	}
	t, err := newTable(schema, st)
	if err != nil {
		return nil, err
	}
	if st.Epsilon == 0 {
		return schemaOnly(t, st)
	}
	if r == nil {
		return nil, errors.New("draft: a nil *privacy.Rand (use privacy.NewSecure)")
	}
	if next == nil {
		return nil, errors.New("draft: a nil record source")
	}
	p, err := newPlan(t, st)
	if err != nil {
		return nil, err
	}
	// The whole plan is charged before any record is read.
	ledger, err := p.charge(st)
	if err != nil {
		return nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if rec == nil {
			continue
		}
		if err := t.append(rec); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return run(t, p, st, ledger, r)
}

// run draws the noise, column after column, and writes the draft.
func run(t *table, p *plan, st *settings, ledger *privacy.Ledger, r *privacy.Rand) (*Draft, error) {
	var groups [][]int32
	if st.PrivacyUnit != "" {
		var err error
		groups, err = t.bound(st.k, r)
		if err != nil {
			return nil, err
		}
	}
	rows := keptRows(groups, t.n)
	attrs := make([]attribute, 0, len(t.cols))
	var notes []string
	// One stream per column: a column's noise does not depend on how many
	// draws the columns before it took.
	streams := r.SplitN(len(t.cols))
	for i, c := range t.cols {
		a, cn, err := draftColumn(c, &p.cols[i], rows, groups, st, streams[i])
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, a)
		notes = append(notes, cn...)
	}
	notes = append(p.notes(t, st), append(notes, t.skippedNotes()...)...)
	sp := ledger.Spent()
	spent := privacy.ApproxCost(sp.Eps, st.Delta)
	js, err := encode(st, notes, attrs)
	if err != nil {
		return nil, err
	}
	return &Draft{JSON: js, Spent: spent, Notes: notes}, nil
}

// keptRows lists the rows kept by contribution bounding (every row without
// a privacy unit).
func keptRows(groups [][]int32, n int) []int32 {
	if groups == nil {
		rows := make([]int32, n)
		for i := range rows {
			rows[i] = int32(i)
		}
		return rows
	}
	var rows []int32
	for _, g := range groups {
		rows = append(rows, g...)
	}
	slices.Sort(rows)
	return rows
}

// draftColumn runs one column's mechanisms: the kind vote, then the values
// stage its kind calls for (partition selection or quantile bounds).
func draftColumn(c *column, cp *colPlan, rows []int32, groups [][]int32, st *settings, r *privacy.Rand) (attribute, []string, error) {
	v := voteColumn(c, cp, rows, st, r)
	a := attribute{Name: c.name}
	notes := v.notes(c)
	if v.null != nil {
		a.Null = v.null
	}
	switch v.kind {
	case kindNone:
		a.Type = "categorical"
		a.Values = []string{NoneFound}
		notes = append(notes, fmt.Sprintf("column %q: too few values to draft (the noisy count of non-missing values is below %s): the placeholder %q must be replaced by the column's categories (or the type changed), or the column excluded",
			c.name, fmtCount(v.minRows), NoneFound))
	case kindBool:
		a.Type = "boolean"
	case kindText:
		vals, cn := selectCategories(c, cp, v, rows, groups, st, r)
		a.Type = "categorical"
		a.Values = vals
		if len(vals) > 0 && vals[0] != NoneFound && !slices.Contains(vals, OtherValue) {
			// Rare values cannot appear: an "other" value receives them
			// under --unknown-to-other (post-processing of the selection).
			a.Values = append(vals, OtherValue)
			a.Other = OtherValue
		}
		notes = append(notes, cn...)
	case kindInt, kindReal, kindDate, kindTimestamp:
		bn, err := draftBounds(c, cp, v, rows, st, r, &a)
		if err != nil {
			return a, nil, err
		}
		notes = append(notes, bn...)
	}
	return a, notes, nil
}

// OtherValue is the "other" category a drafted categorical column declares,
// so that a release with --unknown-to-other maps the values too rare to
// be selected to it.
const OtherValue = "(other)"

// NoneFound is the placeholder category of a text column for which no value
// passed the selection threshold; the draft's notes ask the user to edit or
// exclude the column.
const NoneFound = "(none found)"

// FillMe is the placeholder category of a schema-only draft's text columns.
const FillMe = "FILL ME"
