package universe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Domain is an ordered list of attributes: the public description of a
// table. The universe is the product of the attribute domains.
type Domain struct {
	attrs   []*Attribute
	byName  map[string]int
	strides []uint64 // mixed-radix strides; nil when the size overflows uint64
	size    *big.Int
}

// NewDomain builds a domain from attributes (validated by their
// constructors). Attribute names must be distinct.
func NewDomain(attrs ...*Attribute) (*Domain, error) {
	if len(attrs) == 0 {
		return nil, errors.New("domain has no attributes")
	}
	d := &Domain{attrs: attrs, byName: make(map[string]int, len(attrs))}
	for i, a := range attrs {
		if a == nil || a.size <= 0 {
			return nil, fmt.Errorf("attribute %d is not initialised; build attributes with the New* functions", i)
		}
		if _, dup := d.byName[a.Name]; dup {
			return nil, fmt.Errorf("attribute %q declared twice", a.Name)
		}
		d.byName[a.Name] = i
	}
	d.size = big.NewInt(1)
	for _, a := range attrs {
		d.size.Mul(d.size, big.NewInt(int64(a.size)))
	}
	if d.size.IsUint64() {
		d.strides = make([]uint64, len(attrs))
		s := uint64(1)
		for i := len(attrs) - 1; i >= 0; i-- {
			d.strides[i] = s
			s *= uint64(attrs[i].size)
		}
	}
	return d, nil
}

// Len is the number of attributes.
func (d *Domain) Len() int { return len(d.attrs) }

// Attr returns attribute i.
func (d *Domain) Attr(i int) *Attribute { return d.attrs[i] }

// Attrs returns the attributes in order. The slice must not be modified.
func (d *Domain) Attrs() []*Attribute { return d.attrs }

// Index returns the position of the named attribute and whether it exists.
func (d *Domain) Index(name string) (int, bool) {
	i, ok := d.byName[name]
	return i, ok
}

// Names returns the attribute names in order.
func (d *Domain) Names() []string {
	names := make([]string, len(d.attrs))
	for i, a := range d.attrs {
		names[i] = a.Name
	}
	return names
}

// Sizes returns the attribute sizes in order.
func (d *Domain) Sizes() []int {
	s := make([]int, len(d.attrs))
	for i, a := range d.attrs {
		s[i] = a.size
	}
	return s
}

// MarshalJSON writes the domain in the full form (the shorthand when every
// attribute is encoded and not nullable).
func (d *Domain) MarshalJSON() ([]byte, error) {
	short := true
	for _, a := range d.attrs {
		if a.Kind != Encoded || a.Nullable {
			short = false
		}
	}
	var b bytes.Buffer
	if short {
		b.WriteByte('{')
		for i, a := range d.attrs {
			if i > 0 {
				b.WriteString(", ")
			}
			name, _ := json.Marshal(a.Name)
			fmt.Fprintf(&b, "%s: %d", name, a.size)
		}
		b.WriteByte('}')
		return b.Bytes(), nil
	}
	out := struct {
		Attributes []any `json:"attributes"`
	}{Attributes: make([]any, len(d.attrs))}
	for i, a := range d.attrs {
		if a.Kind == Date || a.Kind == Timestamp {
			lo, hi := a.calBounds()
			bin := a.Unit.String()
			j := calJSON{Name: a.Name, Type: a.Kind.String(), Lower: &lo, Upper: &hi, Bin: &bin}
			if a.Kind == Timestamp {
				z := a.Zone.String()
				j.TimeZone = &z
			}
			if a.Nullable {
				j.Null = &a.NullToken
			}
			out.Attributes[i] = j
			continue
		}
		j := attrJSON{Name: a.Name, Type: a.Kind.String()}
		switch a.Kind {
		case Categorical:
			j.Values = a.Values
			if a.HasOther {
				j.Other = &a.Other
			}
		case Integer:
			j.Min, j.Max = &a.Min, &a.Max
			if a.Width != 1 {
				j.Width = &a.Width
			}
		case Numeric:
			if a.Bins > 0 {
				lo, hi, bins := a.Edges[0], a.Edges[len(a.Edges)-1], a.Bins
				j.Lower, j.Upper, j.Bins = &lo, &hi, &bins
			} else {
				j.Edges = a.Edges
			}
		case Encoded:
			s := a.valueCodes()
			j.Size = &s
		}
		if a.Nullable {
			j.Null = &a.NullToken
		}
		out.Attributes[i] = j
	}
	return json.MarshalIndent(out, "", "  ")
}

// Size returns the number of cells of the universe, exactly, and whether it
// fits in a uint64.
func (d *Domain) Size() (uint64, bool) {
	if !d.size.IsUint64() {
		return 0, false
	}
	return d.size.Uint64(), true
}

// SizeBig returns the number of cells of the universe as a new big.Int.
func (d *Domain) SizeBig() *big.Int { return new(big.Int).Set(d.size) }

// Log10Size returns log10 of the number of cells.
func (d *Domain) Log10Size() float64 {
	s := 0.0
	for _, a := range d.attrs {
		s += math.Log10(float64(a.size))
	}
	return s
}

