package ingest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dpsynth/synth/universe"
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
	ErrMixedFormats   = errors.New("mixed formats")
	ErrNestedFolder   = errors.New("nested folder")
	ErrUnitConflict   = errors.New("privacy unit column conflict")
)

// MaxReported is the number of bad values a DataError lists; the others
// are only counted (DataError.Total).
const MaxReported = 20

// DataError is bad input: a value outside the declared domain, a problem
// with the columns, a malformed row or an empty file.
//
// A read does not stop at the first bad value: it goes on checking the
// whole input and returns one DataError for the first bad value, in input
// order (file, row, column), whatever the number of workers, with the
// following ones in More (at most MaxReported in all), their number in
// Total and the repairs that would apply in Hints. A malformed row (or
// any error that is not about a value) ends the read; it comes last.
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

	// More lists the errors found after this one, in input order: further
	// bad values, and last the error that ended the read, if one did. Their
	// own More is nil.
	More []*DataError
	// Total is the number of bad values found in all, listed or not (0 when
	// the error is not about values).
	Total int64
	// Hints suggest the repairs (flags or domain changes) that would apply
	// to the bad values found, e.g. --clamp for numbers out of range.
	Hints []string

	sugg []suggestion // what Hints are made from, kept to merge errors
}

// collected reports whether the read that returned e went to the end of
// its input (every error listed is about a value), so that a caller
// reading several files may go on with the next one.
func (e *DataError) collected() bool {
	for _, v := range e.Values() {
		if !isValueErr(v.Err) {
			return false
		}
	}
	return true
}

// Values returns the listed errors: e itself, then More.
func (e *DataError) Values() []*DataError {
	return append([]*DataError{e}, e.More...)
}

func (e *DataError) Error() string {
	var b strings.Builder
	e.line(&b)
	for _, m := range e.More {
		b.WriteByte('\n')
		m.line(&b)
	}
	listed := int64(0)
	for _, m := range e.Values() {
		if isValueErr(m.Err) {
			listed++
		}
	}
	if e.Total > listed {
		fmt.Fprintf(&b, "\n%d bad values in all; the first %d are listed", e.Total, listed)
	}
	for _, h := range e.Hints {
		b.WriteString("\nhint: ")
		b.WriteString(h)
	}
	if e.Total > 0 && e.hidesValues() {
		b.WriteString("\nhint: " + HiddenValuesHint)
	}
	return b.String()
}

// HiddenValuesHint ends a message whose bad values are not printed.
const HiddenValuesHint = "the values themselves are not printed (they are private data, and messages land in logs); --show-values prints them"

// hidesValues reports whether a listed value error leaves out its value.
func (e *DataError) hidesValues() bool {
	for _, v := range e.Values() {
		var ve *universe.ValueError
		if errors.As(v.Err, &ve) && !ve.Show && ve.Value != "" {
			return true
		}
	}
	return false
}

// line writes the one-line form of e.
func (e *DataError) line(b *strings.Builder) {
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
}

// isValueErr reports whether err is about one value (counted in Total).
func isValueErr(err error) bool {
	var ve *universe.ValueError
	return errors.As(err, &ve) || errors.Is(err, ErrBadCount)
}

// Kinds of repair suggestions, in the order hints are given.
const (
	suggClamp     uint8 = 1 << iota // out-of-range integer or numeric value: --clamp
	suggOther                       // unknown category, other declared: --unknown-to-other
	suggDeclare                     // unknown category, no other: declare it
	suggNull                        // missing value, no null token: declare one
	suggSize                        // encoded code past the size: declare a larger size
	suggNullToken                   // a usual spelling of a missing value ("NA"): declare it as the null token
	suggLabel                       // a bin's label ("[20, 30)") where a number is due: a file written with --bins label
)

// nullSpellings are the texts tables commonly use for a missing value.
var nullSpellings = []string{"NA", "N/A", "n/a", "na", "NaN", "nan", "null", "NULL", "Null", "None", "none", "?", "-", ".", "NIL", "nil", "#N/A"}

// suggestion is one kind of repair for one attribute.
type suggestion struct {
	kind  uint8
	token string // suggNullToken: the missing value's spelling
	idx   int    // the attribute's position in the domain, which orders hints
	attr  *universe.Attribute
}

