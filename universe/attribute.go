package universe

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind is the kind of an attribute's domain.
type Kind uint8

// Attribute kinds.
const (
	// Encoded attributes hold codes 0..size-1 directly.
	Encoded Kind = iota
	// Categorical attributes hold one of an explicit list of strings.
	Categorical
	// Integer attributes hold integers in min..max, bucketed by width.
	Integer
	// Numeric attributes hold finite reals in [lower, upper], binned.
	Numeric
	// Boolean attributes hold false (code 0) or true (code 1).
	Boolean
	// Date attributes hold calendar days in lower..upper, binned by a
	// calendar unit (Edges are day numbers, the last one the day after
	// upper).
	Date
	// Timestamp attributes hold instants in [lower, upper], binned by a
	// calendar unit of a time zone (Edges are seconds since the epoch).
	Timestamp
)

var kindNames = [...]string{Encoded: "encoded", Categorical: "categorical", Integer: "integer", Numeric: "numeric",
	Boolean: "boolean", Date: "date", Timestamp: "timestamp"}

// String returns the name used for the kind in domain files.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// MaxAttributeSize is the largest number of codes one attribute may have
// (codes are stored as int32).
const MaxAttributeSize = math.MaxInt32

// Attribute is one column of the universe. Construct attributes through
// ParseDomain or the New* functions so that they are validated; the fields
// are exported for reading.
type Attribute struct {
	Name string
	Kind Kind

	// Values lists the categories of a Categorical attribute, in code order.
	Values []string
	// Other is the category unknown values map to under Policy.UnknownToOther.
	// HasOther reports whether one was declared.
	Other    string
	HasOther bool

	// Min, Max (inclusive) and Width describe an Integer attribute.
	Min, Max, Width int64

	// Edges are the bin edges of a Numeric attribute: bin i is
	// [Edges[i], Edges[i+1]), the last bin is closed on the right.
	// Bins > 0 records that the edges were declared as equal-width bins.
	Edges []float64
	Bins  int

	// Unit is the calendar unit of a Date or Timestamp attribute's bins,
	// and Zone the time zone whose calendar cuts them (UTC for dates).
	Unit CalUnit
	Zone *time.Location

	// Nullable attributes have a declared null token; missing values (the
	// token itself or a null in typed input) get the last code.
	Nullable  bool
	NullToken string

	size  int            // number of codes, including the null code
	index map[string]int // categorical value -> code
}

// NewEncoded returns a pre-encoded attribute with codes 0..size-1.
func NewEncoded(name string, size int) (*Attribute, error) {
	a := &Attribute{Name: name, Kind: Encoded, size: size}
	return a, a.init()
}

// NewCategorical returns a categorical attribute over values.
func NewCategorical(name string, values []string) (*Attribute, error) {
	a := &Attribute{Name: name, Kind: Categorical, Values: append([]string(nil), values...)}
	return a, a.init()
}

// NewInteger returns an integer attribute over min..max in buckets of width
// (width 0 means 1).
func NewInteger(name string, min, max, width int64) (*Attribute, error) {
	a := &Attribute{Name: name, Kind: Integer, Min: min, Max: max, Width: width}
	return a, a.init()
}

// NewNumeric returns a numeric attribute cut at edges (at least two,
// strictly increasing, finite).
func NewNumeric(name string, edges []float64) (*Attribute, error) {
	a := &Attribute{Name: name, Kind: Numeric, Edges: append([]float64(nil), edges...)}
	return a, a.init()
}

