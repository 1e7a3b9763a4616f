package release

import (
	"fmt"
	"math"

	"github.com/dpsynth/synth/universe"
)

// ValueRule chooses how a row's integer bucket or numeric bin is written.
type ValueRule uint8

// Value rules.
const (
	// Point (the default, "midpoint") gives every row of a cell the same
	// value: the bucket's middle integer for an integer attribute (the lower
	// of the two middles of an even bucket, lo + ⌊(hi − lo)/2⌋; the value
	// itself when the width is 1), the bin's midpoint for a numeric
	// attribute.
	Point ValueRule = iota
	// Uniform draws each row's value uniformly inside its bucket or bin:
	// an integer in lo..hi, a real in [lo, hi). The last numeric bin is
	// closed, [lo, hi], but its upper edge has probability zero, so draws
	// are made in [lo, hi) there too. Every value decodes back to its cell.
	Uniform
	// Label writes the bucket's or bin's label as a string, as
	// universe.Attribute.Label gives it: "20..29" for an integer bucket,
	// "[20, 30)" for a numeric bin ("[lo, hi]" for the last one).
	Label
	// LowerUpper writes two columns, ATTR_lower and ATTR_upper: the
	// bucket's inclusive bounds lo and hi (INT64) for an integer attribute,
	// the bin's edges lo and hi (DOUBLE; the bin is [lo, hi), the last one
	// [lo, hi]) for a numeric attribute.
	LowerUpper
)

var valueRuleNames = [...]string{Point: "point", Uniform: "uniform", Label: "label", LowerUpper: "lower-upper"}

// String returns "point", "uniform", "label" or "lower-upper".
func (v ValueRule) String() string {
	if int(v) < len(valueRuleNames) {
		return valueRuleNames[v]
	}
	return fmt.Sprintf("ValueRule(%d)", v)
}

// ParseValueRule returns the rule called name: "point" (alias
// "midpoint"), "uniform", "label" or "lower-upper".
func ParseValueRule(name string) (ValueRule, error) {
	if name == "midpoint" {
		return Point, nil
	}
	for i, n := range valueRuleNames {
		if n == name {
			return ValueRule(i), nil
		}
	}
	return 0, fmt.Errorf("unknown value rule %q (want label, lower-upper, midpoint, point or uniform)", name)
}

// DecodeSettings chooses how codes become values. The zero value gives
// every row of a cell the same, representative value.
type DecodeSettings struct {
	// Integer applies to integer attributes bucketed with width > 1 (an
	// integer of width 1 is always written as its value).
	Integer ValueRule
	// Numeric applies to numeric attributes.
	Numeric ValueRule
	// Time applies to date and timestamp attributes: Point writes the
	// bin's start (a day, or an instant), Uniform a day or a second drawn
	// in the bin, Label its calendar label ("2020-03", "2020-W10"),
	// LowerUpper its first and last day (dates) or its start and end
	// instants (timestamps).
	Time ValueRule
}

// rule returns the value rule of a (Point for categorical, encoded and
// width-1 integer attributes).
func (s DecodeSettings) rule(a *universe.Attribute) ValueRule {
	switch {
	case a.Kind == universe.Integer && a.Width > 1:
		return s.Integer
	case a.Kind == universe.Numeric:
		return s.Numeric
	case a.Kind == universe.Date || a.Kind == universe.Timestamp:
		return s.Time
	}
	return Point
}

// ColumnType is the type of an output column.
type ColumnType uint8

// Column types.
const (
	StringColumn    ColumnType = iota // UTF-8 text
	IntColumn                         // 64-bit integer
	FloatColumn                       // 64-bit float
	BoolColumn                        // boolean (Value.Int 0 or 1)
	DateColumn                        // calendar date (Value.Int: days since 1970-01-01)
	TimestampColumn                   // instant (Value.Int: microseconds since the epoch)
)

// Part says which value of an attribute a column holds.
type Part uint8

// Parts of an attribute.
const (
	Whole Part = iota // the value (Point, Uniform) or the label (Label)
	Lower             // the lower bound (LowerUpper)
	Upper             // the upper bound (LowerUpper)
)

// Column is one column of the synthetic table: columns follow the domain's
// attributes in order, one per attribute, except that an attribute written
// with LowerUpper has two (ATTR_lower, ATTR_upper).
type Column struct {
	Name string
	Attr int // index of the attribute in the domain
	Part Part
	Type ColumnType
	// Nullable: the attribute has a null code, written as a null (Parquet)
	// or an empty field (CSV).
	Nullable bool
	// Random: the values are drawn per row (Uniform).
	Random bool
}

