package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dpsynth/synth/universe"
)

// DefaultMaxCells is the default guard on the number of cells of one
// marginal (2^20).
const DefaultMaxCells = 1 << 20

// Spec is the declarative form of a workload, as read from a workload file:
//
//	{
//	  "max_cells": 100000,
//	  "families": [
//	    {"type": "marginals", "sets": [["sex", "race"], ["age"]], "weight": 0.5},
//	    {"type": "kway", "k": 3},
//	    {"type": "kway", "k": 2, "attributes": ["sex", "race", "age"]},
//	    {"type": "kway", "k": 3, "sample": 64, "seed": 0},
//	    {"type": "range", "attribute": "age", "lo": 20, "hi": 39},
//	    {"type": "prefixes", "attribute": "age"},
//	    {"type": "predicate", "where": [
//	      {"attribute": "sex", "in": ["F"]},
//	      {"attribute": "age", "lo": 20, "hi": 39}
//	    ]}
//	  ]
//	}
//
// See Build for the meaning of each family.
type Spec struct {
	// MaxCells refuses marginals with more cells; 0 means DefaultMaxCells.
	MaxCells int64 `json:"max_cells,omitempty"`
	Families []FamilySpec
}

// FamilySpec is one family of a Spec. Type selects the family; the fields
// allowed for each type are listed in Build. A missing weight means 1.
type FamilySpec struct {
	Type   string   `json:"type"`
	Weight *float64 `json:"weight,omitempty"`

	// marginals
	Sets [][]string `json:"sets,omitempty"`
	// kway
	K          int      `json:"k,omitempty"`
	Attributes []string `json:"attributes,omitempty"`
	Sample     int      `json:"sample,omitempty"`
	Seed       *uint64  `json:"seed,omitempty"`
	// range, prefixes
	Attribute string `json:"attribute,omitempty"`
	Lo        *Value `json:"lo,omitempty"`
	Hi        *Value `json:"hi,omitempty"`
	// predicate
	Where []Clause `json:"where,omitempty"`

	pos string // "line:col" of the family in its file, for errors
}

// Clause is one condition of a predicate: attribute ∈ In, or Lo <= attribute
// <= Hi (an ordered attribute).
type Clause struct {
	Attribute string  `json:"attribute"`
	In        []Value `json:"in,omitempty"`
	Lo        *Value  `json:"lo,omitempty"`
	Hi        *Value  `json:"hi,omitempty"`
}

// Value is a declared value of an attribute as written in a workload: a
// JSON string or number. It is interpreted like a value in the data: a
// category, an integer, a real, a code of an encoded attribute, or the null
// token.
type Value struct {
	Text string
}

// V returns the Value of a textual value.
func V(text string) Value { return Value{Text: text} }

// UnmarshalJSON accepts a string or a number.
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &v.Text)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return err
	}
	n, ok := x.(json.Number)
	if !ok {
		return fmt.Errorf("value must be a string or a number, got %s", b)
	}
	v.Text = n.String()
	return nil
}

// MarshalJSON writes the value as a number when it is one, else a string.
func (v Value) MarshalJSON() ([]byte, error) {
	if _, err := strconv.ParseFloat(v.Text, 64); err == nil && json.Valid([]byte(v.Text)) {
		return []byte(v.Text), nil
	}
	return json.Marshal(v.Text)
}

// WorkloadError is a problem with a workload file: File (may be empty),
// Pos ("line:col" of the family, may be empty) and the cause.
type WorkloadError struct {
	File string
	Pos  string
	Err  error
}

func (e *WorkloadError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ":")
	}
	if e.Pos != "" {
		b.WriteString(e.Pos + ":")
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *WorkloadError) Unwrap() error { return e.Err }