// NewNumericBins returns a numeric attribute over [lower, upper] cut into
// bins of equal width.
func NewNumericBins(name string, lower, upper float64, bins int) (*Attribute, error) {
	if bins <= 0 {
		return nil, fmt.Errorf("attribute %q: bins must be positive, got %d", name, bins)
	}
	if !finite(lower) || !finite(upper) || !(lower < upper) {
		return nil, fmt.Errorf("attribute %q: need finite lower < upper, got lower %v, upper %v", name, lower, upper)
	}
	edges := make([]float64, bins+1)
	for i := range edges {
		edges[i] = lower + (upper-lower)*float64(i)/float64(bins)
	}
	edges[bins] = upper
	a := &Attribute{Name: name, Kind: Numeric, Edges: edges, Bins: bins}
	return a, a.init()
}

// WithNull declares token as the attribute's null token and returns a.
// Missing values then map to a cell of their own, the last code.
func (a *Attribute) WithNull(token string) (*Attribute, error) {
	if a.Nullable {
		return nil, fmt.Errorf("attribute %q: null token declared twice", a.Name)
	}
	if a.Kind == Categorical {
		if _, ok := a.index[token]; ok {
			return nil, fmt.Errorf("attribute %q: null token %q is also a declared value", a.Name, token)
		}
	}
	if _, ok := ParseBool(token); ok && a.Kind == Boolean {
		return nil, fmt.Errorf("attribute %q: null token %q reads as a boolean", a.Name, token)
	}
	a.Nullable, a.NullToken = true, token
	a.size++
	if a.size > MaxAttributeSize {
		return nil, fmt.Errorf("attribute %q: %d codes exceed the limit of %d", a.Name, a.size, MaxAttributeSize)
	}
	return a, nil
}

