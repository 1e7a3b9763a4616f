package universe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
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

// ParseDomain reads a domain file. Two forms are accepted:
//
// The shorthand for pre-encoded data, an object of attribute sizes in column
// order:
//
//	{"sex": 2, "race": 5, "age": 10}
//
// The full form, a list of typed attributes:
//
//	{"attributes": [
//	  {"name": "sex", "type": "categorical", "values": ["F", "M"]},
//	  {"name": "race", "type": "categorical", "values": ["a", "b", "z"], "other": "z", "null": "NA"},
//	  {"name": "age", "type": "integer", "min": 0, "max": 99, "width": 10},
//	  {"name": "income", "type": "numeric", "lower": 0, "upper": 1e6, "bins": 20},
//	  {"name": "hours", "type": "numeric", "edges": [0, 20, 40, 60, 100]},
//	  {"name": "code", "type": "encoded", "size": 4}
//	]}
//
// Unknown fields are errors (they are usually typos).
func ParseDomain(data []byte) (*Domain, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("empty domain file")
		}
		return nil, fmt.Errorf("domain is not valid JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("domain must be a JSON object")
	}
	// Peek at the first key to choose the form.
	var full bool
	if dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("domain is not valid JSON: %w", err)
		}
		if k == "attributes" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, fmt.Errorf("domain is not valid JSON: %w", err)
			}
			full = bytes.HasPrefix(bytes.TrimSpace(raw), []byte("["))
		}
	}
	if full {
		return parseFull(data)
	}
	return parseShorthand(data)
}

// LoadDomain reads and parses a domain file; errors name the file.
func LoadDomain(path string) (*Domain, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := ParseDomain(data)
	if err != nil {
		return nil, &DomainError{File: path, Err: err}
	}
	return d, nil
}

// DomainError is a problem with a domain file.
type DomainError struct {
	File string
	Err  error
}

func (e *DomainError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *DomainError) Unwrap() error { return e.Err }

func parseShorthand(data []byte) (*Domain, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		return nil, err
	}
	var attrs []*Attribute
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("domain is not valid JSON: %w", err)
		}
		name := kt.(string)
		vt, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("domain is not valid JSON: %w", err)
		}
		num, ok := vt.(json.Number)
		if !ok {
			return nil, fmt.Errorf("attribute %q: shorthand domains map each attribute to its size (an integer); for typed attributes use {\"attributes\": [...]}", name)
		}
		size, err := num.Int64()
		if err != nil || size <= 0 || size > MaxAttributeSize {
			return nil, fmt.Errorf("attribute %q: size must be an integer in 1..%d, got %s", name, MaxAttributeSize, num)
		}
		a, err := NewEncoded(name, int(size))
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, a)
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, fmt.Errorf("domain is not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("domain has trailing data after the JSON object")
	}
	return NewDomain(attrs...)
}

// attrJSON is the full-form declaration of one attribute.
type attrJSON struct {
	Name   string    `json:"name"`
	Type   string    `json:"type"`
	Values []string  `json:"values,omitempty"`
	Other  *string   `json:"other,omitempty"`
	Null   *string   `json:"null,omitempty"`
	Min    *int64    `json:"min,omitempty"`
	Max    *int64    `json:"max,omitempty"`
	Width  *int64    `json:"width,omitempty"`
	Lower  *float64  `json:"lower,omitempty"`
	Upper  *float64  `json:"upper,omitempty"`
	Bins   *int      `json:"bins,omitempty"`
	Edges  []float64 `json:"edges,omitempty"`
	Size   *int      `json:"size,omitempty"`
}

type domainJSON struct {
	Attributes []attrJSON `json:"attributes"`
}

func parseFull(data []byte) (*Domain, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var dj domainJSON
	if err := dec.Decode(&dj); err != nil {
		return nil, fmt.Errorf("domain: %w", err)
	}
	if dec.More() {
		return nil, errors.New("domain has trailing data after the JSON object")
	}
	if len(dj.Attributes) == 0 {
		return nil, errors.New("domain has no attributes")
	}
	attrs := make([]*Attribute, len(dj.Attributes))
	for i := range dj.Attributes {
		a, err := dj.Attributes[i].build(i)
		if err != nil {
			return nil, err
		}
		attrs[i] = a
	}
	return NewDomain(attrs...)
}

