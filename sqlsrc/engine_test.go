package sqlsrc

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

// table is test data to load into an engine: column names, a type per
// column per engine, and rows (nil is SQL NULL).
type table struct {
	name    string
	cols    []string
	pgTypes []string
	chTypes []string
	rows    [][]any
}

// engine loads tables and says how to reach them.
type engine struct {
	dsn     string
	dialect Dialect
	load    func(t *testing.T, tb *table)
	// slowQuery is a query over table "adult" that runs for a long time.
	slowQuery string
}

func postgresEngine(t *testing.T) *engine {
	dsn := startPostgres(t)
	return &engine{dsn: dsn, dialect: Postgres, load: func(t *testing.T, tb *table) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var defs []string
		for j, c := range tb.cols {
			defs = append(defs, Postgres.ident(c)+" "+tb.pgTypes[j])
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE "+Postgres.ident(tb.name)+" ("+strings.Join(defs, ", ")+")"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{tb.name}, tb.cols, pgx.CopyFromRows(tb.rows)); err != nil {
			t.Fatal(err)
		}
	}, slowQuery: `SELECT a.* FROM adult AS a, generate_series(1, 100000) AS g`}
}

// clickhouseEngine starts a two-shard cluster: every table is a MergeTree
// table on each server holding every other row, behind a Distributed table
// on the first server.
func clickhouseEngine(t *testing.T) *engine {
	srv := startClickHouse(t)
	return &engine{dsn: srv[0].dsn(), dialect: ClickHouse, load: func(t *testing.T, tb *table) {
		var defs []string
		for j, c := range tb.cols {
			defs = append(defs, ClickHouse.ident(c)+" "+tb.chTypes[j])
		}
		local := ClickHouse.ident(tb.name + "_local")
		for i, s := range srv {
			s.exec(t, "CREATE TABLE "+local+" ("+strings.Join(defs, ", ")+") ENGINE = MergeTree() ORDER BY tuple()", nil)
			var b bytes.Buffer
			for r := i; r < len(tb.rows); r += len(srv) {
				for j, v := range tb.rows[r] {
					if j > 0 {
						b.WriteByte(',')
					}
					b.WriteString(chCSV(v))
				}
				b.WriteByte('\n')
			}
			s.exec(t, "INSERT INTO "+local+" FORMAT CSV", b.Bytes())
		}
		srv[0].exec(t, fmt.Sprintf("CREATE TABLE %s AS %s ENGINE = Distributed(%s, default, %s)",
			ClickHouse.ident(tb.name), local, chCluster, ClickHouse.str(tb.name+"_local")), nil)
	}, slowQuery: `SELECT * FROM adult CROSS JOIN numbers(100000)`}
}