// Columns returns the columns of the synthetic table of dom written with s
// (nil means the zero settings). It is an error when a LowerUpper column
// name is also the name of another attribute.
func Columns(dom *universe.Domain, s *DecodeSettings) ([]Column, error) {
	var set DecodeSettings
	if s != nil {
		set = *s
	}
	if set.Integer > LowerUpper || set.Numeric > LowerUpper || set.Time > LowerUpper {
		return nil, fmt.Errorf("decode: unknown value rule in %+v", set)
	}
	cols := make([]Column, 0, dom.Len())
	for i, a := range dom.Attrs() {
		c := Column{Name: a.Name, Attr: i, Nullable: a.Nullable}
		switch a.Kind {
		case universe.Categorical:
			c.Type = StringColumn
		case universe.Numeric:
			c.Type = FloatColumn
		case universe.Boolean:
			c.Type = BoolColumn
		case universe.Date:
			c.Type = DateColumn
		case universe.Timestamp:
			c.Type = TimestampColumn
		default:
			c.Type = IntColumn
		}
		switch set.rule(a) {
		case Uniform:
			c.Random = true
		case Label:
			c.Type = StringColumn
		case LowerUpper:
			lo, hi := c, c
			lo.Name, lo.Part = a.Name+"_lower", Lower
			hi.Name, hi.Part = a.Name+"_upper", Upper
			cols = append(cols, lo, hi)
			continue
		}
		cols = append(cols, c)
	}
	seen := make(map[string]bool, len(cols))
	for _, c := range cols {
		if seen[c.Name] {
			return nil, fmt.Errorf("decode: two output columns are named %q (an attribute has the name of another's lower-upper column)", c.Name)
		}
		seen[c.Name] = true
	}
	return cols, nil
}

// Value is one decoded attribute value. Exactly one of Str (categorical),
// Int (integer, encoded, boolean 0/1, a date's day number, a timestamp's
// microseconds since the epoch) or Float (numeric) is meaningful, by the
// column's type, unless Null is set (the null code of a nullable
// attribute).
type Value struct {
	Null  bool
	Str   string
	Int   int64
	Float float64
}

// Decoder turns per-attribute codes (or cell indices, through
// universe.Domain.Decode) into the values of the output columns, by the
// attribute kinds and the value rules: categorical → the category string;
// integer → an int64 (the bucket's middle integer, a uniform draw in the
// bucket, its label, or its two bounds); numeric → a float64 (the bin's
// midpoint, a uniform draw in the bin, its label, or its two edges);
// encoded → the code as an int64; the null code → null. A Decoder is not
// safe for concurrent use.
//
// Privacy: decoding is post-processing of the sampled cells and uses only
// the public domain; uniform draws inside a bucket or bin use the pipeline's
// random source, not the data.
type Decoder struct {
	dom   *universe.Domain
	set   DecodeSettings
	r     Rand
	cols  []Column
	sizes []uint64
	mid   [][]float64 // numeric midpoints by code
	codes []int
}

// NewDecoder returns a decoder over dom. r is used only by the Uniform
// rules and may be nil otherwise. Decode (cell indices) needs an indexable
// universe; codes work for any domain.
func NewDecoder(dom *universe.Domain, s *DecodeSettings, r Rand) (*Decoder, error) {
	d := &Decoder{dom: dom, r: r}
	if s != nil {
		d.set = *s
	}
	cols, err := Columns(dom, &d.set)
	if err != nil {
		return nil, err
	}
	d.cols = cols
	if (d.set.Integer == Uniform || d.set.Numeric == Uniform || d.set.Time == Uniform) && r == nil {
		return nil, fmt.Errorf("decode: uniform values need a random source")
	}
	d.sizes = make([]uint64, dom.Len())
	d.mid = make([][]float64, dom.Len())
	for i, a := range dom.Attrs() {
		d.sizes[i] = uint64(a.Size())
		if a.Kind == universe.Numeric {
			m := make([]float64, len(a.Edges)-1)
			for c := range m {
				m[c] = midpoint(a.Edges[c], a.Edges[c+1])
			}
			d.mid[i] = m
		}
	}
	d.codes = make([]int, dom.Len())
	return d, nil
}

// midpoint of [lo, hi) without overflow, kept inside the bin.
func midpoint(lo, hi float64) float64 {
	m := lo/2 + hi/2
	if !(m >= lo && m < hi) {
		m = lo
	}
	return m
}

// Domain returns the decoder's domain.
func (d *Decoder) Domain() *universe.Domain { return d.dom }

// Settings returns the decoder's settings.
func (d *Decoder) Settings() DecodeSettings { return d.set }

// Columns returns the output columns (see the function Columns).
func (d *Decoder) Columns() []Column { return d.cols }

