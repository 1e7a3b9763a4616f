//go:build sqlbench

package sqlsrc

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

// The benchmark behind the sqlbench tag: adult-reduced repeated to
// -sqlbench.rows rows inside each engine (PostgreSQL: one table;
// ClickHouse: two shards behind a Distributed table), the time to get every
// 3-way marginal through a Source, against ingest.ReadFile of the same rows
// as a CSV file plus counting the marginals from its histogram.
//
//	go test -tags sqlbench ./sqlsrc -run TestSQLBench -v -timeout 40m
//
// Measured on the 2-core development machine (other work running, load
// 1–4), 10^7 rows, all 35 3-way marginals, every result equal to ingest's:
//
//	file: ingest.ReadFile of the 150 MB CSV + counting       2.7 s
//	PostgreSQL 15, one GROUP BY summed here (default)       2.2 s (Check 1.1 s + Marginals 1.1 s)
//	PostgreSQL 15, GROUPING SETS (LocalCells -1)           40.0 s
//	ClickHouse 18.16, 2 shards, one GROUP BY (default)      1.6 s (Check 1.1 s + Marginals 0.5 s)
//	ClickHouse 18.16, 2 shards, UNION ALL (LocalCells -1)   8.4 s
//	Histogram (one GROUP BY, 336,000 cells): PostgreSQL 1.1 s, ClickHouse 0.5 s
var benchRows = flag.Int("sqlbench.rows", 10_000_000, "rows of the benchmark tables")

func TestSQLBench(t *testing.T) {
	ctx := context.Background()
	n := *benchRows
	dir := t.TempDir()
	ds, _ := datasets.Lookup("adult-reduced")
	csvPath, domPath, err := ds.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	dom, err := universe.LoadDomain(domPath)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(csvPath)
	header, recs := readCSV(t, data)
	base := len(recs)
	var sets [][]int
	for _, s := range allSets(dom.Len(), 3) {
		if len(s) == 3 {
			sets = append(sets, s)
		}
	}
	t.Logf("%d rows (adult-reduced's %d repeated), %d 3-way marginals, GOMAXPROCS %d", n, base, len(sets), runtime.GOMAXPROCS(0))

	// The reference: the same rows as a CSV file, read by ingest.
	big := filepath.Join(dir, "big.csv")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(strings.Join(header, ",") + "\n")
	for i := range n {
		w.WriteString(strings.Join(recs[i%base], ",") + "\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(big)
	start := time.Now()
	h, _, err := ingest.ReadFile(ctx, big, dom, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := time.Since(start)
	want := marginalsOf(h, sets)
	t.Logf("file: ingest.ReadFile of %.0f MB CSV %v, + counting the marginals %v", float64(st.Size())/1e6, read.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	os.Remove(big)

	cols := make([]string, len(header))
	for j, c := range header {
		cols[j] = Postgres.ident(c)
	}
	measure := func(name, dsn string, local int) {
		t.Helper()
		if local < 0 {
			name += ", GROUPING SETS / UNION ALL"
		} else {
			name += ", one GROUP BY summed here"
		}
		start := time.Now()
		src, err := Open(ctx, dsn, dom, &Options{Table: "adult_big", LocalCells: local})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		if _, err := src.Check(ctx); err != nil {
			t.Fatal(err)
		}
		check := time.Since(start)
		got, err := src.Marginals(ctx, sets)
		if err != nil {
			t.Fatal(err)
		}
		total := time.Since(start)
		for j := range sets {
			if !slices.Equal(got[j], want[j]) {
				t.Fatalf("%s: Marginals(%v) differs from ingest", name, sets[j])
			}
		}
		hstart := time.Now()
		if _, err := src.Histogram(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: Open+Check %v, Marginals %v, total %v (equal to ingest's); Histogram %v",
			name, check.Round(time.Millisecond), (total - check).Round(time.Millisecond), total.Round(time.Millisecond), time.Since(hstart).Round(time.Millisecond))
	}

	t.Run("postgres", func(t *testing.T) {
		dsn := startPostgres(t)
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		defs := make([]string, len(cols))
		for j, c := range cols {
			defs[j] = c + " SMALLINT"
		}
		exec := func(q string) {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		exec("CREATE TABLE adult_base (id INTEGER, " + strings.Join(defs, ", ") + ")")
		rows := make([][]any, base)
		for i, r := range recs {
			rows[i] = []any{i}
			for _, v := range r {
				var x int16
				fmt.Sscan(v, &x)
				rows[i] = append(rows[i], x)
			}
		}
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"adult_base"}, append([]string{"id"}, header...), pgx.CopyFromRows(rows)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		exec(fmt.Sprintf("CREATE TABLE adult_big AS SELECT %s FROM generate_series(0, %d) AS g JOIN adult_base AS b ON b.id = g %% %d", strings.Join(cols, ", "), n-1, base))
		exec("VACUUM ANALYZE adult_big")
		t.Logf("postgres: generated %d rows in %v", n, time.Since(start).Round(time.Millisecond))
		measure("postgres", dsn, 0)
		measure("postgres", dsn, -1)
	})

	t.Run("clickhouse", func(t *testing.T) {
		srv := startClickHouse(t)
		ch := make([]string, len(header))
		defs := make([]string, len(header))
		for j, c := range header {
			ch[j] = ClickHouse.ident(c)
			defs[j] = ch[j] + " UInt8"
		}
		var b strings.Builder
		for i, r := range recs {
			fmt.Fprintf(&b, "%d,%s\n", i, strings.Join(r, ","))
		}
		start := time.Now()
		for i, s := range srv {
			s.exec(t, "CREATE TABLE adult_base (id UInt64, "+strings.Join(defs, ", ")+") ENGINE = Memory", nil)
			s.exec(t, "INSERT INTO adult_base FORMAT CSV", []byte(b.String()))
			s.exec(t, "CREATE TABLE adult_big_local ("+strings.Join(defs, ", ")+") ENGINE = MergeTree() ORDER BY tuple()", nil)
			// Shard i holds rows i*n/2 .. (i+1)*n/2-1 of the repeated table.
			lo, hi := i*n/len(srv), (i+1)*n/len(srv)
			s.exec(t, fmt.Sprintf("INSERT INTO adult_big_local SELECT %s FROM (SELECT toUInt64((number + %d) %% %d) AS id FROM numbers(%d)) ANY INNER JOIN adult_base USING id",
				strings.Join(ch, ", "), lo, base, hi-lo), nil)
		}
		srv[0].exec(t, fmt.Sprintf("CREATE TABLE adult_big AS adult_big_local ENGINE = Distributed(%s, default, adult_big_local)", chCluster), nil)
		t.Logf("clickhouse: generated %d rows on 2 shards in %v", n, time.Since(start).Round(time.Millisecond))
		measure("clickhouse (2 shards)", srv[0].dsn(), 0)
		measure("clickhouse (2 shards)", srv[0].dsn(), -1)
	})
}
