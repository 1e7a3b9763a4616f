package sqlsrc

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dpsynth/synth/universe"
)

// CountColumn is the name of the count column of every counting query and
// of the files ReadMarginalCounts reads.
const CountColumn = "count"

// NullMarker stands for an SQL NULL in the examples of a Report.
const NullMarker = "<SQL NULL>"

// maxExactInt bounds the integer attributes' min and max: beyond 2^52 a
// double (the engines' parse of a text in most dialects) no longer holds
// every integer and the difference max − min exactly.
const maxExactInt = 1 << 52

// colType is what a Source learned of a column's type; Compile knows
// nothing and treats every column as text, as ingest treats a CSV file.
type colType uint8

const (
	textCol  colType = iota // text, or unknown: parsed as ingest parses CSV
	intCol                  // a SQL integer type: ingest's EncodeInt
	floatCol                // a SQL float type: ingest's EncodeFloat
	boolCol                 // a SQL boolean
	dateCol                 // a SQL date
	tsCol                   // an instant (TIMESTAMP WITH TIME ZONE, ClickHouse's DateTime)
	wallCol                 // a wall-clock time (TIMESTAMP WITHOUT TIME ZONE)
)

// compiler writes the counting SQL of one source.
type compiler struct {
	dom   *universe.Domain
	d     Dialect
	p     universe.Policy
	from  string    // FROM clause: a quoted table or a parenthesised query with alias
	types []colType // per attribute; nil: all text
	unit  *Unit     // the privacy unit's bound, or nil: every row counts
}

func newCompiler(dom *universe.Domain, d Dialect, table, query string, p universe.Policy) (*compiler, error) {
	if dom == nil {
		panic("sqlsrc: nil domain")
	}
	if d == Detect || int(d) >= len(dialectNames) {
		return nil, fmt.Errorf("sqlsrc: no SQL dialect given (want one of %s)", strings.Join(Dialects(), ", "))
	}
	from, err := fromClause(d, table, query)
	if err != nil {
		return nil, err
	}
	for _, a := range dom.Attrs() {
		if err := checkAttr(a); err != nil {
			return nil, err
		}
	}
	return &compiler{dom: dom, d: d, p: p, from: from}, nil
}

// checkAttr refuses what the SQL could not encode exactly as ingest does.
func checkAttr(a *universe.Attribute) error {
	if a.Name == CountColumn {
		return fmt.Errorf("attribute %q: the name is taken by the count column; rename the attribute (and select the column under the new name with --query)", a.Name)
	}
	bad := func(s string) bool { return strings.IndexByte(s, 0) >= 0 }
	if bad(a.Name) || bad(a.NullToken) || slices.ContainsFunc(a.Values, bad) {
		return fmt.Errorf("attribute %q: names and values with NUL bytes cannot be written in SQL", a.Name)
	}
	if a.Kind == universe.Integer && (a.Min < -maxExactInt || a.Max > maxExactInt) {
		return fmt.Errorf("attribute %q: integer bounds %d..%d exceed ±2^52, which SQL engines parse as doubles inexactly", a.Name, a.Min, a.Max)
	}
	return nil
}

// fromClause returns the FROM clause of a table name (dotted parts quoted
// one by one) or a query (wrapped as a subquery).
func fromClause(d Dialect, table, query string) (string, error) {
	query = strings.TrimRight(strings.TrimSpace(query), "; \t\r\n")
	switch {
	case table != "" && query != "":
		return "", errors.New("give a table or a query, not both")
	case table != "":
		parts := strings.Split(table, ".")
		for i, p := range parts {
			if p == "" {
				return "", fmt.Errorf("table name %q has an empty part", table)
			}
			parts[i] = d.ident(p)
		}
		return strings.Join(parts, "."), nil
	case query != "":
		return "(" + query + ") AS " + d.ident("synth_source"), nil
	}
	return "", errors.New("give a table or a query")
}

// Compile returns the SQL that counts the marginals of sets (attribute
// positions in dom) over a table or a query, in dialect d, with the
// repairs of policy p done in SQL. Its result has one column per attribute
// used by the sets (in domain order, named as the attribute) holding the
// integer code, NULL where the attribute is grouped out of the row's set,
// and the column "count"; the set of a row is the set of its non-NULL
// columns (codes are never NULL). It is the input of ReadMarginalCounts
// once saved as CSV or Parquet. Out-of-domain values get the code -1, which
// ReadMarginalCounts rejects naming the column; CompileCheck counts them.
//
// A nil sets means the full histogram: one GROUP BY over every attribute.
// Every column is read as text, as ingest reads a CSV file; see the package
// documentation for the rules and the few differences.
func Compile(dom *universe.Domain, d Dialect, table, query string, sets [][]int, p universe.Policy) (string, error) {
	return CompileWith(dom, d, &CompileOptions{Table: table, Query: query, Sets: sets, Policy: p})
}

