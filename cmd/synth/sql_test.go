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
