package sqlsrc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dpsynth/synth/universe"
)

// Options configure a Source. Exactly one of Table and Query is set.
type Options struct {
	// Table is the table to count (a dotted name is quoted part by part,
	// e.g. "analytics.people").
	Table string
	// Query is a SELECT whose result is counted (used as a subquery).
	Query string
	// Policy lists the row-wise repairs allowed, done in SQL; the zero value
	// allows none.
	Policy universe.Policy
	// Dialect is the engine's dialect; Detect (the zero value) takes it from
	// the DSN's scheme: postgres:// or postgresql:// (PostgreSQL, driver
	// pgx), clickhouse:// (ClickHouse native protocol, clickhouse-go).
	Dialect Dialect
	// LocalCells is the largest number of cells over the union of the
	// attributes of the sets for which Marginals runs one GROUP BY over that
	// union and sums the marginals here, instead of one GROUPING SETS (or
	// UNION ALL) query; at most that many rows leave the engine. 0 means
	// DefaultLocalCells; a negative value always asks for each set.
	LocalCells int
	// Unit, when set, bounds each privacy unit's rows in SQL before they
	// are counted (see Unit): Marginals and Histogram count the kept rows,
	// and Check refuses NULL or empty units.
	Unit *Unit
	// ShowValues prints an example of a column's bad values in the
	// DataError of Check; by default it is left out (private data).
	ShowValues bool
}

// DefaultLocalCells is the default of Options.LocalCells: 2^20 cells.
// Engines plan GROUPING SETS over computed codes poorly (PostgreSQL sorts
// once per set; ClickHouse 18.16 scans once per UNION ALL branch), while
// one GROUP BY is a single hashed pass.
const DefaultLocalCells = 1 << 20

// MaxTableCells bounds the cells of one marginal table a Source or
// MarginalCounts returns (2^31: 16 GiB of int64 counts).
const MaxTableCells = 1 << 31

// Source counts a table where it lives: every count is one SQL query run by
// the engine, and only count tables leave it. A Source is safe for
// sequential use only.
type Source struct {
	db      *sql.DB
	dom     *universe.Domain
	c       *compiler
	dsn     string // redacted
	scrub   scrubber
	report  *Report
	checked error
	local   int
	show    bool // Options.ShowValues
}

// Report is the result of Check.
type Report struct {
	// Rows is the number of rows of the table or query (n).
	Rows int64
	// Columns has one entry per attribute, in domain order.
	Columns []ColumnReport
}

// ColumnReport is what Check found in one column.
type ColumnReport struct {
	Column string
	// Bad is the number of values outside the domain after the repairs of
	// the policy; Example is one of them (NullMarker for an SQL NULL).
	Bad     int64
	Example string
	// Repaired is the number of values the policy changed (clamped or
	// mapped to the declared other value).
	Repaired int64
}

// Repaired is the total number of values repaired, over all columns.
func (r *Report) Repaired() int64 {
	var t int64
	for _, c := range r.Columns {
		t += c.Repaired
	}
	return t
}

// DetectDialect returns the dialect of a DSN with a driver here.
func DetectDialect(dsn string) (Dialect, error) {
	scheme, _, ok := strings.Cut(dsn, "://")
	if ok {
		switch strings.ToLower(scheme) {
		case "postgres", "postgresql":
			return Postgres, nil
		case "clickhouse":
			return ClickHouse, nil
		}
	}
	return Detect, fmt.Errorf("cannot tell the database from the DSN %s: want postgres://… or clickhouse://…", RedactDSN(dsn))
}