// CompileOptions are the inputs of CompileWith and CompileCheckWith.
type CompileOptions struct {
	// Table or Query is the source; Sets the marginal sets (nil: the full
	// histogram); Policy the repairs done in SQL.
	Table, Query string
	Sets         [][]int
	Policy       universe.Policy
	// Unit, when set, counts only the rows its bound keeps (see Unit).
	Unit *Unit
}

// CompileWith is Compile with a privacy unit's bound: the counts are of the
// rows the bound keeps, the same rows as the file reader keeps.
func CompileWith(dom *universe.Domain, d Dialect, o *CompileOptions) (string, error) {
	c, err := newCompiler(dom, d, o.Table, o.Query, o.Policy)
	if err != nil {
		return "", err
	}
	if err := c.setUnit(o.Unit); err != nil {
		return "", err
	}
	sets := o.Sets
	if sets == nil {
		return c.histogram(), nil
	}
	norm, err := normalizeSets(dom, sets)
	if err != nil {
		return "", err
	}
	return c.marginals(norm), nil
}

// CompileCheck returns the SQL of the validation query: the number of rows,
// then per attribute the number of values outside the domain (after the
// repairs of p), one example of them, and (when p allows repairs) the
// number of values repaired. Source.Check runs it.
func CompileCheck(dom *universe.Domain, d Dialect, table, query string, p universe.Policy) (string, error) {
	return CompileCheckWith(dom, d, &CompileOptions{Table: table, Query: query, Policy: p})
}

// CompileCheckWith is CompileCheck with a privacy unit: the query also
// counts the rows whose unit is NULL or empty (its last column,
// null_units).
func CompileCheckWith(dom *universe.Domain, d Dialect, o *CompileOptions) (string, error) {
	c, err := newCompiler(dom, d, o.Table, o.Query, o.Policy)
	if err != nil {
		return "", err
	}
	if err := c.setUnit(o.Unit); err != nil {
		return "", err
	}
	return c.check(), nil
}

// setUnit checks and sets the privacy unit's bound (nil: none).
func (c *compiler) setUnit(u *Unit) error {
	if u == nil {
		return nil
	}
	if err := u.check(c.dom); err != nil {
		return err
	}
	c.unit = u
	return nil
}

// normalizeSets validates sets and returns them sorted, without repeated
// attributes or repeated sets.
func normalizeSets(dom *universe.Domain, sets [][]int) ([][]int, error) {
	var out [][]int
	seen := map[string]bool{}
	for _, s := range sets {
		t := slices.Clone(s)
		slices.Sort(t)
		for i, a := range t {
			if a < 0 || a >= dom.Len() {
				return nil, fmt.Errorf("marginal set %v: attribute %d out of range (the domain has %d)", s, a, dom.Len())
			}
			if i > 0 && t[i-1] == a {
				return nil, fmt.Errorf("marginal set %v: attribute %q repeated", s, dom.Attr(a).Name)
			}
		}
		k := setKey(t)
		if !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func setKey(s []int) string {
	var b strings.Builder
	for i, a := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(a))
	}
	return b.String()
}

// col is the quoted source column of attribute i; code is its code column
// inside the codes subquery.
func (c *compiler) col(i int) string  { return c.d.ident(c.dom.Attr(i).Name) }
func (c *compiler) code(i int) string { return "c" + strconv.Itoa(i) }

// codes is the subquery that computes the code columns of attrs (with a
// privacy unit: of every attribute, over the kept rows, with their weight w).
func (c *compiler) codes(attrs []int) string {
	if c.unit != nil {
		return c.bounded()
	}
	var b strings.Builder
	b.WriteString("(SELECT")
	for j, i := range attrs {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		b.WriteString(c.codeExpr(i, c.p))
		b.WriteString(" AS ")
		b.WriteString(c.code(i))
	}
	if len(attrs) == 0 {
		b.WriteString(" 1 AS one")
	}
	b.WriteString("\n  FROM ")
	b.WriteString(c.from)
	b.WriteString(") AS codes")
	return b.String()
}

func union(sets [][]int) []int {
	var u []int
	for _, s := range sets {
		u = append(u, s...)
	}
	slices.Sort(u)
	return slices.Compact(u)
}

