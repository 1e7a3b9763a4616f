package universe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ParseDomain reads a domain file (docs/DOMAIN.md is the reference). Two
// forms are accepted:
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
// Unknown fields are errors (they are usually typos). Errors carry the
// line and column of the problem as a *PositionError: JSON syntax errors
// where the syntax breaks, field errors at the field's key and the other
// errors of an attribute at its opening brace; their message names the
// attribute.
func ParseDomain(data []byte) (*Domain, error) {
	p := &parser{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	d, err := p.parse()
	if err != nil {
		return nil, err
	}
	return d, nil
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

// DomainError is a problem with a domain file. Its message is
// "file:line:col: what is wrong" when the problem has a position (Err is
// then a *PositionError).
type DomainError struct {
	File string
	Err  error
}

func (e *DomainError) Error() string { return e.File + ":" + sep(e.Err) + e.Err.Error() }
func (e *DomainError) Unwrap() error { return e.Err }

// sep puts no space between a file name and a position ("f.json:3:7: …").
func sep(err error) string {
	var pe *PositionError
	if errors.As(err, &pe) {
		return ""
	}
	return " "
}

// PositionError is an error at a place in a domain file: Line and Col are
// 1-based (Col counts characters).
type PositionError struct {
	Line, Col int
	Err       error
}

func (e *PositionError) Error() string {
	return strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col) + ": " + e.Err.Error()
}
func (e *PositionError) Unwrap() error { return e.Err }

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

// fieldsOf lists the fields each type allows, in the order the docs give
// them.
var fieldsOf = map[string][]string{
	"categorical": {"name", "type", "values", "other", "null"},
	"integer":     {"name", "type", "min", "max", "width", "null"},
	"numeric":     {"name", "type", "lower", "upper", "bins", "edges", "null"},
	"encoded":     {"name", "type", "size", "null"},
	"boolean":     {"name", "type", "null"},
	"date":        {"name", "type", "lower", "upper", "bin", "null"},
	"timestamp":   {"name", "type", "lower", "upper", "bin", "timezone", "null"},
}

// allFields are the fields of any attribute.
var allFields = []string{"name", "type", "values", "other", "null", "min", "max", "width", "lower", "upper", "bins", "edges", "size", "bin", "timezone"}

// typeNames lists the attribute types for messages.
const typeNames = "categorical, integer, numeric, boolean, date, timestamp or encoded"

// fieldWants says what a field holds, for type errors.
var fieldWants = map[string]string{
	"name": "a string", "type": "a string", "values": "a list of strings", "other": "a string", "null": "a string",
	"min": "an integer", "max": "an integer", "width": "an integer", "lower": "a number", "upper": "a number",
	"bins": "an integer", "edges": "a list of numbers", "size": "an integer", "bin": "a string", "timezone": "a string",
}

// calJSON is the declaration of a date or timestamp attribute, whose
// bounds are text.
type calJSON struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Lower    *string `json:"lower,omitempty"`
	Upper    *string `json:"upper,omitempty"`
	Bin      *string `json:"bin,omitempty"`
	TimeZone *string `json:"timezone,omitempty"`
	Null     *string `json:"null,omitempty"`
}

// parser reads a domain file token by token, so that every error can be
// placed in the file.
type parser struct {
	data []byte
	dec  *json.Decoder
}