// Decode writes the values of cell's columns into out (len =
// len(d.Columns()), the number of attributes unless some are written
// LowerUpper) and returns it.
func (d *Decoder) Decode(cell uint64, out []Value) []Value {
	codes := d.dom.Decode(cell, d.codes)
	for j, col := range d.cols {
		out[j] = d.ColumnValue(j, codes[col.Attr])
	}
	return out
}

// Value returns the value of code c of attribute i (its first column's
// value: the lower bound under LowerUpper).
func (d *Decoder) Value(i, c int) Value {
	a := d.dom.Attr(i)
	if nc, ok := a.NullCode(); ok && c == nc {
		return Value{Null: true}
	}
	switch d.set.rule(a) {
	case Label:
		return Value{Str: a.Label(c)}
	case LowerUpper:
		return d.bound(a, c, Lower)
	}
	switch a.Kind {
	case universe.Categorical:
		return Value{Str: a.Values[c]}
	case universe.Integer:
		return Value{Int: d.intValue(a, c)}
	case universe.Numeric:
		return Value{Float: d.floatValue(i, a, c)}
	case universe.Boolean:
		return Value{Int: int64(c)}
	case universe.Date, universe.Timestamp:
		return Value{Int: d.timeValue(a, c)}
	default:
		return Value{Int: int64(c)}
	}
}

// timeValue is the bin's start, or a draw in it (a day of a date bin, a
// whole second of a timestamp bin, inside the bounds), as a day number or
// microseconds.
func (d *Decoder) timeValue(a *universe.Attribute, c int) int64 {
	lo, hi := a.CalBin(c)
	if a.Kind == universe.Date {
		first, last := int64(lo), int64(hi)
		if d.set.Time == Uniform && last > first {
			return first + int64(uintn(d.r, uint64(last-first)+1))
		}
		return first
	}
	start := micros(lo)
	if d.set.Time != Uniform {
		return start
	}
	// Whole seconds from ⌈lo⌉ to the last second before hi (the closed
	// upper bound for the last bin).
	first, end := math.Ceil(lo), math.Ceil(hi)
	if c == a.Size()-1 || a.Nullable && c == a.Size()-2 {
		end = math.Floor(hi) + 1
	}
	if end-first < 1 {
		return start
	}
	return micros(first + float64(uintn(d.r, uint64(end-first))))
}

// micros converts seconds since the epoch to whole microseconds.
func micros(x float64) int64 { return int64(math.Round(x * 1e6)) }

// ColumnValue returns the value of column j for code c of its attribute.
func (d *Decoder) ColumnValue(j, c int) Value {
	col := &d.cols[j]
	if col.Part == Whole {
		return d.Value(col.Attr, c)
	}
	a := d.dom.Attr(col.Attr)
	if nc, ok := a.NullCode(); ok && c == nc {
		return Value{Null: true}
	}
	return d.bound(a, c, col.Part)
}

// bound returns the lower or upper bound of code c of an integer or
// numeric attribute.
func (d *Decoder) bound(a *universe.Attribute, c int, p Part) Value {
	if a.Kind == universe.Date || a.Kind == universe.Timestamp {
		lo, hi := a.CalBin(c)
		if p == Upper {
			lo = hi
		}
		if a.Kind == universe.Date {
			return Value{Int: int64(lo)}
		}
		return Value{Int: micros(lo)}
	}
	if a.Kind == universe.Integer {
		lo, hi := a.IntBucket(c)
		if p == Upper {
			return Value{Int: hi}
		}
		return Value{Int: lo}
	}
	lo, hi := a.Bin(c)
	if p == Upper {
		return Value{Float: hi}
	}
	return Value{Float: lo}
}

func (d *Decoder) intValue(a *universe.Attribute, c int) int64 {
	lo, hi := a.IntBucket(c)
	if lo == hi {
		return lo
	}
	if d.set.Integer != Uniform {
		// The bucket's middle: an integer of the bucket (so that the value
		// reads back into it), the lower of the two middles when the bucket
		// holds an even number of integers: the mean of a value spread
		// evenly over the bucket is kept within half a unit.
		return lo + (hi-lo)/2
	}
	return lo + int64(uintn(d.r, uint64(hi)-uint64(lo)+1))
}

func (d *Decoder) floatValue(i int, a *universe.Attribute, c int) float64 {
	if d.set.Numeric != Uniform {
		return d.mid[i][c]
	}
	lo, hi := a.Bin(c)
	v := lo + d.r.Float64()*(hi-lo)
	if math.IsInf(hi-lo, 0) { // edges near ±MaxFloat64
		v = lo/2 + d.r.Float64()*(hi/2-lo/2)
		v *= 2
	}
	if !(v < hi) { // rounding reached the upper edge: stay in the bin
		v = math.Nextafter(hi, lo)
	}
	return max(v, lo)
}