// marginals compiles the counting query of normalised sets.
func (c *compiler) marginals(sets [][]int) string {
	d := c.d
	u := union(sets)
	if c.unit != nil && len(sets) > 1 && !d.groupingSets() {
		return c.unitSets(sets)
	}
	if len(sets) == 1 || d.groupingSets() {
		var b strings.Builder
		b.WriteString("SELECT ")
		for _, i := range u {
			b.WriteString(c.code(i) + " AS " + c.col(i) + ", ")
		}
		b.WriteString(c.rowCount() + " AS " + d.ident(CountColumn) + "\nFROM " + c.codes(u))
		switch {
		case len(sets) == 1 && len(sets[0]) > 0:
			b.WriteString("\nGROUP BY " + c.codeList(sets[0]))
		case len(sets) > 1:
			b.WriteString("\nGROUP BY GROUPING SETS (")
			for j, s := range sets {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(" + c.codeList(s) + ")")
			}
			b.WriteString(")")
		}
		return b.String()
	}
	// UNION ALL of one GROUP BY per set, each reading only its attributes.
	var b strings.Builder
	for j, s := range sets {
		if j > 0 {
			b.WriteString("\nUNION ALL\n")
		}
		b.WriteString("SELECT ")
		for _, i := range u {
			x := "NULL"
			if slices.Contains(s, i) {
				x = c.code(i)
			}
			b.WriteString(d.nullableCode(x) + " AS " + c.col(i) + ", ")
		}
		b.WriteString(c.rowCount() + " AS " + d.ident(CountColumn) + "\nFROM " + c.codes(s))
		if len(s) > 0 {
			b.WriteString("\nGROUP BY " + c.codeList(s))
		}
	}
	return b.String()
}

func (c *compiler) codeList(s []int) string {
	names := make([]string, len(s))
	for j, i := range s {
		names[j] = c.code(i)
	}
	return strings.Join(names, ", ")
}

// histogram compiles one GROUP BY over every attribute.
func (c *compiler) histogram() string {
	all := make([]int, c.dom.Len())
	for i := range all {
		all[i] = i
	}
	return c.marginals([][]int{all})
}

// check compiles the validation query.
func (c *compiler) check() string {
	d := c.d
	repairs := c.p.Clamp || c.p.UnknownToOther
	var b strings.Builder
	b.WriteString("SELECT " + d.count() + " AS n")
	for i := range c.dom.Len() {
		bad := "CASE WHEN " + c.code(i) + " < 0 THEN 1 END"
		ex := "CASE WHEN " + c.code(i) + " < 0 THEN " + d.coalesceText("v"+strconv.Itoa(i), NullMarker) + " END"
		fmt.Fprintf(&b, ",\n  %s AS bad%d, MIN(%s) AS example%d", d.countOf(bad), i, ex, i)
		if repairs {
			rep := "CASE WHEN " + c.code(i) + " >= 0 AND r" + strconv.Itoa(i) + " < 0 THEN 1 END"
			fmt.Fprintf(&b, ", %s AS repaired%d", d.countOf(rep), i)
		}
	}
	if c.unit != nil {
		b.WriteString(",\n  " + c.nullUnits("unit") + " AS null_units")
	}
	b.WriteString("\nFROM (SELECT")
	for i := range c.dom.Len() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n    %s AS v%d,\n    %s AS %s", c.col(i), i, c.codeExpr(i, c.p), c.code(i))
		if repairs {
			fmt.Fprintf(&b, ",\n    %s AS r%d", c.codeExpr(i, universe.Policy{}), i)
		}
	}
	if c.unit != nil {
		b.WriteString(",\n    " + d.ident(c.unit.Column) + " AS unit")
	}
	b.WriteString("\n  FROM " + c.from + ") AS codes")
	return b.String()
}

