package sqlsrc

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// mixedDomain has one attribute of each kind, with null tokens, an other
// value and a name that needs quoting.
const mixedDomain = `{"attributes": [
  {"name": "race", "type": "categorical", "values": ["a", "b's", "other"], "other": "other", "null": "NA"},
  {"name": "income K", "type": "integer", "min": -10, "max": 99, "width": 50},
  {"name": "age", "type": "numeric", "edges": [17, 20.5, 91], "null": ""},
  {"name": "code", "type": "encoded", "size": 4}
]}`

func mustDomain(t testing.TB, s string) *universe.Domain {
	t.Helper()
	d, err := universe.ParseDomain([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test -update and review the diff):\n%s", name, got)
	}
}

func TestCompileGolden(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	p := universe.Policy{Clamp: true, UnknownToOther: true}
	for _, d := range []Dialect{Postgres, ClickHouse, DuckDB, Spark, BigQuery, Trino} {
		m, err := Compile(dom, d, "db.people", "", [][]int{{0, 1}, {2}, {}, {1, 0}}, p)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, d.String()+"-marginals.sql", m+"\n")
		h, err := Compile(dom, d, "", "SELECT * FROM people WHERE year = 2024;", nil, universe.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		golden(t, d.String()+"-histogram.sql", h+"\n")
		c, err := CompileCheck(dom, d, "people", "", p)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, d.String()+"-check.sql", c+"\n")
	}
}