// chCSV writes one CSV field for ClickHouse (\N is NULL).
func chCSV(v any) string {
	switch v := v.(type) {
	case nil:
		return `\N`
	case string:
		return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

// readCSV reads a CSV file: header and records.
func readCSV(t testing.TB, data []byte) ([]string, [][]string) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[0], recs[1:]
}

// csvTable makes a table of a CSV file, converting each column with conv.
func csvTable(name string, header []string, recs [][]string, pg, ch func(col string) string, conv func(col, v string) any) *table {
	tb := &table{name: name, cols: header}
	for _, c := range header {
		tb.pgTypes = append(tb.pgTypes, pg(c))
		tb.chTypes = append(tb.chTypes, ch(c))
	}
	for _, r := range recs {
		row := make([]any, len(r))
		for j, v := range r {
			row[j] = conv(header[j], v)
		}
		tb.rows = append(tb.rows, row)
	}
	return tb
}

func writeCSV(t testing.TB, path string, header []string, recs [][]string) {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(header)
	w.WriteAll(recs)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// expected counts a CSV file with ingest.
func expected(t testing.TB, path string, dom *universe.Domain, p universe.Policy) (*universe.Counts, *ingest.Stats) {
	t.Helper()
	h, st, err := ingest.ReadFile(context.Background(), path, dom, ingest.Options{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	return h, st
}

// marginalsOf counts the marginals of a histogram (the reference).
func marginalsOf(h *universe.Counts, sets [][]int) [][]int64 {
	dom := h.Domain()
	out := make([][]int64, len(sets))
	for j, s := range sets {
		k := 1
		for _, a := range s {
			k *= dom.Attr(a).Size()
		}
		out[j] = make([]int64, k)
		for e := range h.Distinct() {
			codes := h.Codes(e)
			idx := 0
			for _, a := range s {
				idx = idx*dom.Attr(a).Size() + int(codes[a])
			}
			out[j][idx] += h.Count(e)
		}
	}
	return out
}

// allSets lists every set of 0..maxK attributes of d attributes.
func allSets(d, maxK int) [][]int {
	var out [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		out = append(out, slices.Clone(cur))
		if len(cur) == maxK {
			return
		}
		for a := start; a < d; a++ {
			rec(a+1, append(cur, a))
		}
	}
	rec(0, nil)
	return out
}

func histMap(h *universe.Counts) map[string]int64 {
	m := map[string]int64{}
	for e := range h.Distinct() {
		m[fmt.Sprint(h.Codes(e))] += h.Count(e)
	}
	return m
}

// compareSource checks every 0- to 3-way marginal (some in reversed
// attribute order) and the histogram of src against ingest's counts.
func compareSource(t *testing.T, ctx context.Context, src *Source, want *universe.Counts) {
	t.Helper()
	sets := allSets(want.Domain().Len(), 3)
	// Reversed order must give the table in that order.
	sets = append(sets, []int{2, 0}, []int{6, 1, 4})
	got, err := src.Marginals(ctx, sets)
	if err != nil {
		t.Fatal(err)
	}
	w := marginalsOf(want, sets)
	for j, s := range sets {
		if !slices.Equal(got[j], w[j]) {
			t.Errorf("Marginals(%v) = %v, want %v", s, got[j], w[j])
		}
	}
	if got[0][0] != want.Total() {
		t.Errorf("Marginals([]) = %v, want [%d]", got[0], want.Total())
	}
	h, err := src.Histogram(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := histMap(h), histMap(want); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("Histogram: %d cells, total %d; want %d cells, total %d (or different counts)", len(g), h.Total(), len(w), want.Total())
	}
}

func TestPostgres(t *testing.T)   { engineTests(t, postgresEngine(t)) }
func TestClickHouse(t *testing.T) { engineTests(t, clickhouseEngine(t)) }

func engineTests(t *testing.T, e *engine) {
	ctx := context.Background()
	dir := t.TempDir()

	// adult-reduced, pre-encoded, integer columns.
	ds, err := datasets.Lookup("adult-reduced")
	if err != nil {
		t.Fatal(err)
	}
	adultCSV, adultDomFile, err := ds.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	adultDom, err := universe.LoadDomain(adultDomFile)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(adultCSV)
	header, recs := readCSV(t, data)
	e.load(t, csvTable("adult", header, recs,
		func(string) string { return "SMALLINT" }, func(string) string { return "UInt8" },
		func(_, v string) any { n, _ := strconv.Atoi(v); return int16(n) }))
	// The same as text.
	e.load(t, csvTable("adult_text", header, recs,
		func(string) string { return "TEXT" }, func(string) string { return "String" },
		func(_, v string) any { return v }))

	// The raw variant of ingest's tests: strings, a null token, an integer
	// in buckets and numeric bins; as text, and typed with SQL NULLs.
	rawDomFile := filepath.Join("..", "ingest", "testdata", "raw", "adult-raw-domain.json")
	rawCSV := filepath.Join("..", "ingest", "testdata", "raw", "adult-raw.csv")
	rawDom, err := universe.LoadDomain(rawDomFile)
	if err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(rawCSV)
	rawHeader, rawRecs := readCSV(t, data)
	e.load(t, csvTable("adult_raw", rawHeader, rawRecs,
		func(string) string { return "TEXT" }, func(string) string { return "String" },
		func(_, v string) any { return v }))
	typed := func(pgInt, pgFloat, chInt, chFloat string) *table {
		return csvTable("adult_raw_typed_"+strings.ToLower(pgInt), rawHeader, rawRecs,
			func(c string) string {
				return map[string]string{"income": pgInt, "age": pgFloat}[c] + map[bool]string{true: "TEXT"}[c != "income" && c != "age"]
			},
			func(c string) string {
				return map[string]string{"income": chInt, "age": chFloat, "occupation": "Nullable(String)"}[c] +
					map[bool]string{true: "String"}[c != "income" && c != "age" && c != "occupation"]
			},
			func(c, v string) any {
				switch c {
				case "income":
					n, _ := strconv.ParseInt(v, 10, 64)
					return n
				case "age":
					f, _ := strconv.ParseFloat(v, 64)
					return f
				case "occupation":
					if v == "NA" {
						return nil
					}
				}
				return v
			})
	}
	e.load(t, typed("BIGINT", "DOUBLE PRECISION", "Int64", "Float64"))

	t.Run("adult-reduced", func(t *testing.T) {
		want, _ := expected(t, adultCSV, adultDom, universe.Policy{})
		for _, o := range []Options{{Table: "adult"}, {Table: "adult_text"}, {Table: "adult", LocalCells: -1}} {
			src, err := Open(ctx, e.dsn, adultDom, &o)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			compareSource(t, ctx, src, want)
		}
		// A query as the source.
		src, err := Open(ctx, e.dsn, adultDom, &Options{Query: "SELECT * FROM adult;"})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		got, err := src.Marginals(ctx, [][]int{{4}})
		if err != nil {
			t.Fatal(err)
		}
		if w := marginalsOf(want, [][]int{{4}}); !slices.Equal(got[0], w[0]) {
			t.Errorf("query source: Marginals({sex}) = %v, want %v", got[0], w[0])
		}
	})

	t.Run("units", func(t *testing.T) { unitTests(t, e, rawDom, rawHeader, rawRecs) })

	t.Run("raw", func(t *testing.T) {
		want, _ := expected(t, rawCSV, rawDom, universe.Policy{})
		for _, o := range []Options{{Table: "adult_raw"}, {Table: "adult_raw_typed_bigint", LocalCells: -1}} {
			src, err := Open(ctx, e.dsn, rawDom, &o)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			compareSource(t, ctx, src, want)
		}
	})

	// The SQL of Compile (every column as text) run by the engine, its
	// result saved as CSV and read back by ReadMarginalCounts.
	t.Run("compiled-file", func(t *testing.T) {
		want, _ := expected(t, rawCSV, rawDom, universe.Policy{})
		sets := allSets(rawDom.Len(), 2)
		q, err := Compile(rawDom, e.dialect, "adult_raw_typed_bigint", "", sets, universe.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		src, err := Open(ctx, e.dsn, rawDom, &Options{Table: "adult_raw"})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		rows, err := src.db.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var b bytes.Buffer
		b.WriteString(strings.Join(cols, ",") + "\n")
		vals := make([]sql.NullInt64, len(cols))
		dst := make([]any, len(cols))
		for j := range vals {
			dst[j] = &vals[j]
		}
		for rows.Next() {
			if err := rows.Scan(dst...); err != nil {
				t.Fatal(err)
			}
			for j, v := range vals {
				if j > 0 {
					b.WriteByte(',')
				}
				switch {
				case v.Valid:
					b.WriteString(strconv.FormatInt(v.Int64, 10))
				case e.dialect == ClickHouse:
					b.WriteString(`\N`)
				}
			}
			b.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "counts.csv")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadMarginalCounts(path, rawDom)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Marginals(ctx, sets)
		if err != nil {
			t.Fatal(err)
		}
		w := marginalsOf(want, sets)
		for j, s := range sets {
			if !slices.Equal(got[j], w[j]) {
				t.Errorf("file: Marginals(%v) = %v, want %v", s, got[j], w[j])
			}
		}
	})

	t.Run("bad-data", func(t *testing.T) {
		// Unknown races (3 rows) and ages above the last edge (2 rows).
		bad := slices.Clone(rawRecs)
		col := func(name string) int { return slices.Index(rawHeader, name) }
		for _, r := range []int{5, 70, 900} {
			bad[r] = slices.Clone(bad[r])
			bad[r][col("race")] = "Martian"
		}
		for _, r := range []int{11, 12} {
			bad[r] = slices.Clone(bad[r])
			bad[r][col("age")] = " 95.5"
		}
		e.load(t, csvTable("adult_bad", rawHeader, bad,
			func(string) string { return "TEXT" }, func(string) string { return "String" },
			func(_, v string) any { return v }))
		badCSV := filepath.Join(t.TempDir(), "bad.csv")
		writeCSV(t, badCSV, rawHeader, bad)

		src, err := Open(ctx, e.dsn, rawDom, &Options{Table: "adult_bad"})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		rep, err := src.Check(ctx)
		var de *DataError
		if !errors.As(err, &de) {
			t.Fatalf("Check = %v, want a *DataError", err)
		}
		if de.Column != "race" || de.Count != 3 || de.Example != "Martian" {
			t.Errorf("Check: DataError %+v, want column race, 3 values, example Martian", de)
		}
		ageIdx, _ := rawDom.Index("age")
		if c := rep.Columns[ageIdx]; c.Bad != 2 || c.Example != " 95.5" {
			t.Errorf("Check: age %+v, want 2 bad values, example \" 95.5\"", c)
		}
		if _, err := src.Marginals(ctx, [][]int{{0}}); !errors.As(err, &de) {
			t.Errorf("Marginals on bad data = %v, want a *DataError", err)
		}

		// Texts that are not numbers, a non-integral income, SQL NULLs
		// where no null token is declared: errors even with repairs.
		worse := slices.Clone(bad)
		for r, v := range map[int][2]string{1: {"age", "abc"}, 2: {"income", "12.5"}, 3: {"sex", ""}} {
			worse[r] = slices.Clone(worse[r])
			worse[r][col(v[0])] = v[1]
		}
		e.load(t, csvTable("adult_worse", rawHeader, worse,
			func(string) string { return "TEXT" }, func(c string) string { return map[bool]string{true: "Nullable(String)", false: "String"}[c == "sex"] },
			func(c, v string) any {
				if c == "sex" && v == "" {
					return nil
				}
				return v
			}))
		src3, err := Open(ctx, e.dsn, rawDom, &Options{Table: "adult_worse", Policy: universe.Policy{Clamp: true, UnknownToOther: true}})
		if err != nil {
			t.Fatal(err)
		}
		defer src3.Close()
		rep, err = src3.Check(ctx)
		if err == nil {
			t.Fatal("Check on non-numbers passed")
		}
		for name, want := range map[string]string{"age": "abc", "income": "12.5", "sex": NullMarker} {
			i, _ := rawDom.Index(name)
			if c := rep.Columns[i]; c.Bad != 1 || c.Example != want {
				t.Errorf("Check: %s %+v, want 1 bad value, example %q", name, c, want)
			}
		}

		// Repaired in SQL exactly as ingest repairs.
		p := universe.Policy{Clamp: true, UnknownToOther: true}
		want, st := expected(t, badCSV, rawDom, p)
		src2, err := Open(ctx, e.dsn, rawDom, &Options{Table: "adult_bad", Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		defer src2.Close()
		rep, err = src2.Check(ctx)
		if err != nil {
			t.Fatalf("Check with repairs: %v", err)
		}
		if rep.Repaired() != st.Repaired() || rep.Repaired() != 5 || rep.Rows != st.N {
			t.Errorf("Check with repairs: %d repaired of %d rows, want %d of %d (ingest)", rep.Repaired(), rep.Rows, st.Repaired(), st.N)
		}
		compareSource(t, ctx, src2, want)
		src2.local = -1
		compareSource(t, ctx, src2, want)
	})

	t.Run("hostile-names", func(t *testing.T) {
		names := []string{`we"ird`, "back\\slash;", "uni`code' ünï", "x--; DROP TABLE adult; --"}
		values := []string{`it's`, `a\b`, `semi;colon --`, `"dq"`, "tab\tnew\nline", "ünï ✓", `\'`, "%_"}
		var attrs []*universe.Attribute
		for _, n := range names {
			a, err := universe.NewCategorical(n, values)
			if err != nil {
				t.Fatal(err)
			}
			attrs = append(attrs, a)
		}
		dom, err := universe.NewDomain(attrs...)
		if err != nil {
			t.Fatal(err)
		}
		tb := &table{name: `hostile "t";`, cols: names}
		for range names {
			tb.pgTypes = append(tb.pgTypes, "TEXT")
			tb.chTypes = append(tb.chTypes, "String")
		}
		want := universe.NewCounts(dom)
		codes := make([]int, len(names))
		for r := range 97 {
			row := make([]any, len(names))
			for j := range names {
				codes[j] = (r*(j+3) + j) % len(values)
				row[j] = values[codes[j]]
			}
			tb.rows = append(tb.rows, row)
			want.Add(codes, 1)
		}
		e.load(t, tb)
		src, err := Open(ctx, e.dsn, dom, &Options{Table: tb.name, LocalCells: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		sets := allSets(len(names), 2)
		got, err := src.Marginals(ctx, sets)
		if err != nil {
			t.Fatal(err)
		}
		w := marginalsOf(want, sets)
		for j, s := range sets {
			if !slices.Equal(got[j], w[j]) {
				t.Errorf("Marginals(%v) = %v, want %v", s, got[j], w[j])
			}
		}
	})

	t.Run("missing-column", func(t *testing.T) {
		a, _ := universe.NewEncoded("nope", 2)
		dom, _ := universe.NewDomain(a)
		_, err := Open(ctx, e.dsn, dom, &Options{Table: "adult"})
		var de *DataError
		if !errors.As(err, &de) || de.Column != "nope" || !strings.Contains(err.Error(), "missing column") {
			t.Errorf("Open with a missing column = %v, want a *DataError naming it", err)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		src, err := Open(ctx, e.dsn, adultDom, &Options{Query: e.slowQuery})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = src.Marginals(cctx, [][]int{{0, 1, 2}})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Marginals after the deadline = %v, want context.DeadlineExceeded", err)
		}
		t.Logf("cancelled after %v: %v", time.Since(start), err)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("cancelled query returned after %v", d)
		}
	})

	if e.dialect == Postgres {
		t.Run("credentials", func(t *testing.T) {
			bare := strings.Replace(e.dsn, ":"+pgPassword+"@", "@", 1)
			t.Setenv("PGPASSWORD", pgPassword)
			src, err := Open(ctx, bare, adultDom, &Options{Table: "adult"})
			if err != nil {
				t.Fatalf("Open with PGPASSWORD: %v", err)
			}
			src.Close()
			t.Setenv("PGPASSWORD", "wrong-Passw0rd-x")
			_, err = Open(ctx, bare, adultDom, &Options{Table: "adult"})
			var se *SourceError
			if !errors.As(err, &se) || strings.Contains(err.Error(), "wrong-Passw0rd-x") {
				t.Errorf("Open with a wrong PGPASSWORD = %v, want a *SourceError without the password", err)
			}
			wrong := strings.Replace(e.dsn, pgPassword, "wrong-Passw0rd-y", 1)
			_, err = Open(ctx, wrong, adultDom, &Options{Table: "adult"})
			if !errors.As(err, &se) || strings.Contains(err.Error(), "wrong-Passw0rd-y") {
				t.Errorf("Open with a wrong password in the DSN = %v, want a *SourceError without the password", err)
			}
			t.Logf("error: %v", err)
		})
	}

	t.Run("dates-timestamps-booleans", func(t *testing.T) { timeKindTests(t, e) })

	t.Run("unreachable", func(t *testing.T) {
		port := freePort(t)
		dsn := fmt.Sprintf("postgres://user:s3cretPassw0rd@127.0.0.1:%d/postgres?sslmode=disable", port)
		if e.dialect == ClickHouse {
			dsn = fmt.Sprintf("clickhouse://user:s3cretPassw0rd@127.0.0.1:%d/default", port)
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := Open(cctx, dsn, adultDom, &Options{Table: "adult"})
		var se *SourceError
		if !errors.As(err, &se) {
			t.Fatalf("Open on a closed port = %v, want a *SourceError", err)
		}
		if strings.Contains(err.Error(), "s3cretPassw0rd") {
			t.Errorf("error shows the password: %v", err)
		}
		t.Logf("error: %v", err)
	})
}