// at returns err placed at byte offset off of the file.
func (p *parser) at(off int64, err error) error {
	off = min(max(off, 0), int64(len(p.data)))
	line, col := 1, 1
	for _, r := range string(p.data[:off]) {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &PositionError{Line: line, Col: col, Err: err}
}

func (p *parser) atf(off int64, format string, args ...any) error {
	return p.at(off, fmt.Errorf(format, args...))
}

// next returns the offset of the next value or key: the decoder's offset
// moved past blanks, commas and colons.
func (p *parser) next() int64 {
	off := p.dec.InputOffset()
	for off < int64(len(p.data)) {
		switch p.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

// syntax places an error of the JSON decoder at off, where the failing
// read started. The streaming decoder's offsets are relative to different
// starts depending on what it was reading, so a syntax error is placed by
// scanning the whole file again, whose offsets are absolute.
func (p *parser) syntax(off int64, err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return p.at(int64(len(p.data)), errors.New("unexpected end of JSON input"))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		var v any
		if err2 := json.Unmarshal(p.data, &v); errors.As(err2, &se) {
			if strings.Contains(se.Error(), "after top-level value") {
				return p.at(se.Offset-1, errors.New("trailing data after the domain's JSON object"))
			}
			if strings.HasPrefix(se.Error(), "unexpected end") {
				return p.at(int64(len(p.data)), errors.New(se.Error()))
			}
			return p.at(se.Offset-1, errors.New(se.Error()))
		}
		return p.at(off, errors.New(se.Error()))
	}
	return p.at(off, err)
}

func (p *parser) token() (json.Token, int64, error) {
	off := p.next()
	t, err := p.dec.Token()
	if err != nil {
		return nil, off, p.syntax(off, err)
	}
	return t, off, nil
}

func (p *parser) parse() (*Domain, error) {
	if len(bytes.TrimSpace(p.data)) == 0 {
		return nil, errors.New("empty domain file")
	}
	t, off, err := p.token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, p.atf(off, "a domain must be a JSON object: {\"attr\": size, ...} or {\"attributes\": [...]}")
	}
	// The full form has the single key "attributes" holding a list.
	var attrs []*Attribute
	full, draft := false, false
	for p.dec.More() {
		kt, koff, err := p.token()
		if err != nil {
			return nil, err
		}
		name := kt.(string)
		voff := p.next()
		if name == "draft" && voff < int64(len(p.data)) && p.data[voff] == '{' && len(attrs) == 0 {
			// What "synth domain draft" spent and noted: kept for the
			// reader, not part of the domain.
			var skip json.RawMessage
			if err := p.dec.Decode(&skip); err != nil {
				return nil, p.syntax(voff, err)
			}
			draft = true
			continue
		}
		if !full && len(attrs) == 0 && name == "attributes" && voff < int64(len(p.data)) && p.data[voff] == '[' {
			full = true
			if attrs, err = p.attributes(); err != nil {
				return nil, err
			}
			continue
		}
		if full || draft {
			return nil, p.atf(koff, "unknown field %q (the full form has only \"attributes\" and \"draft\")", name)
		}
		a, err := p.shorthand(name, koff)
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, a)
	}
	if _, _, err := p.token(); err != nil { // '}'
		return nil, err
	}
	if off := p.next(); off < int64(len(p.data)) {
		return nil, p.atf(off, "trailing data after the domain's JSON object")
	}
	if len(attrs) == 0 {
		return nil, errors.New("domain has no attributes")
	}
	for i, a := range attrs {
		if j := slices.IndexFunc(attrs[:i], func(b *Attribute) bool { return b.Name == a.Name }); j >= 0 {
			return nil, fmt.Errorf("attribute %q declared twice (attributes %d and %d)", a.Name, j+1, i+1)
		}
	}
	return NewDomain(attrs...)
}

// shorthand reads the size of attribute name in the {"attr": size} form.
func (p *parser) shorthand(name string, koff int64) (*Attribute, error) {
	vt, voff, err := p.token()
	if err != nil {
		return nil, err
	}
	num, ok := vt.(json.Number)
	if !ok {
		return nil, p.atf(voff, "attribute %q: shorthand domains map each attribute to its size (an integer); for typed attributes use {\"attributes\": [...]} (see docs/DOMAIN.md)", name)
	}
	size, err := num.Int64()
	if err != nil || size <= 0 || size > MaxAttributeSize {
		return nil, p.atf(voff, "attribute %q: size must be an integer in 1..%d, got %s", name, MaxAttributeSize, num)
	}
	a, err := NewEncoded(name, int(size))
	if err != nil {
		return nil, p.at(koff, err)
	}
	return a, nil
}