// Indexable reports whether every cell has a uint64 index (the size fits in
// a uint64), which Encode and Decode need.
func (d *Domain) Indexable() bool { return d.strides != nil }

// Strides returns the mixed-radix strides (the last attribute has stride 1),
// or nil when the universe is not indexable. The slice must not be modified.
func (d *Domain) Strides() []uint64 { return d.strides }

// Encode returns the mixed-radix index of a cell given its codes. It panics
// if the universe is not indexable or the codes do not fit the domain
// (programmer errors: codes come from the attributes' Encode methods).
func (d *Domain) Encode(codes []int) uint64 {
	if d.strides == nil {
		panic("universe: Encode on a universe larger than 2^64 cells")
	}
	if len(codes) != len(d.attrs) {
		panic(fmt.Sprintf("universe: Encode with %d codes for %d attributes", len(codes), len(d.attrs)))
	}
	var idx uint64
	for i, c := range codes {
		if c < 0 || c >= d.attrs[i].size {
			panic(fmt.Sprintf("universe: code %d out of range for attribute %q of size %d", c, d.attrs[i].Name, d.attrs[i].size))
		}
		idx += uint64(c) * d.strides[i]
	}
	return idx
}

// Decode writes the codes of cell idx into codes (len = number of
// attributes) and returns it.
func (d *Domain) Decode(idx uint64, codes []int) []int {
	if d.strides == nil {
		panic("universe: Decode on a universe larger than 2^64 cells")
	}
	if idx >= d.size.Uint64() {
		panic(fmt.Sprintf("universe: index %d out of range for a universe of %d cells", idx, d.size.Uint64()))
	}
	if len(codes) != len(d.attrs) {
		panic(fmt.Sprintf("universe: Decode into %d codes for %d attributes", len(codes), len(d.attrs)))
	}
	for i := len(d.attrs) - 1; i >= 0; i-- {
		s := uint64(d.attrs[i].size)
		codes[i] = int(idx % s)
		idx /= s
	}
	return codes
}

// ExplicitBytes returns the memory an explicit float64 vector over the
// universe needs (8 bytes per cell).
func (d *Domain) ExplicitBytes() *big.Int {
	return new(big.Int).Mul(d.size, big.NewInt(8))
}

// DefaultMemoryCap is the default limit, in bytes, on one explicit vector
// over the universe (4 GiB, 2^29 cells).
const DefaultMemoryCap = 4 << 30

// TooLargeError reports a universe whose explicit vector exceeds the memory
// cap.
type TooLargeError struct {
	Cells    *big.Int
	Log10    float64
	Bytes    *big.Int
	CapBytes uint64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("universe has %s cells (10^%.2f); an explicit float64 vector needs %s, over the cap of %s. "+
		"Hint: drop or coarsen attributes (fewer categories, wider integer buckets, fewer numeric bins), "+
		"or raise the cap if the machine has the memory (solvers keep a few such vectors)",
		fmtCount(e.Cells), e.Log10, FormatBytes(e.Bytes), FormatBytes(new(big.Int).SetUint64(e.CapBytes)))
}

// CheckExplicit returns the universe size as an int if an explicit float64
// vector over it fits in capBytes (0 means DefaultMemoryCap), and a
// *TooLargeError otherwise.
func (d *Domain) CheckExplicit(capBytes uint64) (int, error) {
	if capBytes == 0 {
		capBytes = DefaultMemoryCap
	}
	b := d.ExplicitBytes()
	if !b.IsUint64() || b.Uint64() > capBytes || !d.size.IsInt64() || d.size.Int64() > math.MaxInt {
		return 0, &TooLargeError{Cells: d.SizeBig(), Log10: d.Log10Size(), Bytes: b, CapBytes: capBytes}
	}
	return int(d.size.Int64()), nil
}

// FormatBytes renders a byte count with binary units, e.g. "2.6 MiB" or
// "4.7e+18 B" beyond exbibytes.
func FormatBytes(b *big.Int) string {
	f, _ := new(big.Float).SetInt(b).Float64()
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", f)
	}
	if f >= 1024 {
		return fmt.Sprintf("%.3g %s", f, units[i])
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// fmtCount renders an integer with thousands separators.
func fmtCount(x *big.Int) string {
	s := x.String()
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// FormatCount renders an exact count with thousands separators, e.g.
// "336,000".
func FormatCount(x *big.Int) string { return fmtCount(x) }

// WithNullTokens returns a copy of the domain in which each nullable
// attribute's null token is token(a); codes and everything else are
// unchanged. A token that is a declared category of its attribute is an
// error.
func (d *Domain) WithNullTokens(token func(a *Attribute) string) (*Domain, error) {
	attrs := make([]*Attribute, len(d.attrs))
	for i, a := range d.attrs {
		if !a.Nullable {
			attrs[i] = a
			continue
		}
		t := token(a)
		if _, ok := a.index[t]; ok && a.Kind == Categorical {
			return nil, fmt.Errorf("attribute %q: null token %q is also a declared value", a.Name, t)
		}
		c := *a
		c.NullToken = t
		attrs[i] = &c
	}
	return NewDomain(attrs...)
}