// Load reads and parses a workload file against dom; errors name the file
// and the line and column of the family at fault.
func Load(path string, dom *universe.Domain) (*Workload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w, err := Parse(data, dom)
	if err != nil {
		var we *WorkloadError
		if errors.As(err, &we) {
			we.File = path
			return nil, we
		}
		return nil, &WorkloadError{File: path, Err: err}
	}
	return w, nil
}

// Parse reads a workload file (see Spec) and builds it against dom. Unknown
// fields are errors (they are usually typos).
func Parse(data []byte, dom *universe.Domain) (*Workload, error) {
	spec, err := ParseSpec(data)
	if err != nil {
		return nil, err
	}
	return Build(dom, spec)
}

// ParseSpec reads a workload file without resolving it against a domain.
func ParseSpec(data []byte) (*Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	syntax := func(err error) error {
		if err == io.EOF {
			return &WorkloadError{Err: errors.New("empty workload file")}
		}
		if err == io.ErrUnexpectedEOF {
			return &WorkloadError{Err: errors.New("workload is not valid JSON: unexpected end of file")}
		}
		pos := ""
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			pos = lineCol(data, se.Offset)
		case errors.As(err, &te):
			pos = lineCol(data, te.Offset)
		}
		return &WorkloadError{Pos: pos, Err: fmt.Errorf("workload is not valid JSON: %w", err)}
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntax(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &WorkloadError{Pos: "1:1", Err: errors.New(`workload must be a JSON object {"families": [...]}`)}
	}
	spec := &Spec{}
	seen := map[string]bool{}
	for dec.More() {
		off := dec.InputOffset()
		kt, err := dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		key, _ := kt.(string)
		if seen[key] {
			return nil, &WorkloadError{Pos: lineCol(data, skipSpace(data, off)), Err: fmt.Errorf("field %q given twice", key)}
		}
		seen[key] = true
		switch key {
		case "max_cells":
			var n json.Number
			if err := dec.Decode(&n); err != nil {
				return nil, syntax(err)
			}
			v, err := n.Int64()
			if err != nil || v <= 0 {
				return nil, &WorkloadError{Pos: lineCol(data, skipSpace(data, off)), Err: fmt.Errorf("max_cells must be a positive integer, got %s", n)}
			}
			spec.MaxCells = v
		case "families":
			t, err := dec.Token()
			if err != nil {
				return nil, syntax(err)
			}
			if d, ok := t.(json.Delim); !ok || d != '[' {
				return nil, &WorkloadError{Pos: lineCol(data, skipSpace(data, off)), Err: errors.New(`"families" must be a list of families`)}
			}
			for dec.More() {
				start := skipSpace(data, dec.InputOffset())
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return nil, syntax(err)
				}
				fd := json.NewDecoder(bytes.NewReader(raw))
				fd.DisallowUnknownFields()
				var f FamilySpec
				if err := fd.Decode(&f); err != nil {
					return nil, &WorkloadError{Pos: lineCol(data, start), Err: fmt.Errorf("family %d: %s", len(spec.Families)+1, strings.TrimPrefix(err.Error(), "json: "))}
				}
				f.pos = lineCol(data, start)
				spec.Families = append(spec.Families, f)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntax(err)
			}
		default:
			return nil, &WorkloadError{Pos: lineCol(data, skipSpace(data, off)), Err: fmt.Errorf("unknown field %q (want \"families\" and optionally \"max_cells\")", key)}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &WorkloadError{Err: errors.New("workload has trailing data after the JSON object")}
	}
	if !seen["families"] {
		return nil, &WorkloadError{Err: errors.New(`workload has no "families"`)}
	}
	return spec, nil
}

// skipSpace returns the offset of the first byte at or after off that is
// neither white space nor a separator.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}

// lineCol renders a byte offset as a 1-based "line:col".
func lineCol(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Sprintf("%d:%d", line, col)
}