func TestCompileErrors(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	cnt, _ := universe.NewEncoded("count", 2)
	countDom, _ := universe.NewDomain(cnt)
	nul, _ := universe.NewCategorical("x", []string{"a\x00b"})
	nulDom, _ := universe.NewDomain(nul)
	big, _ := universe.NewInteger("big", 0, 1<<60, 1<<40)
	bigDom, _ := universe.NewDomain(big)
	cases := []struct {
		name         string
		dom          *universe.Domain
		d            Dialect
		table, query string
		sets         [][]int
		want         string
	}{
		{"no source", dom, Postgres, "", "", nil, "give a table or a query"},
		{"both", dom, Postgres, "t", "SELECT 1", nil, "not both"},
		{"no dialect", dom, Detect, "t", "", nil, "no SQL dialect"},
		{"empty part", dom, Postgres, "a..b", "", nil, "empty part"},
		{"bad attr", dom, Postgres, "t", "", [][]int{{7}}, "out of range"},
		{"repeated", dom, Postgres, "t", "", [][]int{{1, 1}}, "repeated"},
		{"count", countDom, Postgres, "t", "", nil, "count column"},
		{"nul", nulDom, ClickHouse, "t", "", nil, "NUL"},
		{"big integer", bigDom, Trino, "t", "", nil, "2^52"},
	}
	for _, c := range cases {
		_, err := Compile(c.dom, c.d, c.table, c.query, c.sets, universe.Policy{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Compile = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestQuoting(t *testing.T) {
	cases := []struct {
		d           Dialect
		in          string
		ident, text string
	}{
		{Postgres, `a"b'c\d`, `"a""b'c\d"`, `E'a"b''c\\d'`},
		{Postgres, `it's`, `"it's"`, `'it''s'`},
		{ClickHouse, "a`b'c\\d\n", "`a\\`b'c\\\\d\\n`", `'a` + "`" + `b\'c\\d\n'`},
		{DuckDB, `a"b'c\d`, `"a""b'c\d"`, `'a"b''c\d'`},
		{Spark, "a`b'c\\d", "`a``b'c\\d`", `'a` + "`" + `b\'c\\d'`},
		{BigQuery, "a`b'c\\d", "`a\\`b'c\\\\d`", `'a` + "`" + `b\'c\\d'`},
		{Trino, `a"b'c\d`, `"a""b'c\d"`, `'a"b''c\d'`},
	}
	for _, c := range cases {
		if got := c.d.ident(c.in); got != c.ident {
			t.Errorf("%s.ident(%q) = %s, want %s", c.d, c.in, got, c.ident)
		}
		if got := c.d.str(c.in); got != c.text {
			t.Errorf("%s.str(%q) = %s, want %s", c.d, c.in, got, c.text)
		}
	}
}

func TestRedactDSN(t *testing.T) {
	cases := []struct{ in, want string }{
		{"postgres://bob:hunter22@db:5432/x?sslmode=disable", "postgres://bob:xxxxx@db:5432/x?sslmode=disable"},
		{"clickhouse://db:9000/default?username=u&password=hunter22", "clickhouse://db:9000/default?password=xxxxx&username=u"},
		{"host=db user=bob password=hunter22 dbname=x", "host=db user=bob password=xxxxx dbname=x"},
		{"host=db password='hun ter22' dbname=x", "host=db password=xxxxx dbname=x"},
		{"postgres://db/x", "postgres://db/x"},
	}
	for _, c := range cases {
		if got := RedactDSN(c.in); got != c.want || strings.Contains(got, "hunter22") {
			t.Errorf("RedactDSN(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDetectDialect(t *testing.T) {
	for dsn, want := range map[string]Dialect{"postgres://x/y": Postgres, "postgresql://x": Postgres, "clickhouse://h:9000": ClickHouse} {
		if got, err := DetectDialect(dsn); got != want || err != nil {
			t.Errorf("DetectDialect(%q) = %v, %v, want %v", dsn, got, err, want)
		}
	}
	if _, err := DetectDialect("mysql://u:hunter22@h/x"); err == nil || strings.Contains(err.Error(), "hunter22") {
		t.Errorf("DetectDialect(mysql) = %v, want an error without the password", err)
	}
	if _, err := Open(context.Background(), "duckdb://x", mustDomain(t, mixedDomain), &Options{Table: "t", Dialect: DuckDB}); err == nil || !strings.Contains(err.Error(), "synth sql") {
		t.Errorf("Open(duckdb) = %v, want an error pointing to synth sql", err)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadMarginalCounts(t *testing.T) {
	dom := mustDomain(t, `{"a": 2, "b": 3, "c": 2}`)
	// Sets {a, b}, {c} and {} in one file; the {a, b} cell (1, 2) twice.
	path := writeFile(t, "m.csv", "a,b,c,count\n0,0,,3\n1,2,,4\n1,2,,1\n0,1,,2\n,,0,7\n,,1,3\n,,,10\n")
	m, err := ReadMarginalCounts(path, dom)
	if err != nil {
		t.Fatal(err)
	}
	if m.N() != 10 {
		t.Errorf("N() = %d, want 10", m.N())
	}
	sets := [][]int{{0, 1}, {1, 0}, {2}, {}, {0}, {1}}
	got, err := m.Marginals(context.Background(), sets)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{3, 2, 0, 0, 0, 5}, {3, 0, 2, 0, 0, 5}, {7, 3}, {10}, {5, 5}, {3, 2, 5}}
	for j := range sets {
		if !slices.Equal(got[j], want[j]) {
			t.Errorf("Marginals(%v) = %v, want %v", sets[j], got[j], want[j])
		}
	}
	if _, err := m.Marginals(context.Background(), [][]int{{0, 2}}); !errors.Is(err, ErrMissingSet) || !strings.Contains(err.Error(), `{"a", "c"}`) {
		t.Errorf("Marginals({a, c}) = %v, want ErrMissingSet naming the set", err)
	}
}

func TestReadMarginalCountsErrors(t *testing.T) {
	dom := mustDomain(t, `{"a": 2, "b": 3}`)
	cases := []struct {
		name, content string
		want          error
		row           int64
		col           string
	}{
		{"empty", "", ingest.ErrEmpty, 0, ""},
		{"no rows", "a,count\n", ingest.ErrNoRows, 0, ""},
		{"no count", "a,b\n0,1\n", ingest.ErrMissingColumn, 0, "count"},
		{"extra", "a,z,count\n0,1,2\n", ingest.ErrExtraColumn, 0, "z"},
		{"dup", "a,a,count\n0,1,2\n", ingest.ErrDuplicateCol, 0, "a"},
		{"bad code", "a,b,count\n0,1,2\n1,3,4\n", ErrBadCode, 2, "b"},
		{"negative code", "a,count\n-1,2\n", ErrBadCode, 1, "a"},
		{"sentinel", "a,count\n0,2\n-1,5\n", ErrBadCode, 2, "a"},
		{"bad count", "a,count\n0,x\n", ingest.ErrBadCount, 1, "count"},
		{"negative count", "a,count\n0,-2\n", ingest.ErrBadCount, 1, "count"},
		{"fields", "a,count\n0,1,2\n", ingest.ErrFieldCount, 1, ""},
		{"inconsistent", "a,b,count\n0,,3\n,1,4\n", ErrInconsistent, 0, ""},
	}
	for _, c := range cases {
		_, err := ReadMarginalCounts(writeFile(t, "m.csv", c.content), dom)
		var de *ingest.DataError
		if !errors.Is(err, c.want) || !errors.As(err, &de) || de.Row != c.row || de.Column != c.col {
			t.Errorf("%s: ReadMarginalCounts = %v, want %v at row %d, column %q", c.name, err, c.want, c.row, c.col)
		}
		// The counting SQL's code for a value outside the domain points to
		// the check query.
		if c.name == "sentinel" && !strings.Contains(fmt.Sprint(err), "synth sql --check") {
			t.Errorf("%s: ReadMarginalCounts = %v, want a pointer to synth sql --check", c.name, err)
		}
	}
}

func FuzzReadMarginalCounts(f *testing.F) {
	dom, _ := universe.ParseDomain([]byte(`{"a": 2, "b": 3}`))
	f.Add("a,b,count\n0,0,3\n1,2,4\n,,7\n")
	f.Add("b,count\n\\N,3\nNULL,4\n")
	f.Add("a,count\n1.0,2e0\n")
	f.Add("count\n5\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		path := filepath.Join(dir, "m.csv")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadMarginalCounts(path, dom)
		if err != nil {
			var de *ingest.DataError
			var re *ingest.ReadError
			if !errors.As(err, &de) && !errors.As(err, &re) {
				t.Fatalf("ReadMarginalCounts = %T %v, want a DataError or ReadError", err, err)
			}
			return
		}
		for _, s := range m.Sets() {
			got, err := m.Marginals(context.Background(), [][]int{s, {}})
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, c := range got[0] {
				sum += c
			}
			if sum != m.N() || got[1][0] != m.N() {
				t.Fatalf("set %v sums to %d, n = %d", s, sum, m.N())
			}
		}
	})
}

// TestCompileUnitGolden: the counting and check SQL with a privacy unit's
// bound, every dialect (the engines run here are tested against the file
// reader in unitTests; DuckDB, Spark, BigQuery and Trino are pinned here).
func TestCompileUnitGolden(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	unit := &Unit{Column: "user id", MaxRows: 16, Salt: "000102030405060708090a0b0c0d0e0f"}
	for _, d := range []Dialect{Postgres, ClickHouse, DuckDB, Spark, BigQuery, Trino} {
		m, err := CompileWith(dom, d, &CompileOptions{Table: "db.events", Sets: [][]int{{0, 1}, {2}, {}}, Unit: unit})
		if err != nil {
			t.Fatal(err)
		}
		golden(t, d.String()+"-unit-marginals.sql", m+"\n")
		c, err := CompileCheckWith(dom, d, &CompileOptions{Table: "events", Unit: unit})
		if err != nil {
			t.Fatal(err)
		}
		golden(t, d.String()+"-unit-check.sql", c+"\n")
	}
	for _, bad := range []*Unit{{Column: "race", MaxRows: 1, Salt: unit.Salt}, {Column: "u", MaxRows: 0, Salt: unit.Salt}, {Column: "u", MaxRows: 1, Salt: "xyz"}} {
		if _, err := CompileWith(dom, Postgres, &CompileOptions{Table: "t", Unit: bad}); err == nil {
			t.Errorf("CompileWith(unit %+v) = nil error, want one", *bad)
		}
	}
}