// attributes reads the list of the full form.
func (p *parser) attributes() ([]*Attribute, error) {
	if _, _, err := p.token(); err != nil { // '['
		return nil, err
	}
	var attrs []*Attribute
	for pos := 0; p.dec.More(); pos++ {
		start := p.next()
		var raw json.RawMessage
		if err := p.dec.Decode(&raw); err != nil {
			return nil, p.syntax(start, err)
		}
		a, err := p.attribute(pos, start, raw)
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, a)
	}
	if _, _, err := p.token(); err != nil { // ']'
		return nil, err
	}
	return attrs, nil
}

// key is a field of an attribute object and its offset in the file.
type key struct {
	name string
	off  int64
}

// keys lists the top-level keys of the object raw (at offset start).
func (p *parser) keys(raw []byte, start int64) ([]key, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var ks []key
	for dec.More() {
		off := dec.InputOffset()
		for off < int64(len(raw)) && (raw[off] == ',' || raw[off] == ' ' || raw[off] == '\t' || raw[off] == '\r' || raw[off] == '\n') {
			off++
		}
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		ks = append(ks, key{name: t.(string), off: start + off})
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false
		}
	}
	return ks, true
}

// attribute parses attribute number pos (0-based), whose object raw starts
// at offset start.
func (p *parser) attribute(pos int, start int64, raw []byte) (*Attribute, error) {
	ks, ok := p.keys(raw, start)
	if !ok {
		return nil, p.atf(start, "attribute %d: want an object such as {\"name\": \"age\", \"type\": \"integer\", \"min\": 0, \"max\": 99}", pos+1)
	}
	var (
		j   attrJSON
		cal *calJSON
		err error
	)
	var peek struct {
		Type any `json:"type"`
	}
	_ = json.Unmarshal(raw, &peek)
	if peek.Type == "date" || peek.Type == "timestamp" {
		cal = new(calJSON)
		err = json.Unmarshal(raw, cal)
		j.Name, j.Type = cal.Name, cal.Type
	} else {
		err = json.Unmarshal(raw, &j)
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if i := strings.LastIndexByte(field, '.'); i >= 0 {
				field = field[i+1:]
			}
			who := fmt.Sprintf("attribute %d", pos+1)
			if j.Name != "" {
				who = fmt.Sprintf("attribute %q", j.Name)
			}
			off := start
			for _, k := range ks {
				if k.name == field {
					off = k.off
				}
			}
			want := fieldWants[field]
			if cal != nil && (field == "lower" || field == "upper") {
				want = "a string (an ISO date or an RFC 3339 timestamp)"
			}
			if want == "" {
				want = te.Type.String()
			}
			msg := fmt.Sprintf("%s: field %q: want %s, got %s", who, field, want, te.Value)
			if h := hintFor(field, te.Value); h != "" {
				msg += " " + h
			}
			return nil, p.at(off, errors.New(msg))
		}
		return nil, p.at(start, err)
	}
	name := j.Name
	if name == "" {
		return nil, p.atf(start, "attribute %d has no name", pos+1)
	}
	allowed, known := fieldsOf[j.Type]
	switch {
	case j.Type == "":
		return nil, p.atf(start, "attribute %q: missing \"type\" (%s)", name, typeNames)
	case !known:
		off := start
		for _, k := range ks {
			if k.name == "type" {
				off = k.off
			}
		}
		return nil, p.atf(off, "attribute %q: unknown type %q (want %s)", name, j.Type, typeNames)
	}
	seen := make(map[string]bool, len(ks))
	for _, k := range ks {
		switch {
		case seen[k.name]:
			return nil, p.atf(k.off, "attribute %q: field %q given twice", name, k.name)
		case !slices.Contains(allFields, k.name):
			msg := fmt.Sprintf("attribute %q: unknown field %q", name, k.name)
			if s := closest(k.name, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return nil, p.atf(k.off, "%s; fields of %s %s attribute: %s", msg, article(j.Type), j.Type, strings.Join(allowed, ", "))
		case !slices.Contains(allowed, k.name):
			if s := closest(k.name, allowed); s != "" {
				return nil, p.atf(k.off, "attribute %q: field %q is not allowed for type %s (did you mean %q?); fields of %s %s attribute: %s", name, k.name, j.Type, s, article(j.Type), j.Type, strings.Join(allowed, ", "))
			}
			return nil, p.atf(k.off, "attribute %q: field %q is not allowed for type %s (allowed: %s)", name, k.name, j.Type, strings.Join(allowed, ", "))
		}
		seen[k.name] = true
	}
	var a *Attribute
	if cal != nil {
		a, err = cal.build()
	} else {
		a, err = j.build()
	}
	if err != nil {
		return nil, p.at(start, err)
	}
	return a, nil
}