// Open connects to the database of dsn (credentials from the DSN or the
// drivers' environment: PGPASSWORD, PGUSER, … for PostgreSQL,
// CLICKHOUSE_USER and CLICKHOUSE_PASSWORD for ClickHouse), checks that the
// table or query has a column per attribute and learns the column types.
// It reads no row. The DSN's password never appears in an error.
func Open(ctx context.Context, dsn string, dom *universe.Domain, o *Options) (*Source, error) {
	if o == nil {
		o = &Options{}
	}
	d := o.Dialect
	if d == Detect {
		var err error
		if d, err = DetectDialect(dsn); err != nil {
			return nil, err
		}
	}
	c, err := newCompiler(dom, d, o.Table, o.Query, o.Policy)
	if err != nil {
		return nil, err
	}
	if err := c.setUnit(o.Unit); err != nil {
		return nil, err
	}
	s := &Source{dom: dom, c: c, dsn: RedactDSN(dsn), local: o.LocalCells, show: o.ShowValues}
	if s.local == 0 {
		s.local = DefaultLocalCells
	}
	if s.db, s.scrub, err = openDB(dsn, d, s.dsn); err != nil {
		return nil, err
	}
	if err := s.db.PingContext(ctx); err != nil {
		s.db.Close()
		return nil, s.fail(ctx, "connect", err)
	}
	if err := s.probe(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// openDB opens a connection pool of the dialect's driver (PostgreSQL or
// ClickHouse) and the scrubber of the DSN's password; redacted names the
// DSN in errors.
func openDB(dsn string, d Dialect, redacted string) (*sql.DB, scrubber, error) {
	switch d {
	case Postgres:
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, scrubber{}, &SourceError{Op: "connect", Source: redacted, Err: errors.New("bad PostgreSQL DSN")}
		}
		return stdlib.OpenDB(*cfg), scrubber{secret: cfg.Password}, nil
	case ClickHouse:
		opts, err := clickhouse.ParseDSN(dsn)
		if err != nil {
			return nil, scrubber{}, &SourceError{Op: "connect", Source: redacted, Err: errors.New("bad ClickHouse DSN")}
		}
		if u, err := url.Parse(dsn); err == nil && u.User == nil {
			if v := os.Getenv("CLICKHOUSE_USER"); v != "" {
				opts.Auth.Username = v
			}
			if v := os.Getenv("CLICKHOUSE_PASSWORD"); v != "" {
				opts.Auth.Password = v
			}
		}
		return clickhouse.OpenDB(opts), scrubber{secret: opts.Auth.Password}, nil
	}
	return nil, scrubber{}, fmt.Errorf("no driver for %s here: print the counting SQL with \"synth sql --dialect %s\", run it in the engine and read its result with --marginal-counts", d, d)
}

// fail wraps a driver error; a cancelled context wins.
func (s *Source) fail(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// A driver may see its connection's deadline pass (an i/o timeout)
	// before the context marks itself done.
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return &SourceError{Op: op, Source: s.dsn, Err: s.scrub.err(err)}
}

// probe reads the source's column names and types (no rows).
func (s *Source) probe(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "SELECT * FROM "+s.c.from+" WHERE 1 = 0 LIMIT 0")
	if err != nil {
		return s.fail(ctx, "query (columns)", err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return s.fail(ctx, "query (columns)", err)
	}
	byName := map[string]string{}
	var names []string
	for _, ct := range cts {
		byName[ct.Name()] = ct.DatabaseTypeName()
		names = append(names, ct.Name())
	}
	s.c.types = make([]colType, s.dom.Len())
	for i, a := range s.dom.Attrs() {
		t, ok := byName[a.Name]
		if !ok {
			const show = 20
			if len(names) > show {
				names = append(names[:show], "…")
			}
			return &DataError{Column: a.Name, Reason: fmt.Sprintf("missing column (the source has %s)", strings.Join(names, ", "))}
		}
		s.c.types[i] = classify(t)
	}
	if u := s.c.unit; u != nil {
		if _, ok := byName[u.Column]; !ok {
			return &DataError{Column: u.Column, Reason: fmt.Sprintf("missing column: the privacy unit (the source has %s)", strings.Join(names, ", "))}
		}
	}
	return rows.Err()
}

// classify maps a database type name to how its values are encoded.
func classify(t string) colType {
	t = strings.ToUpper(t)
	for _, w := range []string{"NULLABLE(", "LOWCARDINALITY("} {
		if strings.HasPrefix(t, w) {
			t = strings.TrimSuffix(strings.TrimPrefix(t, w), ")")
		}
	}
	if ct, ok := classifyTime(t); ok {
		return ct
	}
	switch t {
	case "INT2", "INT4", "INT8", "SMALLINT", "INTEGER", "BIGINT",
		"INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64":
		return intCol
	case "FLOAT4", "FLOAT8", "REAL", "DOUBLE PRECISION", "FLOAT32", "FLOAT64":
		return floatCol
	}
	return textCol
}

// Close closes the connections.
func (s *Source) Close() error { return s.db.Close() }

// Unbounded returns a view of s that counts every row, without the privacy
// unit's bound (s itself when it has none): the table as its owners see
// it, for an internal report. It shares s's connections (close s, not the
// view) and runs its own check once.
func (s *Source) Unbounded() *Source {
	if s.c.unit == nil {
		return s
	}
	c := *s.c
	c.unit = nil
	v := *s
	v.c, v.report, v.checked = &c, nil, nil
	return &v
}

// Dialect returns the source's dialect.
func (s *Source) Dialect() Dialect { return s.c.d }

// Check counts, in one query, the rows and per column the values outside
// the domain (after the policy's repairs) with one example. When a column
// has any, it returns the report and a *DataError for the first such column
// in domain order. Marginals and Histogram run it first (once).
func (s *Source) Check(ctx context.Context) (*Report, error) {
	if s.report != nil {
		return s.report, s.checked
	}
	repairs := s.c.p.Clamp || s.c.p.UnknownToOther
	rows, err := s.db.QueryContext(ctx, s.c.check())
	if err != nil {
		return nil, s.fail(ctx, "query (check)", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, s.fail(ctx, "query (check)", err)
		}
		return nil, s.fail(ctx, "query (check)", errors.New("no result row"))
	}
	n := s.dom.Len()
	rep := &Report{Columns: make([]ColumnReport, n)}
	examples := make([]sql.NullString, n)
	dst := []any{&rep.Rows}
	for i := range n {
		rep.Columns[i].Column = s.dom.Attr(i).Name
		dst = append(dst, &rep.Columns[i].Bad, &examples[i])
		if repairs {
			dst = append(dst, &rep.Columns[i].Repaired)
		}
	}
	var nullUnits int64
	if s.c.unit != nil {
		dst = append(dst, &nullUnits)
	}
	if err := rows.Scan(dst...); err != nil {
		return nil, s.fail(ctx, "query (check)", err)
	}
	if err := rows.Close(); err != nil {
		return nil, s.fail(ctx, "query (check)", err)
	}
	var bad error
	if nullUnits > 0 {
		bad = &DataError{Column: s.c.unit.Column, Count: nullUnits,
			Reason: fmt.Sprintf("the privacy unit is NULL or empty in %d rows: every row must name its unit", nullUnits)}
	}
	for i := range rep.Columns {
		c := &rep.Columns[i]
		c.Example = examples[i].String
		if c.Bad > 0 && bad == nil {
			bad = &DataError{Column: c.Column, Count: c.Bad, Example: c.Example, Domain: s.dom.Attr(i).Describe(), Show: s.show}
		}
	}
	s.report, s.checked = rep, bad
	return rep, bad
}

// cells returns the number of cells of a marginal over set.
func cells(dom *universe.Domain, set []int) (int, error) {
	k := 1
	for _, a := range set {
		k *= dom.Attr(a).Size()
		if k > MaxTableCells {
			return 0, fmt.Errorf("the marginal over %s has more than %d cells", setNames(dom, set), MaxTableCells)
		}
	}
	return k, nil
}

// setNames renders a set as {a, b}.
func setNames(dom *universe.Domain, set []int) string {
	names := make([]string, len(set))
	for j, a := range set {
		names[j] = fmt.Sprintf("%q", dom.Attr(a).Name)
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// tables holds the output tables of Marginals and maps result rows to them.
type tables struct {
	dom   *universe.Domain
	sets  [][]int          // caller order
	out   [][]int64        // one table per caller set
	byKey map[string][]int // sorted set key -> caller set indices
}

func newTables(dom *universe.Domain, sets [][]int) (*tables, error) {
	t := &tables{dom: dom, sets: sets, out: make([][]int64, len(sets)), byKey: map[string][]int{}}
	for j, s := range sets {
		k, err := cells(dom, s)
		if err != nil {
			return nil, err
		}
		t.out[j] = make([]int64, k)
		sorted := slices.Clone(s)
		slices.Sort(sorted)
		key := setKey(sorted)
		t.byKey[key] = append(t.byKey[key], j)
	}
	return t, nil
}

// add counts w in the cell whose codes are given per attribute (code[a]
// for a in the row's set, sorted).
func (t *tables) add(set []int, code map[int]int, w int64) bool {
	js, ok := t.byKey[setKey(set)]
	if !ok {
		return false
	}
	for _, j := range js {
		idx := 0
		for _, a := range t.sets[j] {
			idx = idx*t.dom.Attr(a).Size() + code[a]
		}
		t.out[j][idx] += w
	}
	return true
}

// Marginals returns one count table per set (attribute positions), in the
// set's mixed radix with its last attribute varying fastest; the empty set
// gives [n]. One query counts them all: a GROUP BY over the union of the
// sets' attributes summed here when it has at most Options.LocalCells
// cells (a public bound on the rows returned), else GROUPING SETS (a UNION
// ALL of GROUP BYs in ClickHouse). Cells the engine does not return are
// zero.
func (s *Source) Marginals(ctx context.Context, sets [][]int) ([][]int64, error) {
	if _, err := s.Check(ctx); err != nil {
		return nil, err
	}
	norm, err := normalizeSets(s.dom, sets)
	if err != nil {
		return nil, err
	}
	t, err := newTables(s.dom, sets)
	if err != nil {
		return nil, err
	}
	if len(norm) == 0 {
		return t.out, nil
	}
	cols := union(norm)
	if len(norm) > 1 && s.local > 0 {
		if k, err := cells(s.dom, cols); err == nil && k <= s.local {
			code := make(map[int]int, len(cols))
			err := s.query(ctx, "query (marginals)", s.c.marginals([][]int{cols}), cols, func(codes []sql.NullInt64, w int64) error {
				for j, a := range cols {
					code[a] = int(codes[j].Int64)
				}
				for j, set := range t.sets {
					idx := 0
					for _, a := range set {
						idx = idx*s.dom.Attr(a).Size() + code[a]
					}
					t.out[j][idx] += w
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			return t.out, nil
		}
	}
	// Many sets (a factored model's candidates: hundreds) go in batches of
	// MaxSetsPerQuery, so that no statement exceeds an engine's query-size
	// limit (ClickHouse: 256 KiB by default).
	for lo := 0; lo < len(norm); lo += MaxSetsPerQuery {
		batch := norm[lo:min(lo+MaxSetsPerQuery, len(norm))]
		bcols := union(batch)
		err = s.query(ctx, "query (marginals)", s.c.marginals(batch), bcols, func(codes []sql.NullInt64, w int64) error {
			set := make([]int, 0, len(bcols))
			code := make(map[int]int, len(bcols))
			for j, a := range bcols {
				if codes[j].Valid {
					set = append(set, a)
					code[a] = int(codes[j].Int64)
				}
			}
			if !t.add(set, code, w) {
				return fmt.Errorf("a result row of the set %s, which was not asked for", setNames(s.dom, set))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return t.out, nil
}

// MaxSetsPerQuery bounds the attribute sets counted by one GROUPING SETS
// or UNION ALL statement.
const MaxSetsPerQuery = 32

// Histogram counts the table over every attribute (one GROUP BY).
func (s *Source) Histogram(ctx context.Context) (*universe.Counts, error) {
	if _, err := s.Check(ctx); err != nil {
		return nil, err
	}
	cols := make([]int, s.dom.Len())
	for i := range cols {
		cols[i] = i
	}
	h := universe.NewCounts(s.dom)
	buf := make([]int, len(cols))
	err := s.query(ctx, "query (histogram)", s.c.histogram(), cols, func(codes []sql.NullInt64, w int64) error {
		for j := range cols {
			if !codes[j].Valid {
				return errors.New("a NULL code in the histogram")
			}
			buf[j] = int(codes[j].Int64)
		}
		return h.Add(buf, w)
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// query runs a counting query whose columns are the codes of cols and the
// count, checks every code and count, and calls row for each result row.
func (s *Source) query(ctx context.Context, op, q string, cols []int, row func([]sql.NullInt64, int64) error) error {
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return s.fail(ctx, op, err)
	}
	defer rows.Close()
	codes := make([]sql.NullInt64, len(cols))
	var w int64
	dst := make([]any, 0, len(cols)+1)
	for j := range codes {
		dst = append(dst, &codes[j])
	}
	dst = append(dst, &w)
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return s.fail(ctx, op, err)
		}
		for j, a := range cols {
			attr := s.dom.Attr(a)
			if c := codes[j]; c.Valid && (c.Int64 < 0 || c.Int64 >= int64(attr.Size())) {
				// Check passed, so the data changed under us.
				return &DataError{Column: attr.Name, Count: w, Domain: attr.Describe(),
					Reason: fmt.Sprintf("%d values outside the declared domain (%s) appeared after the check; was the table changed?", w, attr.Describe())}
			}
		}
		if w < 0 || w > math.MaxInt64/2 {
			return s.fail(ctx, op, fmt.Errorf("bad count %d", w))
		}
		if err := row(codes, w); err != nil {
			return s.fail(ctx, op, err)
		}
	}
	if err := rows.Err(); err != nil {
		return s.fail(ctx, op, err)
	}
	return nil
}