func (j *attrJSON) build(pos int) (*Attribute, error) {
	name := j.Name
	if name == "" {
		return nil, fmt.Errorf("attribute %d has no name", pos+1)
	}
	// Fields allowed per type; anything else set is an error.
	var allowed string
	switch j.Type {
	case "categorical":
		allowed = "values other null"
	case "integer":
		allowed = "min max width null"
	case "numeric":
		allowed = "lower upper bins edges null"
	case "encoded":
		allowed = "size null"
	case "":
		return nil, fmt.Errorf("attribute %q: missing \"type\" (categorical, integer, numeric or encoded)", name)
	default:
		return nil, fmt.Errorf("attribute %q: unknown type %q (want categorical, integer, numeric or encoded)", name, j.Type)
	}
	set := map[string]bool{
		"values": j.Values != nil, "other": j.Other != nil, "null": j.Null != nil,
		"min": j.Min != nil, "max": j.Max != nil, "width": j.Width != nil,
		"lower": j.Lower != nil, "upper": j.Upper != nil, "bins": j.Bins != nil,
		"edges": j.Edges != nil, "size": j.Size != nil,
	}
	for _, f := range []string{"values", "other", "min", "max", "width", "lower", "upper", "bins", "edges", "size"} {
		if set[f] && !strings.Contains(" "+allowed+" ", " "+f+" ") {
			return nil, fmt.Errorf("attribute %q: field %q is not allowed for type %s (allowed: %s)", name, f, j.Type, allowed)
		}
	}
	var (
		a   *Attribute
		err error
	)
	switch j.Type {
	case "categorical":
		a, err = NewCategorical(name, j.Values)
		if err == nil && j.Other != nil {
			a, err = a.WithOther(*j.Other)
		}
	case "integer":
		if j.Min == nil || j.Max == nil {
			return nil, fmt.Errorf("attribute %q: integer attribute needs \"min\" and \"max\"", name)
		}
		var w int64 = 1
		if j.Width != nil {
			w = *j.Width
			if w <= 0 {
				return nil, fmt.Errorf("attribute %q: width must be positive, got %d", name, w)
			}
		}
		a, err = NewInteger(name, *j.Min, *j.Max, w)
	case "numeric":
		switch {
		case j.Edges != nil && j.Bins != nil:
			return nil, fmt.Errorf("attribute %q: give either \"bins\" or \"edges\", not both", name)
		case j.Edges != nil:
			if j.Lower != nil && *j.Lower != j.Edges[0] || j.Upper != nil && len(j.Edges) > 0 && *j.Upper != j.Edges[len(j.Edges)-1] {
				return nil, fmt.Errorf("attribute %q: lower and upper must equal the first and last edge", name)
			}
			a, err = NewNumeric(name, j.Edges)
		case j.Bins != nil:
			if j.Lower == nil || j.Upper == nil {
				return nil, fmt.Errorf("attribute %q: numeric attribute with bins needs \"lower\" and \"upper\"", name)
			}
			a, err = NewNumericBins(name, *j.Lower, *j.Upper, *j.Bins)
		default:
			return nil, fmt.Errorf("attribute %q: numeric attribute needs \"bins\" (with lower and upper) or \"edges\"", name)
		}
	case "encoded":
		if j.Size == nil {
			return nil, fmt.Errorf("attribute %q: encoded attribute needs \"size\"", name)
		}
		a, err = NewEncoded(name, *j.Size)
	}
	if err != nil {
		return nil, err
	}
	if j.Null != nil {
		a, err = a.WithNull(*j.Null)
	}
	return a, err
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
	out := domainJSON{Attributes: make([]attrJSON, len(d.attrs))}
	for i, a := range d.attrs {
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