// Build resolves a spec against dom. The families, in order:
//
//   - "marginals" with "sets": explicit attribute sets (each non-empty,
//     without repeats; attributes are ordered as in the domain).
//   - "kway" with "k" and optionally "attributes": all k-way marginals over
//     the named attributes (default all), in lexicographic order of domain
//     positions. With "sample": N (and "seed", default 0), N distinct k-way
//     marginals drawn uniformly without replacement (the GEM/RAP protocol),
//     listed in lexicographic order; see SampleKWay.
//   - "range" with "attribute", "lo" and "hi": one counting query on an
//     ordered (integer, numeric or encoded) attribute. Bounds are declared
//     values (an integer, a real, a code), not codes; a bound inside an
//     integer bucket or a numeric bin widens the range to the whole bucket or
//     bin (the universe cannot split a cell), except that a numeric "hi" on an
//     inner bin edge ends the range at the bin below that edge (bins are
//     [lo, hi)). The null code is never part of a range.
//   - "prefixes" with "attribute": the queries "attribute <= v" for every
//     code v of the ordered attribute but the last value (which would cover
//     every declared value).
//   - "predicate" with "where": one counting query, the conjunction of its
//     clauses, each {"attribute", "in": [values]} (any attribute; the null
//     token selects the null cell) or {"attribute", "lo", "hi"} (ordered
//     attributes, as for "range"). Each attribute appears at most once.
//
// Every family takes an optional "weight" in (0, 1] (default 1) that scales
// its queries, so that every query maps the universe into [0, 1]: weigh a
// family up by weighing the others down. Marginals with more cells than
// max_cells are refused.
func Build(dom *universe.Domain, spec *Spec) (*Workload, error) {
	if dom == nil {
		panic("query: Build with a nil domain")
	}
	w := &Workload{dom: dom, maxCells: spec.MaxCells}
	if w.maxCells == 0 {
		w.maxCells = DefaultMaxCells
	}
	if w.maxCells < 0 {
		return nil, &WorkloadError{Err: fmt.Errorf("max_cells must be positive, got %d", w.maxCells)}
	}
	if len(spec.Families) == 0 {
		return nil, &WorkloadError{Err: errors.New("workload has no families")}
	}
	for i := range spec.Families {
		f := &spec.Families[i]
		if err := w.addFamily(f); err != nil {
			return nil, &WorkloadError{Pos: f.pos, Err: fmt.Errorf("family %d (%s): %w", i+1, f.Type, err)}
		}
	}
	return w, nil
}

// MaxQueries is the largest number of queries of a workload.
const MaxQueries = 1 << 30

// addFamily checks f and appends its queries and its family to w, one
// step per type.
func (w *Workload) addFamily(f *FamilySpec) error {
	weight, err := checkFamilyFields(f)
	if err != nil {
		return err
	}
	fam := Family{Weight: weight, Offset: w.m}
	fi := len(w.families)
	switch f.Type {
	case "marginals":
		err = w.addMarginals(f, fi, &fam)
	case "kway":
		err = w.addKWay(f, fi, &fam)
	case "range":
		err = w.addRange(f, fi, &fam)
	case "prefixes":
		err = w.addPrefixes(f, fi, &fam)
	case "predicate":
		err = w.addPredicate(f, fi, &fam)
	}
	if err != nil {
		return err
	}
	fam.Len = w.m - fam.Offset
	w.families = append(w.families, fam)
	return nil
}

