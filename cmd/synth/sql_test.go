package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsynth/synth/sqlsrc"
)

func TestSQLCommand(t *testing.T) {
	raw, err := filepath.Abs(filepath.Join("..", "..", "ingest", "testdata", "raw", "adult-raw-domain.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, dom := extract(t, "adult-reduced")
	wl := filepath.Join(t.TempDir(), "wl.json")
	if err := os.WriteFile(wl, []byte(`{"families": [{"type": "marginals", "sets": [["sex", "race"], ["age"]]}, {"type": "prefixes", "attribute": "age"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string // in stdout or stderr
	}{
		{"duckdb 3-way", []string{"sql", "--domain", dom, "--marginals", "3", "--dialect", "duckdb", "--table", "adult"}, ExitOK,
			[]string{"GROUP BY GROUPING SETS ((c0, c1, c2), ", `COUNT(*) AS "count"`, `FROM "adult") AS codes`}},
		{"clickhouse union", []string{"sql", "--domain", dom, "--marginals", "1", "--dialect", "clickhouse", "--query", "SELECT * FROM t;"}, ExitOK,
			[]string{"UNION ALL", "FROM (SELECT * FROM t) AS `synth_source`"}},
		{"workload with a range", []string{"sql", "--domain", dom, "--workload", wl, "--dialect", "trino", "--table", "hive.db.adult"}, ExitOK,
			[]string{"GROUPING SETS ((c3, c4), (c6))", `FROM "hive"."db"."adult"`, "needs the full histogram (--histogram)"}},
		{"check", []string{"sql", "--domain", raw, "--dialect", "bigquery", "--table", "people", "--check", "--clamp"}, ExitOK,
			[]string{"AS bad0", "AS repaired6", "'<SQL NULL>'"}},
		{"histogram", []string{"sql", "--domain", raw, "--dialect", "spark", "--table", "people", "--histogram"}, ExitOK,
			[]string{"GROUP BY c0, c1, c2, c3, c4, c5, c6;\n"}},
		{"no dialect", []string{"sql", "--domain", dom, "--marginals", "2", "--table", "t"}, ExitUsage, []string{"--dialect is required"}},
		{"bad dialect", []string{"sql", "--domain", dom, "--marginals", "2", "--table", "t", "--dialect", "mysql"}, ExitUsage, []string{`unknown SQL dialect "mysql"`}},
		{"no source", []string{"sql", "--domain", dom, "--marginals", "2", "--dialect", "duckdb"}, ExitUsage, []string{"one of --table and --query"}},
		{"two modes", []string{"sql", "--domain", dom, "--marginals", "2", "--dialect", "duckdb", "--table", "t", "--check"}, ExitUsage, []string{"give one of --workload"}},
		{"missing domain", []string{"sql", "--domain", "nope.json", "--marginals", "2", "--dialect", "duckdb", "--table", "t"}, ExitNoInput, []string{"no such file"}},
		{"help", []string{"sql", "--help"}, ExitOK, []string{"Examples:\n  synth sql", "69  a data source"}},
		{"privacy unit, postgres", []string{"sql", "--domain", raw, "--marginals", "2", "--dialect", "postgres", "--table", "events",
			"--privacy-unit", "user_id", "--max-rows-per-unit", "8"}, ExitOK,
			[]string{"-- Keeps at most 8 rows of each privacy unit (user_id)", "does not depend on its secrecy", `PARTITION BY u ORDER BY p COLLATE "C"`,
				"WHERE rk <= 8", `CAST(SUM(w) AS BIGINT) AS "count"`, `CAST("user_id" AS TEXT)`}},
		{"privacy unit, clickhouse", []string{"sql", "--domain", raw, "--marginals", "2", "--dialect", "clickhouse", "--table", "events",
			"--privacy-unit", "user_id", "--max-rows-per-unit", "8"}, ExitOK,
			[]string{"ORDER BY u, p LIMIT 8 BY u", "ARRAY JOIN [0, 1, ", "arrayJoin(range(toUInt64(cnt))) + 1 AS j"}},
		{"privacy unit, check", []string{"sql", "--domain", raw, "--dialect", "trino", "--table", "events", "--check",
			"--privacy-unit", "user_id", "--max-rows-per-unit", "1"}, ExitOK, []string{"AS null_units", `"user_id" AS unit`}},
		{"privacy unit without K", []string{"sql", "--domain", raw, "--marginals", "2", "--dialect", "duckdb", "--table", "t", "--privacy-unit", "u"}, ExitUsage,
			[]string{"--privacy-unit COLUMN and --max-rows-per-unit K"}},
		{"privacy unit is an attribute", []string{"sql", "--domain", raw, "--marginals", "2", "--dialect", "duckdb", "--table", "t", "--privacy-unit", "sex",
			"--max-rows-per-unit", "2"}, ExitUsage, []string{"attribute of the domain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(t, tt.args...)
			if code != tt.code {
				t.Errorf("synth %s: exit %d, want %d (stderr %q)", strings.Join(tt.args, " "), code, tt.code, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out+errs, w) {
					t.Errorf("synth %s: output does not contain %q:\n%s%s", strings.Join(tt.args, " "), w, out, errs)
				}
			}
		})
	}
}

func TestSQLExitCodes(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{&sqlsrc.DataError{Column: "age", Count: 3, Example: "abc"}, ExitData},
		{fmt.Errorf("release: %w", &sqlsrc.SourceError{Op: "connect", Err: errors.New("refused")}), ExitSource},
		{&sqlsrc.SourceError{Op: "query", Err: context.Canceled}, ExitCanceled},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