// build checks a date or timestamp declaration and constructs it.
func (j *calJSON) build() (*Attribute, error) {
	name, ts := j.Name, j.Type == "timestamp"
	if j.Lower == nil || j.Upper == nil || j.Bin == nil {
		return nil, fmt.Errorf("attribute %q: a %s attribute needs \"lower\", \"upper\" and \"bin\"", name, j.Type)
	}
	unit, err := ParseCalUnit(*j.Bin, ts)
	if err != nil {
		return nil, fmt.Errorf("attribute %q: %v", name, err)
	}
	var a *Attribute
	if ts {
		loc := time.UTC
		if j.TimeZone != nil {
			if loc, err = time.LoadLocation(*j.TimeZone); err != nil || *j.TimeZone == "" || *j.TimeZone == "Local" {
				return nil, fmt.Errorf("attribute %q: unknown time zone %q (want an IANA name such as \"UTC\" or \"Europe/Paris\")", name, *j.TimeZone)
			}
		}
		lo, err := ParseTimestamp(*j.Lower, loc)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: lower: %v", name, err)
		}
		hi, err := ParseTimestamp(*j.Upper, loc)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: upper: %v", name, err)
		}
		a, err = NewTimestamp(name, lo, hi, unit, loc)
		if err != nil {
			return nil, err
		}
	} else {
		lo, err := ParseDate(*j.Lower)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: lower: %v", name, err)
		}
		hi, err := ParseDate(*j.Upper)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: upper: %v", name, err)
		}
		if a, err = NewDate(name, lo, hi, unit); err != nil {
			return nil, err
		}
	}
	if j.Null != nil {
		return a.WithNull(*j.Null)
	}
	return a, nil
}

// article is "a" or "an" before a type name.
func article(typ string) string {
	if strings.ContainsRune("aeiou", rune(typ[0])) {
		return "an"
	}
	return "a"
}

// hintFor helps with the commonest type mistakes.
func hintFor(field, got string) string {
	switch {
	case field == "values" && got == "number":
		return `(write the categories as strings: ["1", "2"])`
	case (field == "min" || field == "max" || field == "width" || field == "bins" || field == "size") && got == "number":
		return "(an integer, without a fraction)"
	case got == "string" && fieldWants[field] != "" && !strings.Contains(fieldWants[field], "string"):
		return "(write it without quotes)"
	}
	return ""
}

// closest returns the candidate within two edits of s, if one is.
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between short strings.
func editDistance(a, b string) int {
	if utf8.RuneCountInString(a) > 64 || utf8.RuneCountInString(b) > 64 {
		return 64
	}
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// build checks the fields of one attribute (already known to be allowed
// for its type) and constructs it.
func (j *attrJSON) build() (*Attribute, error) {
	name := j.Name
	var (
		a   *Attribute
		err error
	)
	switch j.Type {
	case "categorical":
		if j.Values == nil {
			return nil, fmt.Errorf("attribute %q: categorical attribute needs \"values\"", name)
		}
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
			if j.Lower != nil && len(j.Edges) > 0 && *j.Lower != j.Edges[0] || j.Upper != nil && len(j.Edges) > 0 && *j.Upper != j.Edges[len(j.Edges)-1] {
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
	case "boolean":
		a, err = NewBoolean(name)
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