// checkFamilyFields checks f's type and that it sets only the fields its
// type allows, and returns its weight (1 when unset).
func checkFamilyFields(f *FamilySpec) (float64, error) {
	var allowed string
	switch f.Type {
	case "marginals":
		allowed = "sets"
	case "kway":
		allowed = "k attributes sample seed"
	case "range":
		allowed = "attribute lo hi"
	case "prefixes":
		allowed = "attribute"
	case "predicate":
		allowed = "where"
	case "":
		return 0, errors.New(`missing "type" (marginals, kway, range, prefixes or predicate)`)
	default:
		return 0, fmt.Errorf("unknown type %q (want marginals, kway, range, prefixes or predicate)", f.Type)
	}
	set := map[string]bool{
		"sets": f.Sets != nil, "k": f.K != 0, "attributes": f.Attributes != nil, "sample": f.Sample != 0,
		"seed": f.Seed != nil, "attribute": f.Attribute != "", "lo": f.Lo != nil, "hi": f.Hi != nil, "where": f.Where != nil,
	}
	for _, k := range []string{"sets", "k", "attributes", "sample", "seed", "attribute", "lo", "hi", "where"} {
		if set[k] && !strings.Contains(" "+allowed+" ", " "+k+" ") {
			return 0, fmt.Errorf("field %q is not allowed for type %s (allowed: weight, %s)", k, f.Type, strings.ReplaceAll(allowed, " ", ", "))
		}
	}
	weight := 1.0
	if f.Weight != nil {
		weight = *f.Weight
		if !(weight > 0 && weight <= 1) {
			return 0, fmt.Errorf("weight must be in (0, 1], got %v: queries map the universe into [-1, 1]; to weigh a family up, weigh the others down", weight)
		}
	}
	return weight, nil
}

// addMarginals adds a "marginals" family: the listed attribute sets.
func (w *Workload) addMarginals(f *FamilySpec, fi int, fam *Family) error {
	fam.Kind = Marginals
	if len(f.Sets) == 0 {
		return errors.New(`"sets" must list at least one attribute set`)
	}
	seen := map[string]bool{}
	for i, names := range f.Sets {
		attrs, err := w.resolveAttrs(names, fmt.Sprintf("set %d", i+1))
		if err != nil {
			return err
		}
		if len(attrs) == 0 {
			return fmt.Errorf("set %d is empty", i+1)
		}
		key := fmt.Sprint(attrs)
		if seen[key] {
			return fmt.Errorf("set %d %q is listed twice", i+1, names)
		}
		seen[key] = true
		if err := w.addMarginal(attrs, fi, fam.Weight); err != nil {
			return err
		}
	}
	fam.Description = fmt.Sprintf("%d marginal sets", len(f.Sets))
	return nil
}

// addKWay adds a "kway" family: every k-attribute set of the attributes
// (all of the domain's when none are listed), or a seeded sample of them.
func (w *Workload) addKWay(f *FamilySpec, fi int, fam *Family) error {
	fam.Kind = Marginals
	var cands []int
	if f.Attributes != nil {
		a, err := w.resolveAttrs(f.Attributes, `"attributes"`)
		if err != nil {
			return err
		}
		if len(a) == 0 {
			return errors.New(`"attributes" is empty`)
		}
		cands = a
	} else {
		cands = make([]int, w.dom.Len())
		for i := range cands {
			cands[i] = i
		}
	}
	if f.K <= 0 {
		return fmt.Errorf(`"k" must be a positive integer, got %d`, f.K)
	}
	if f.K > len(cands) {
		return fmt.Errorf("k = %d is larger than the number of attributes (%d)", f.K, len(cands))
	}
	over := fmt.Sprintf("%d attributes", len(cands))
	var sets [][]int
	if f.Sample != 0 {
		if f.Sample < 0 {
			return fmt.Errorf(`"sample" must be a positive integer, got %d`, f.Sample)
		}
		var seed uint64
		if f.Seed != nil {
			seed = *f.Seed
		}
		var err error
		sets, err = sampleSets(cands, f.K, f.Sample, seed)
		if err != nil {
			return err
		}
		fam.Description = fmt.Sprintf("%d random %d-way marginals over %s (seed %d)", f.Sample, f.K, over, seed)
	} else {
		if f.Seed != nil {
			return errors.New(`"seed" needs "sample"`)
		}
		total := binomial(len(cands), f.K)
		if !total.IsInt64() || total.Int64() > MaxQueries {
			return fmt.Errorf("all %d-way marginals over %s are %s sets, too many; use \"sample\"", f.K, over, universe.FormatCount(total))
		}
		sets = combinations(cands, f.K)
		fam.Description = fmt.Sprintf("all %d-way marginals over %s (%d sets)", f.K, over, len(sets))
	}
	for _, s := range sets {
		if err := w.addMarginal(s, fi, fam.Weight); err != nil {
			return err
		}
	}
	return nil
}