// WithOther declares other (a declared value) as the category unknown
// values map to under Policy.UnknownToOther, and returns a.
func (a *Attribute) WithOther(other string) (*Attribute, error) {
	if a.Kind != Categorical {
		return nil, fmt.Errorf("attribute %q: \"other\" is only allowed for categorical attributes", a.Name)
	}
	if _, ok := a.index[other]; !ok {
		return nil, fmt.Errorf("attribute %q: other value %q is not one of the declared values", a.Name, other)
	}
	a.Other, a.HasOther = other, true
	return a, nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// init validates the declaration and computes the size.
func (a *Attribute) init() error {
	if a.Name == "" {
		return fmt.Errorf("attribute with an empty name")
	}
	var size int64
	switch a.Kind {
	case Encoded:
		size = int64(a.size)
		if size <= 0 {
			return fmt.Errorf("attribute %q: size must be positive, got %d", a.Name, size)
		}
	case Categorical, Boolean:
		if len(a.Values) == 0 {
			return fmt.Errorf("attribute %q: categorical attribute needs at least one value", a.Name)
		}
		a.index = make(map[string]int, len(a.Values))
		for i, v := range a.Values {
			if _, dup := a.index[v]; dup {
				return fmt.Errorf("attribute %q: value %q declared twice", a.Name, v)
			}
			a.index[v] = i
		}
		size = int64(len(a.Values))
	case Integer:
		if a.Width == 0 {
			a.Width = 1
		}
		if a.Width < 0 {
			return fmt.Errorf("attribute %q: width must be positive, got %d", a.Name, a.Width)
		}
		if a.Min > a.Max {
			return fmt.Errorf("attribute %q: min %d is greater than max %d", a.Name, a.Min, a.Max)
		}
		span := uint64(a.Max) - uint64(a.Min) // exact even when Max-Min overflows int64
		q := span / uint64(a.Width)
		if q >= MaxAttributeSize {
			return fmt.Errorf("attribute %q: %d..%d in buckets of %d gives more than %d codes, over the limit", a.Name, a.Min, a.Max, a.Width, uint64(MaxAttributeSize))
		}
		size64 := q + 1
		if size64 > MaxAttributeSize {
			return fmt.Errorf("attribute %q: %d..%d in buckets of %d gives %d codes, over the limit of %d", a.Name, a.Min, a.Max, a.Width, size64, MaxAttributeSize)
		}
		size = int64(size64)
	case Numeric, Date, Timestamp:
		if len(a.Edges) < 2 {
			return fmt.Errorf("attribute %q: numeric attribute needs at least two edges (or lower, upper and bins)", a.Name)
		}
		for i, e := range a.Edges {
			if !finite(e) {
				return fmt.Errorf("attribute %q: edge %d is %v; edges must be finite", a.Name, i, e)
			}
			if i > 0 && !(a.Edges[i-1] < e) {
				return fmt.Errorf("attribute %q: edges must be strictly increasing, edge %d (%v) is not above edge %d (%v)", a.Name, i, e, i-1, a.Edges[i-1])
			}
		}
		size = int64(len(a.Edges) - 1)
	default:
		return fmt.Errorf("attribute %q: unknown kind %d", a.Name, a.Kind)
	}
	if size > MaxAttributeSize {
		return fmt.Errorf("attribute %q: %d codes exceed the limit of %d", a.Name, size, MaxAttributeSize)
	}
	a.size = int(size)
	return nil
}

// Size is the number of codes of the attribute, including the null code of
// a nullable attribute.
func (a *Attribute) Size() int { return a.size }

// NullCode returns the code of missing values and whether the attribute is
// nullable.
func (a *Attribute) NullCode() (int, bool) {
	if !a.Nullable {
		return -1, false
	}
	return a.size - 1, true
}

// Ordered reports whether the attribute's codes follow the order of its
// values (integer, numeric and encoded attributes), so that ranges over
// codes are meaningful. The null code, if any, is not part of the order.
func (a *Attribute) Ordered() bool { return a.Kind != Categorical && a.Kind != Boolean }

// valueCodes is the number of codes that stand for declared values (all
// codes but the null code).
func (a *Attribute) valueCodes() int {
	if a.Nullable {
		return a.size - 1
	}
	return a.size
}

// Describe returns a short description of the declared domain, used in error
// messages, e.g. `categorical {"F", "M"}` or `integer 0..99 (width 10)`.
func (a *Attribute) Describe() string {
	var b strings.Builder
	switch a.Kind {
	case Encoded:
		fmt.Fprintf(&b, "encoded codes 0..%d", a.valueCodes()-1)
	case Categorical:
		b.WriteString("categorical {")
		const show = 12
		for i, v := range a.Values {
			if i == show {
				fmt.Fprintf(&b, ", … %d values in all", len(a.Values))
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(v))
		}
		b.WriteString("}")
		if a.HasOther {
			fmt.Fprintf(&b, " other %q", a.Other)
		}
	case Integer:
		fmt.Fprintf(&b, "integer %d..%d", a.Min, a.Max)
		if a.Width > 1 {
			fmt.Fprintf(&b, " (width %d)", a.Width)
		}
	case Numeric:
		fmt.Fprintf(&b, "numeric [%s, %s] in %d bins", fmtFloat(a.Edges[0]), fmtFloat(a.Edges[len(a.Edges)-1]), len(a.Edges)-1)
	case Boolean:
		b.WriteString("boolean")
	case Date, Timestamp:
		lo, hi := a.calBounds()
		fmt.Fprintf(&b, "%v %s..%s by %v", a.Kind, lo, hi, a.Unit)
		if a.Kind == Timestamp && a.Zone != time.UTC {
			fmt.Fprintf(&b, " in %s", a.Zone)
		}
	}
	if a.Nullable {
		fmt.Fprintf(&b, ", null %q", a.NullToken)
	}
	return b.String()
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Policy selects the explicit, row-wise repairs the caller allows. The zero
// value allows none: every value outside the declared domain is an error.
type Policy struct {
	// Clamp moves integer and numeric values outside the declared bounds to
	// the nearest bound.
	Clamp bool
	// UnknownToOther maps unknown categorical values to the attribute's
	// declared other value (attributes without one still reject them).
	UnknownToOther bool
}

// Repair reports which policy, if any, changed a value.
type Repair uint8

// Repairs applied by a Policy.
const (
	NoRepair Repair = iota
	Clamped
	MappedToOther
)

// Reasons carried by ValueError.
const (
	ReasonUnknown      = "unknown category"
	ReasonRange        = "out of range"
	ReasonNotNumber    = "not a number"
	ReasonNotInteger   = "not an integer"
	ReasonNotFinite    = "not finite (NaN or Inf)"
	ReasonNull         = "missing value but no null token is declared"
	ReasonNotCode      = "not a valid code"
	ReasonNotCategory  = "numeric input for a categorical attribute"
	ReasonNotBool      = "not a boolean (true/false, t/f, yes/no, y/n or 1/0)"
	ReasonNotDate      = "not an ISO date (YYYY-MM-DD)"
	ReasonNotTimestamp = "not an RFC 3339 timestamp"
	ReasonNotTime      = "not a date or time value"
)

// ValueError reports a value outside an attribute's declared domain. Ingest
// wraps it with the file, row and column.
//
// The value is private data: Error leaves it out unless Show is set (a
// message lands in terminals, CI logs and tickets), so that by default an
// error names where the value is (file, row, column, added by ingest) and
// why it is refused, not what it is.
type ValueError struct {
	Attr   *Attribute
	Value  string
	Reason string
	// Show prints the value in Error (the user asked for it, e.g. with
	// synth's --show-values).
	Show bool
}

func (e *ValueError) Error() string {
	if !e.Show {
		return fmt.Sprintf("%s (declared: %s)", e.Reason, e.Attr.Describe())
	}
	return fmt.Sprintf("%s %q (declared: %s)", e.Reason, e.Value, e.Attr.Describe())
}

func (a *Attribute) valueErr(v, reason string) error {
	return &ValueError{Attr: a, Value: v, Reason: reason}
}

// intErr is valueErr for an integer whose text raw may be "" (typed input).
func (a *Attribute) intErr(raw string, v int64, reason string) error {
	if raw == "" {
		raw = strconv.FormatInt(v, 10)
	}
	return a.valueErr(raw, reason)
}

// floatErr is valueErr for a real whose text raw may be "" (typed input).
func (a *Attribute) floatErr(raw string, f float64, reason string) error {
	if raw == "" {
		raw = fmtFloat(f)
	}
	return a.valueErr(raw, reason)
}

// EncodeNull returns the code of a missing value, or an error if the
// attribute declares no null token.
func (a *Attribute) EncodeNull() (int, error) {
	if c, ok := a.NullCode(); ok {
		return c, nil
	}
	return -1, a.valueErr("", ReasonNull)
}

// EncodeString returns the code of a textual value. The null token (if
// declared) maps to the null code; for integer, numeric and encoded
// attributes surrounding ASCII spaces are ignored.
func (a *Attribute) EncodeString(s string, p Policy) (int, Repair, error) {
	if a.Nullable && s == a.NullToken {
		return a.size - 1, NoRepair, nil
	}
	switch a.Kind {
	case Categorical:
		if c, ok := a.index[s]; ok {
			return c, NoRepair, nil
		}
		if s == "" {
			return -1, NoRepair, a.valueErr(s, ReasonNull)
		}
		if p.UnknownToOther && a.HasOther {
			return a.index[a.Other], MappedToOther, nil
		}
		return -1, NoRepair, a.valueErr(s, ReasonUnknown)
	case Integer, Encoded:
		t := trimBlanks(s)
		if t == "" {
			return -1, NoRepair, a.valueErr(s, ReasonNull)
		}
		if v, ok := digits(t); ok {
			return a.encodeInt(s, v, p)
		}
		v, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			// Accept integral floats such as "5.0" or "1e3"; reject the rest.
			f, ferr := strconv.ParseFloat(t, 64)
			switch {
			case ferr != nil && !isRangeErr(ferr):
				return -1, NoRepair, a.valueErr(s, ReasonNotNumber)
			case !finite(f):
				return -1, NoRepair, a.valueErr(s, ReasonNotFinite)
			case f != math.Trunc(f):
				return -1, NoRepair, a.valueErr(s, ReasonNotInteger)
			}
			return a.encodeFloatInt(s, f, p)
		}
		return a.encodeInt(s, v, p)
	case Numeric:
		t := trimBlanks(s)
		if t == "" {
			return -1, NoRepair, a.valueErr(s, ReasonNull)
		}
		f, err := strconv.ParseFloat(t, 64)
		if err != nil && !isRangeErr(err) {
			return -1, NoRepair, a.valueErr(s, ReasonNotNumber)
		}
		return a.encodeFloat(s, f, p)
	case Boolean:
		v, ok := ParseBool(s)
		if !ok {
			if trimBlanks(s) == "" {
				return -1, NoRepair, a.valueErr(s, ReasonNull)
			}
			return -1, NoRepair, a.valueErr(s, ReasonNotBool)
		}
		return a.EncodeBool(v)
	case Date, Timestamp:
		return a.encodeCalString(s, p)
	}
	panic("universe: unknown attribute kind")
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// EncodeInt returns the code of an integer value (typed input).
func (a *Attribute) EncodeInt(v int64, p Policy) (int, Repair, error) {
	switch a.Kind {
	case Integer, Encoded:
		return a.encodeInt("", v, p)
	case Numeric:
		return a.encodeFloat("", float64(v), p)
	case Boolean:
		if v == 0 || v == 1 {
			return a.EncodeBool(v == 1)
		}
		return -1, NoRepair, a.valueErr(strconv.FormatInt(v, 10), ReasonNotBool)
	case Date, Timestamp:
		return -1, NoRepair, a.valueErr(strconv.FormatInt(v, 10), ReasonNotTime+" (an integer column; declare it as integer, or store dates as DATE)")
	default:
		return -1, NoRepair, a.valueErr(strconv.FormatInt(v, 10), ReasonNotCategory)
	}
}

// EncodeFloat returns the code of a real value (typed input). Integer and
// encoded attributes accept integral values only.
func (a *Attribute) EncodeFloat(f float64, p Policy) (int, Repair, error) {
	switch a.Kind {
	case Numeric:
		return a.encodeFloat("", f, p)
	case Integer, Encoded:
		if !finite(f) {
			return -1, NoRepair, a.valueErr(fmtFloat(f), ReasonNotFinite)
		}
		if f != math.Trunc(f) {
			return -1, NoRepair, a.valueErr(fmtFloat(f), ReasonNotInteger)
		}
		return a.encodeFloatInt("", f, p)
	case Date, Timestamp:
		return -1, NoRepair, a.valueErr(fmtFloat(f), ReasonNotTime+" (a number)")
	case Boolean:
		if f == 0 || f == 1 {
			return a.EncodeBool(f == 1)
		}
		return -1, NoRepair, a.valueErr(fmtFloat(f), ReasonNotBool)
	default:
		return -1, NoRepair, a.valueErr(fmtFloat(f), ReasonNotCategory)
	}
}

// encodeFloatInt encodes an integral float that may not fit in int64.
func (a *Attribute) encodeFloatInt(raw string, f float64, p Policy) (int, Repair, error) {
	switch {
	case f >= 9.2233720368547758e18:
		return a.encodeInt(raw, math.MaxInt64, p)
	case f < -9.2233720368547758e18:
		return a.encodeInt(raw, math.MinInt64, p)
	}
	return a.encodeInt(raw, int64(f), p)
}

// encodeInt encodes v; raw is its text, or "" for typed input (formatted
// only for an error, so that the valid path allocates nothing).
func (a *Attribute) encodeInt(raw string, v int64, p Policy) (int, Repair, error) {
	switch a.Kind {
	case Encoded:
		if v < 0 || v >= int64(a.valueCodes()) {
			return -1, NoRepair, a.intErr(raw, v, ReasonNotCode)
		}
		return int(v), NoRepair, nil
	case Integer:
		rep := NoRepair
		if v < a.Min || v > a.Max {
			if !p.Clamp {
				return -1, NoRepair, a.intErr(raw, v, ReasonRange)
			}
			rep = Clamped
			v = min(max(v, a.Min), a.Max)
		}
		return int((uint64(v) - uint64(a.Min)) / uint64(a.Width)), rep, nil
	}
	panic("universe: encodeInt on " + a.Kind.String())
}

// encodeFloat encodes f; raw is its text, or "" for typed input (formatted
// only for an error).
func (a *Attribute) encodeFloat(raw string, f float64, p Policy) (int, Repair, error) {
	if !finite(f) {
		return -1, NoRepair, a.floatErr(raw, f, ReasonNotFinite)
	}
	lo, hi := a.Edges[0], a.Edges[len(a.Edges)-1]
	rep := NoRepair
	if f < lo || f > hi {
		if !p.Clamp {
			return -1, NoRepair, a.floatErr(raw, f, ReasonRange)
		}
		rep = Clamped
		f = min(max(f, lo), hi)
	}
	// Bin i holds [Edges[i], Edges[i+1]); the upper bound goes to the last bin.
	bins := len(a.Edges) - 1
	i := sort.SearchFloat64s(a.Edges, f) // first edge >= f
	if i < len(a.Edges) && a.Edges[i] == f {
		i++ // f sits on edge i, so it opens bin i
	}
	c := min(i-1, bins-1)
	return max(c, 0), rep, nil
}

// Code returns the code of a categorical value and whether it is declared.
func (a *Attribute) Code(value string) (int, bool) {
	c, ok := a.index[value]
	return c, ok
}

// Label returns a human-readable label of a code: the category, the integer
// or integer bucket ("lo..hi"), the numeric bin ("[lo, hi)"), the code of an
// encoded attribute, or the null token.
func (a *Attribute) Label(code int) string {
	if code < 0 || code >= a.size {
		panic(fmt.Sprintf("universe: code %d out of range for attribute %q of size %d", code, a.Name, a.size))
	}
	if a.Nullable && code == a.size-1 {
		return a.NullToken
	}
	switch a.Kind {
	case Categorical, Boolean:
		return a.Values[code]
	case Date, Timestamp:
		return a.calLabel(code)
	case Integer:
		lo, hi := a.IntBucket(code)
		if lo == hi {
			return strconv.FormatInt(lo, 10)
		}
		return fmt.Sprintf("%d..%d", lo, hi)
	case Numeric:
		r := ")"
		if code == len(a.Edges)-2 {
			r = "]"
		}
		return "[" + fmtFloat(a.Edges[code]) + ", " + fmtFloat(a.Edges[code+1]) + r
	default:
		return strconv.Itoa(code)
	}
}

// IntBucket returns the inclusive bounds of an Integer attribute's bucket.
func (a *Attribute) IntBucket(code int) (lo, hi int64) {
	lo = a.Min + int64(code)*a.Width
	hi = lo + (a.Width - 1)
	if hi > a.Max || hi < lo { // the last bucket may be short; guard overflow
		hi = a.Max
	}
	return lo, hi
}

// Bin returns the bounds of a Numeric attribute's bin.
func (a *Attribute) Bin(code int) (lo, hi float64) { return a.Edges[code], a.Edges[code+1] }

// digits parses a short run of ASCII digits (the common case of codes and
// integers in CSV) faster than strconv.ParseInt; anything else, including
// signs and 19 or more digits, is left to strconv.
func digits(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + int64(d)
	}
	return v, true
}

// trimBlanks drops surrounding ASCII spaces and tabs. It is
// strings.Trim(s, " \t") without building a cutset per call: ingest calls
// it once per numeric field.
func trimBlanks(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