// codeExpr is the SQL expression of attribute i's code under policy p:
// 0..size-1 exactly as ingest encodes the same value, or -1 for a value
// outside the domain. It is never NULL.
func (c *compiler) codeExpr(i int, p universe.Policy) string {
	d, a, v := c.d, c.dom.Attr(i), c.col(i)
	var w caseWriter
	w.d = d
	nullCode := int64(-1)
	if nc, ok := a.NullCode(); ok {
		nullCode = int64(nc)
	}
	w.when(v+" IS NULL", d.intLit(nullCode))
	t := textCol
	if c.types != nil {
		t = c.types[i]
	}
	if a.Kind == universe.Categorical {
		t = textCol // categories are compared as text, whatever the column type
	}
	switch a.Kind {
	case universe.Boolean, universe.Date, universe.Timestamp:
		if t == textCol && a.Nullable {
			w.when(d.text(v)+" = "+d.str(a.NullToken), d.intLit(nullCode))
		}
		c.timeCode(&w, a, v, t, p)
		return w.String()
	}
	if t >= boolCol {
		t = textCol // a boolean, date or time column for another kind: its text, as ingest would refuse it
	}
	switch t {
	case textCol:
		r := d.text(v)
		if a.Nullable {
			w.when(r+" = "+d.str(a.NullToken), d.intLit(nullCode))
		}
		switch a.Kind {
		case universe.Categorical:
			for k, val := range a.Values {
				w.when(r+" = "+d.str(val), d.intLit(int64(k)))
			}
			if p.UnknownToOther && a.HasOther {
				oc, _ := a.Code(a.Other)
				w.when(r+" = ''", d.intLit(-1))
				w.otherwise(d.intLit(int64(oc)))
			} else {
				w.otherwise(d.intLit(-1))
			}
		default:
			tr := d.trim(r)
			w.when("NOT ("+d.isNumber(tr)+")", d.intLit(-1))
			x := d.number(tr)
			if d.tryCast() {
				w.when(x+" IS NULL", d.intLit(-1))
			}
			// ingest parses a float64: beyond its range the value is infinite.
			w.when("abs("+x+") > "+maxFloatLit(d), d.intLit(-1))
			if a.Kind == universe.Numeric {
				c.numericBins(&w, a, d.parseDouble(tr), p)
			} else {
				w.when(x+" <> "+floor(d, x), d.intLit(-1))
				c.integerCode(&w, a, x, p)
			}
		}
	case intCol:
		if a.Kind == universe.Numeric {
			c.numericBins(&w, a, d.double(v), p)
		} else {
			c.integerCode(&w, a, v, p)
		}
	case floatCol:
		x := d.double(v)
		w.when(d.nonFinite(x), d.intLit(-1))
		if a.Kind == universe.Numeric {
			c.numericBins(&w, a, x, p)
		} else {
			w.when(x+" <> "+floor(d, x), d.intLit(-1))
			c.integerCode(&w, a, x, p)
		}
	}
	return w.String()
}

func floor(d Dialect, x string) string {
	if d == ClickHouse {
		return "floor(" + x + ")"
	}
	return "FLOOR(" + x + ")"
}

func maxFloatLit(d Dialect) string {
	if d == Postgres { // compared as NUMERIC
		return "1.7976931348623157e308"
	}
	return d.floatLit(math.MaxFloat64)
}

// integerCode finishes the CASE of an integer or encoded attribute whose
// integral value is x.
func (c *compiler) integerCode(w *caseWriter, a *universe.Attribute, x string, p universe.Policy) {
	d := c.d
	if a.Kind == universe.Encoded {
		n := a.Size()
		if a.Nullable {
			n--
		}
		w.when(x+" < 0 OR "+x+" >= "+strconv.Itoa(n), d.intLit(-1))
		w.otherwise(d.bigint(x))
		return
	}
	last := int64(a.Size() - 1)
	if a.Nullable {
		last--
	}
	lo, hi := strconv.FormatInt(a.Min, 10), strconv.FormatInt(a.Max, 10)
	if a.Min < 0 {
		lo = "(" + lo + ")"
	}
	if a.Max < 0 {
		hi = "(" + hi + ")"
	}
	if p.Clamp {
		w.when(x+" < "+lo, d.intLit(0))
		w.when(x+" > "+hi, d.intLit(last))
	} else {
		w.when(x+" < "+lo+" OR "+x+" > "+hi, d.intLit(-1))
	}
	off := d.bigint(x) + " - " + lo
	if a.Width == 1 {
		w.otherwise(off)
	} else {
		w.otherwise(d.intDiv(off, strconv.FormatInt(a.Width, 10)))
	}
}

// numericBins finishes the CASE of a numeric attribute whose (finite)
// double value is x: bin i is [Edges[i], Edges[i+1]), the last bin closed.
func (c *compiler) numericBins(w *caseWriter, a *universe.Attribute, x string, p universe.Policy) {
	d := c.d
	e := a.Edges
	bins := int64(len(e) - 1)
	lo, hi := d.floatLit(e[0]), d.floatLit(e[len(e)-1])
	if p.Clamp {
		w.when(x+" < "+lo, d.intLit(0))
		w.when(x+" > "+hi, d.intLit(bins-1))
	} else {
		w.when(x+" < "+lo+" OR "+x+" > "+hi, d.intLit(-1))
	}
	for k := int64(0); k < bins-1; k++ {
		w.when(x+" < "+d.floatLit(e[k+1]), d.intLit(k))
	}
	w.otherwise(d.intLit(bins - 1))
}

// caseWriter builds a CASE expression.
type caseWriter struct {
	d Dialect
	b strings.Builder
}

func (w *caseWriter) when(cond, then string) {
	if w.b.Len() == 0 {
		w.b.WriteString("CASE")
	}
	w.b.WriteString(" WHEN " + cond + " THEN " + then)
}

func (w *caseWriter) otherwise(x string) {
	w.b.WriteString(" ELSE " + x + " END")
}

func (w *caseWriter) String() string { return w.b.String() }