// addRange adds a "range" family: one counting query lo ≤ attribute ≤ hi.
func (w *Workload) addRange(f *FamilySpec, fi int, fam *Family) error {
	fam.Kind = Range
	a, err := w.resolveAttr(f.Attribute)
	if err != nil {
		return err
	}
	r, err := w.resolveRange(a, f.Lo, f.Hi)
	if err != nil {
		return err
	}
	w.blocks = append(w.blocks, block{kind: bProduct, family: fi, weight: fam.Weight, off: w.m, n: 1, attrs: []int{a}, runs: [][]run{{r}}, set: -1})
	w.m++
	fam.Description = "range on " + w.dom.Attr(a).Name
	return nil
}

// addPrefixes adds a "prefixes" family: attribute ≤ v for every value v
// of an ordered attribute but the last.
func (w *Workload) addPrefixes(f *FamilySpec, fi int, fam *Family) error {
	fam.Kind = Prefixes
	a, err := w.resolveAttr(f.Attribute)
	if err != nil {
		return err
	}
	attr := w.dom.Attr(a)
	if !attr.Ordered() {
		return fmt.Errorf("attribute %q is categorical (unordered); prefixes need an integer, numeric or encoded attribute", attr.Name)
	}
	n := valueCodes(attr) - 1
	if n < 1 {
		return fmt.Errorf("attribute %q has a single value, so it has no proper prefixes", attr.Name)
	}
	if w.m+n > MaxQueries {
		return fmt.Errorf("workload has more than %d queries", MaxQueries)
	}
	w.blocks = append(w.blocks, block{kind: bPrefix, family: fi, weight: fam.Weight, off: w.m, n: n, attrs: []int{a}, set: -1})
	w.m += n
	fam.Description = fmt.Sprintf("%d prefixes of %s", n, attr.Name)
	return nil
}

// addPredicate adds a "predicate" family: one counting query, the
// conjunction of its clauses (one per attribute: a set of values or a
// range).
func (w *Workload) addPredicate(f *FamilySpec, fi int, fam *Family) error {
	fam.Kind = Predicate
	if len(f.Where) == 0 {
		return errors.New(`"where" needs at least one clause`)
	}
	type clause struct {
		attr int
		runs []run
	}
	cl := make([]clause, 0, len(f.Where))
	seen := map[int]bool{}
	for i, c := range f.Where {
		a, err := w.resolveAttr(c.Attribute)
		if err != nil {
			return fmt.Errorf("clause %d: %w", i+1, err)
		}
		if seen[a] {
			return fmt.Errorf("clause %d: attribute %q appears twice; give one clause per attribute", i+1, c.Attribute)
		}
		seen[a] = true
		var runs []run
		switch {
		case c.In != nil && (c.Lo != nil || c.Hi != nil):
			return fmt.Errorf(`clause %d: give either "in" or "lo" and "hi", not both`, i+1)
		case c.In != nil:
			runs, err = w.resolveIn(a, c.In)
		default:
			var r run
			r, err = w.resolveRange(a, c.Lo, c.Hi)
			runs = []run{r}
		}
		if err != nil {
			return fmt.Errorf("clause %d: %w", i+1, err)
		}
		cl = append(cl, clause{a, runs})
	}
	slices.SortFunc(cl, func(x, y clause) int { return x.attr - y.attr })
	b := block{kind: bProduct, family: fi, weight: fam.Weight, off: w.m, n: 1, set: -1}
	for _, c := range cl {
		b.attrs = append(b.attrs, c.attr)
		b.runs = append(b.runs, c.runs)
	}
	w.blocks = append(w.blocks, b)
	w.m++
	fam.Description = fmt.Sprintf("predicate on %d attributes", len(cl))
	return nil
}

