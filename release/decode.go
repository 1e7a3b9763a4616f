package release

import (
	"fmt"
	"math"

	"github.com/dpsynth/synth/universe"
)

// ValueRule chooses the value a row gets inside its integer bucket or
// numeric bin.
type ValueRule uint8

// Value rules.
const (
	// Point (the default) gives every row of a cell the same value: the
	// bucket's lower bound for an integer attribute (its only value when the
	// width is 1), the bin's midpoint for a numeric attribute.
	Point ValueRule = iota
	// Uniform draws each row's value uniformly inside its bucket or bin:
	// an integer in lo..hi, a real in [lo, hi). The last numeric bin is
	// closed, [lo, hi], but its upper edge has probability zero, so draws
	// are made in [lo, hi) there too. Every value decodes back to its cell.
	Uniform
)

var valueRuleNames = [...]string{Point: "point", Uniform: "uniform"}

// String returns "point" or "uniform".
func (v ValueRule) String() string {
	if int(v) < len(valueRuleNames) {
		return valueRuleNames[v]
	}
	return fmt.Sprintf("ValueRule(%d)", v)
}

// ParseValueRule returns the rule called name ("point" or "uniform").
func ParseValueRule(name string) (ValueRule, error) {
	for i, n := range valueRuleNames {
		if n == name {
			return ValueRule(i), nil
		}
	}
	return 0, fmt.Errorf("unknown value rule %q (want point or uniform)", name)
}

// DecodeSettings chooses how codes become values. The zero value gives
// every row of a cell the same, representative value.
type DecodeSettings struct {
	// Integer applies to integer attributes bucketed with width > 1.
	Integer ValueRule
	// Numeric applies to numeric attributes.
	Numeric ValueRule
}

// Value is one decoded attribute value. Exactly one of Str (categorical),
// Int (integer and encoded) or Float (numeric) is meaningful, by the
// attribute's kind, unless Null is set (the null code of a nullable
// attribute).
type Value struct {
	Null  bool
	Str   string
	Int   int64
	Float float64
}

// Decoder turns cell indices into attribute values through
// universe.Domain.Decode and the attribute kinds: categorical → the
// category string; integer → an int64 (the bucket's lower bound, or a
// uniform draw in the bucket); numeric → a float64 (the bin's midpoint, or a
// uniform draw in the bin); encoded → the code as an int64; the null code →
// null. A Decoder is not safe for concurrent use.
//
// Privacy: decoding is post-processing of the sampled cells and uses only
// the public domain; uniform draws inside a bucket or bin use the pipeline's
// random source, not the data.
type Decoder struct {
	dom   *universe.Domain
	set   DecodeSettings
	r     Rand
	sizes []uint64
	mid   [][]float64 // numeric midpoints by code
	codes []int
}

// NewDecoder returns a decoder over dom. r is used only by the Uniform
// rules and may be nil otherwise. The universe must be indexable.
func NewDecoder(dom *universe.Domain, s *DecodeSettings, r Rand) (*Decoder, error) {
	d := &Decoder{dom: dom, r: r}
	if s != nil {
		d.set = *s
	}
	if d.set.Integer > Uniform || d.set.Numeric > Uniform {
		return nil, fmt.Errorf("decode: unknown value rule in %+v", d.set)
	}
	if (d.set.Integer == Uniform || d.set.Numeric == Uniform) && r == nil {
		return nil, fmt.Errorf("decode: uniform values need a random source")
	}
	if !dom.Indexable() {
		return nil, fmt.Errorf("decode: universe of %s cells has no 64-bit cell index", universe.FormatCount(dom.SizeBig()))
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

// Decode writes the values of cell's attributes into out (len = number of
// attributes) and returns it.
func (d *Decoder) Decode(cell uint64, out []Value) []Value {
	codes := d.dom.Decode(cell, d.codes)
	for i, c := range codes {
		out[i] = d.Value(i, c)
	}
	return out
}

// Value returns the value of code c of attribute i.
func (d *Decoder) Value(i, c int) Value {
	a := d.dom.Attr(i)
	if nc, ok := a.NullCode(); ok && c == nc {
		return Value{Null: true}
	}
	switch a.Kind {
	case universe.Categorical:
		return Value{Str: a.Values[c]}
	case universe.Integer:
		return Value{Int: d.intValue(a, c)}
	case universe.Numeric:
		return Value{Float: d.floatValue(i, a, c)}
	default:
		return Value{Int: int64(c)}
	}
}

func (d *Decoder) intValue(a *universe.Attribute, c int) int64 {
	lo, hi := a.IntBucket(c)
	if d.set.Integer != Uniform || lo == hi {
		return lo
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