// suggestKind returns the repair that would apply to a bad value (and, for
// a missing value spelled as text, the spelling).
func suggestKind(err error) (uint8, string) {
	var ve *universe.ValueError
	if !errors.As(err, &ve) {
		return 0, ""
	}
	if t := strings.TrimSpace(ve.Value); !ve.Attr.Nullable && slices.Contains(nullSpellings, t) {
		switch ve.Reason {
		case universe.ReasonUnknown, universe.ReasonNotNumber, universe.ReasonNotInteger, universe.ReasonNotFinite:
			return suggNullToken, strings.Clone(t) // t points into the batch, released after it
		}
	}
	if (ve.Reason == universe.ReasonNotNumber || ve.Reason == universe.ReasonNotInteger) && isLabel(ve.Attr, strings.TrimSpace(ve.Value)) {
		return suggLabel, ""
	}
	return suggestKindOf(ve), ""
}

// isLabel reports whether v is the label of one of a's codes ("[20, 30)",
// "0..49"): what synth release --bins label writes.
func isLabel(a *universe.Attribute, v string) bool {
	if !strings.ContainsAny(v, "[.") || a.Size() > 1<<16 {
		return false
	}
	for c := range a.Size() {
		if a.Label(c) == v {
			return true
		}
	}
	return false
}

func suggestKindOf(ve *universe.ValueError) uint8 {
	switch ve.Reason {
	case universe.ReasonRange:
		return suggClamp
	case universe.ReasonUnknown:
		if ve.Attr.HasOther {
			return suggOther
		}
		return suggDeclare
	case universe.ReasonNull:
		return suggNull
	case universe.ReasonNotCode:
		return suggSize
	}
	return 0
}

// hints renders suggestions, one line per kind, attributes in domain
// order.
func hints(ss []suggestion) []string {
	ss = slices.Clone(ss)
	slices.SortFunc(ss, func(a, b suggestion) int { return cmp.Compare(a.idx, b.idx) })
	var out []string
	for _, k := range []uint8{suggClamp, suggOther, suggDeclare, suggNull, suggNullToken, suggLabel, suggSize} {
		var names []string
		var others, tokens []string
		for _, s := range ss {
			if s.kind == k && !slices.Contains(names, strconv.Quote(s.attr.Name)) {
				names = append(names, strconv.Quote(s.attr.Name))
				others = append(others, fmt.Sprintf("%q of %q", s.attr.Other, s.attr.Name))
				tokens = append(tokens, fmt.Sprintf("\"null\": %q for %q", s.token, s.attr.Name))
			}
		}
		if len(names) == 0 {
			continue
		}
		list := strings.Join(names, ", ")
		switch k {
		case suggClamp:
			out = append(out, "--clamp moves numbers out of range ("+list+") to the nearest declared bound, row by row (the count goes to stderr and the internal report, never to a public file)")
		case suggOther:
			out = append(out, "--unknown-to-other maps unknown categories to the declared other value ("+strings.Join(others, ", ")+"), row by row (the count goes to stderr and the internal report, never to a public file)")
		case suggDeclare:
			out = append(out, "unknown categories of "+list+": declare them in the domain's \"values\", or declare an \"other\" value and use --unknown-to-other (docs/DOMAIN.md)")
		case suggNull:
			out = append(out, "missing values of "+list+": declare a null token in the domain, e.g. \"null\": \"\" for empty fields (docs/DOMAIN.md)")
		case suggNullToken:
			out = append(out, "missing values spelled as text in "+list+": declare the spelling as the attribute's null token, e.g. "+strings.Join(tokens, ", ")+" (docs/DOMAIN.md)")
		case suggLabel:
			out = append(out, "the values of "+list+" are bin labels such as \"[20, 30)\", as synth release --bins label writes them: such a file is for people; release with --bins midpoint or --bins uniform (or Parquet) to read the synthetic data back")
		case suggSize:
			out = append(out, "codes too large for "+list+": declare the right size in the domain (docs/DOMAIN.md)")
		}
	}
	return out
}

// addSuggestions appends the suggestions of src not yet in dst.
func addSuggestions(dst []suggestion, src ...suggestion) []suggestion {
	for _, s := range src {
		if !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

// joinErrors combines the errors of several files read in order into one
// DataError: the first MaxReported bad values of all, the error that ended
// the read last, the total and the hints of all.
func joinErrors(errs []*DataError) *DataError {
	var (
		vals  []*DataError
		stop  *DataError
		total int64
		sugg  []suggestion
	)
	for _, e := range errs {
		for _, v := range e.Values() {
			if isValueErr(v.Err) {
				if len(vals) < MaxReported {
					vals = append(vals, v)
				}
			} else {
				stop = v
			}
		}
		total += e.Total
		sugg = addSuggestions(sugg, e.sugg...)
	}
	if stop != nil {
		vals = append(vals, stop)
	}
	first := *vals[0]
	for _, v := range vals {
		v.More, v.Total, v.Hints, v.sugg = nil, 0, nil, nil
	}
	first.More, first.Total, first.sugg, first.Hints = vals[1:], total, sugg, hints(sugg)
	return &first
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