func (w *Workload) addMarginal(attrs []int, family int, weight float64) error {
	cells := int64(1)
	for _, a := range attrs {
		cells *= int64(w.dom.Attr(a).Size())
		if cells > w.maxCells {
			break
		}
	}
	if cells > w.maxCells {
		exact := big.NewInt(1)
		for _, a := range attrs {
			exact.Mul(exact, big.NewInt(int64(w.dom.Attr(a).Size())))
		}
		return fmt.Errorf("marginal %q has %s cells, over max_cells = %d; raise max_cells or coarsen its attributes",
			w.names(attrs), universe.FormatCount(exact), w.maxCells)
	}
	if int64(w.m)+cells > MaxQueries {
		return fmt.Errorf("workload has more than %d queries", MaxQueries)
	}
	w.sets = append(w.sets, Marginal{Attrs: attrs, Family: family, Weight: weight, Offset: w.m, Cells: int(cells)})
	w.blocks = append(w.blocks, block{kind: bMarginal, family: family, weight: weight, off: w.m, n: int(cells), attrs: attrs, set: len(w.sets) - 1})
	w.m += int(cells)
	return nil
}

func (w *Workload) names(attrs []int) []string {
	n := make([]string, len(attrs))
	for i, a := range attrs {
		n[i] = w.dom.Attr(a).Name
	}
	return n
}

func (w *Workload) resolveAttr(name string) (int, error) {
	if name == "" {
		return -1, errors.New(`missing "attribute"`)
	}
	i, ok := w.dom.Index(name)
	if !ok {
		return -1, fmt.Errorf("unknown attribute %q (the domain has %s)", name, strings.Join(quoteAll(w.dom.Names(), 12), ", "))
	}
	return i, nil
}

// resolveAttrs maps names to sorted positions, refusing unknown and repeated
// attributes.
func (w *Workload) resolveAttrs(names []string, what string) ([]int, error) {
	out := make([]int, 0, len(names))
	for _, n := range names {
		i, err := w.resolveAttr(n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if slices.Contains(out, i) {
			return nil, fmt.Errorf("%s: attribute %q appears twice", what, n)
		}
		out = append(out, i)
	}
	slices.Sort(out)
	return out, nil
}

func quoteAll(s []string, limit int) []string {
	out := make([]string, 0, min(len(s), limit+1))
	for i, x := range s {
		if i == limit {
			out = append(out, fmt.Sprintf("… %d in all", len(s)))
			break
		}
		out = append(out, strconv.Quote(x))
	}
	return out
}

// valueCodes is the number of codes of declared values (all but the null
// code).
func valueCodes(a *universe.Attribute) int {
	if _, ok := a.NullCode(); ok {
		return a.Size() - 1
	}
	return a.Size()
}

// resolveRange maps declared bounds to an inclusive run of codes.
func (w *Workload) resolveRange(a int, lo, hi *Value) (run, error) {
	attr := w.dom.Attr(a)
	if !attr.Ordered() {
		return run{}, fmt.Errorf("attribute %q is categorical (unordered); use a predicate with \"in\"", attr.Name)
	}
	if lo == nil || hi == nil {
		return run{}, fmt.Errorf(`range on %q needs "lo" and "hi"`, attr.Name)
	}
	cl, err := encodeOrdered(attr, "lo", lo.Text)
	if err != nil {
		return run{}, err
	}
	ch, err := encodeOrdered(attr, "hi", hi.Text)
	if err != nil {
		return run{}, err
	}
	if attr.Kind == universe.Numeric {
		lf, _ := strconv.ParseFloat(strings.TrimSpace(lo.Text), 64)
		hf, _ := strconv.ParseFloat(strings.TrimSpace(hi.Text), 64)
		if hf < lf {
			return run{}, fmt.Errorf("empty range on %q: lo %s is above hi %s", attr.Name, lo.Text, hi.Text)
		}
		if ch > 0 && hf > lf && hf == attr.Edges[ch] {
			ch-- // bins are [lo, hi): a range ending on an inner edge stops below it
		}
	}
	if cl > ch {
		return run{}, fmt.Errorf("empty range on %q: lo %s is above hi %s", attr.Name, lo.Text, hi.Text)
	}
	return run{int32(cl), int32(ch)}, nil
}

func encodeOrdered(attr *universe.Attribute, which, text string) (int, error) {
	c, _, err := attr.EncodeString(text, universe.Policy{})
	if err != nil {
		return -1, fmt.Errorf("attribute %q: %s: %w", attr.Name, which, public(err))
	}
	if nc, ok := attr.NullCode(); ok && c == nc {
		return -1, fmt.Errorf("attribute %q: %s is the null token %q, which has no place in the order", attr.Name, which, text)
	}
	return c, nil
}

// public marks a value error about a workload's value as showing it: the
// workload is public input, not data.
func public(err error) error {
	var ve *universe.ValueError
	if errors.As(err, &ve) {
		c := *ve
		c.Show = true
		return &c
	}
	return err
}

// resolveIn maps declared values to sorted, merged runs of codes.
func (w *Workload) resolveIn(a int, vals []Value) ([]run, error) {
	attr := w.dom.Attr(a)
	if len(vals) == 0 {
		return nil, fmt.Errorf(`attribute %q: "in" lists no values`, attr.Name)
	}
	codes := make([]int, 0, len(vals))
	for _, v := range vals {
		c, _, err := attr.EncodeString(v.Text, universe.Policy{})
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", attr.Name, public(err))
		}
		codes = append(codes, c)
	}
	slices.Sort(codes)
	codes = slices.Compact(codes)
	var runs []run
	for _, c := range codes {
		if n := len(runs); n > 0 && int(runs[n-1].hi)+1 == c {
			runs[n-1].hi++
			continue
		}
		runs = append(runs, run{int32(c), int32(c)})
	}
	return runs, nil
}

// binomial returns C(n, k).
func binomial(n, k int) *big.Int { return new(big.Int).Binomial(int64(n), int64(k)) }

// combinations lists the k-subsets of cands in lexicographic order.
func combinations(cands []int, k int) [][]int {
	var out [][]int
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	for {
		s := make([]int, k)
		for i, x := range idx {
			s[i] = cands[x]
		}
		out = append(out, s)
		i := k - 1
		for i >= 0 && idx[i] == len(cands)-k+i {
			i--
		}
		if i < 0 {
			return out
		}
		idx[i]++
		for j := i + 1; j < k; j++ {
			idx[j] = idx[j-1] + 1
		}
	}
}

// KWay returns the workload of all k-way marginals over the named attributes
// (nil: all attributes) of dom, with weight 1 and DefaultMaxCells.
func KWay(dom *universe.Domain, k int, attrs []string) (*Workload, error) {
	return Build(dom, &Spec{Families: []FamilySpec{{Type: "kway", K: k, Attributes: attrs}}})
}

// SampleKWay returns the workload of n distinct k-way marginals of dom drawn
// uniformly at random with the given seed (the GEM/RAP protocol), with
// weight 1 and DefaultMaxCells. The draw is a public, reproducible choice of
// queries, not a privacy mechanism: it is the same on every run and
// platform for the same domain, k, n and seed.
func SampleKWay(dom *universe.Domain, k, n int, seed uint64) (*Workload, error) {
	if n <= 0 {
		return nil, &WorkloadError{Err: fmt.Errorf("sample size must be positive, got %d", n)}
	}
	return Build(dom, &Spec{Families: []FamilySpec{{Type: "kway", K: k, Sample: n, Seed: &seed}}})
}
