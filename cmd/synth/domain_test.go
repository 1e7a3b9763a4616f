package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dpsynth/synth/internal/pgtest"
	"github.com/dpsynth/synth/universe"
)

// TestDomainDraftEndToEnd drafts a domain with differential privacy for
// the table with dates, timestamps and booleans (CSV and typed Parquet)
// and for the raw adult example, and releases each table with its draft.
func TestDomainDraftEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	dir := t.TempDir()
	csvPath, parquetPath, _ := timeKindsTable(t, dir)
	// The raw adult table of ingest's tests (string categories, a null
	// token, integers and reals).
	people := filepath.Join(pkgDir, "..", "..", "ingest", "testdata", "raw", "adult-raw.csv")
	for _, c := range []struct {
		name, data string
		kinds      map[string]string
	}{
		{"csv", csvPath, map[string]string{"visit": "date", "seen": "timestamp", "member": "boolean", "plan": "categorical", "amount": "numeric"}},
		{"parquet", parquetPath, map[string]string{"visit": "date", "seen": "timestamp", "member": "boolean", "plan": "categorical", "amount": "numeric"}},
		{"raw-adult", people, map[string]string{"age": "numeric", "sex": "categorical", "race": "categorical", "marital-status": "categorical", "education": "categorical", "occupation": "categorical", "income": "integer"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name+"-domain.json")
			r := runBinary(t, "", "domain", "draft", "--data", c.data, "--epsilon", "1", "--out", out)
			if r.code != ExitOK || !strings.Contains(r.stdout, "spent (ε, δ) = (1, 1e-09)") {
				t.Fatalf("domain draft: %s", r)
			}
			dom, err := universe.LoadDomain(out)
			if err != nil {
				t.Fatalf("the draft does not load: %v", err)
			}
			for name, kind := range c.kinds {
				i, ok := dom.Index(name)
				if !ok || dom.Attr(i).Kind.String() != kind {
					t.Errorf("draft: attribute %q is %v, want %s", name, dom.Attr(i).Kind, kind)
				}
			}
			rel := filepath.Join(dir, c.name+"-release")
			r = runBinary(t, "", "release", "--data", c.data, "--domain", out, "--marginals", "2", "--epsilon", "1",
				"--clamp", "--unknown-to-other", "--out", rel)
			if r.code != ExitOK {
				t.Fatalf("release with the draft: %s", r)
			}
			if _, err := os.Stat(filepath.Join(rel, "synthetic.parquet")); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestDomainDraftSchemaOnlyAndLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	dir := t.TempDir()
	csvPath, _, _ := timeKindsTable(t, dir)
	out := filepath.Join(dir, "schema.json")
	r := runBinary(t, "", "domain", "draft", "--data", csvPath, "--out", out)
	if r.code != ExitOK || !strings.Contains(r.stdout, "no row read") {
		t.Fatalf("schema-only draft: %s", r)
	}
	if _, err := universe.LoadDomain(out); err != nil {
		t.Errorf("the schema-only draft does not load: %v", err)
	}
	r = runBinary(t, "", "domain", "draft", "--data", csvPath, "--out", out)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--force") {
		t.Errorf("draft over an existing file: %s; want a usage error naming --force", r)
	}

	// The draft's budget goes to the table's lifetime ledger before a
	// record is read; one that does not fit is refused (exit 77) and
	// writes nothing.
	led := filepath.Join(dir, "t.ledger.json")
	if r := runBinary(t, "", "ledger", "init", "--ledger", led, "--epsilon", "1.5"); r.code != ExitOK {
		t.Fatal(r)
	}
	out = filepath.Join(dir, "dp.json")
	if r := runBinary(t, "", "domain", "draft", "--data", csvPath, "--epsilon", "1", "--ledger", led, "--out", out); r.code != ExitOK {
		t.Fatalf("draft with a ledger: %s", r)
	}
	out2 := filepath.Join(dir, "dp2.json")
	r = runBinary(t, "", "domain", "draft", "--data", csvPath, "--epsilon", "1", "--ledger", led, "--out", out2)
	if r.code != ExitBudget {
		t.Errorf("a second draft over the lifetime budget: %s; want exit %d", r, ExitBudget)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Error("a refused draft wrote its file")
	}
	r = runBinary(t, "", "ledger", "show", "--ledger", led)
	if !strings.Contains(r.stdout, "domain draft") || !strings.Contains(r.stdout, "complete") {
		t.Errorf("ledger show: %s; want the draft's complete entry", r)
	}

	// A table over the memory cap is refused before a row is read when
	// its size is known (exit 78), and its reservation is cancelled.
	led2 := filepath.Join(dir, "t2.ledger.json")
	if r := runBinary(t, "", "ledger", "init", "--ledger", led2, "--epsilon", "1.5"); r.code != ExitOK {
		t.Fatal(r)
	}
	_, parquetPath, _ := timeKindsTable(t, t.TempDir())
	r = runBinary(t, "", "domain", "draft", "--data", parquetPath, "--epsilon", "1", "--ledger", led2, "--memory-cap", "10KiB", "--out", out2)
	if r.code != ExitMemory || !strings.Contains(r.stderr, "before reading") {
		t.Errorf("draft over the memory cap: %s; want exit %d before reading", r, ExitMemory)
	}
	r = runBinary(t, "", "ledger", "show", "--ledger", led2)
	if !strings.Contains(r.stdout, "spent: ε = 0 ") {
		t.Errorf("ledger after a refused draft: %s; want nothing spent", r)
	}

	// A malformed file is bad data (exit 65), not a crash.
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("a,b\n1,2\n3\n"), 0o644)
	r = runBinary(t, "", "domain", "draft", "--data", bad, "--epsilon", "1", "--out", filepath.Join(dir, "bad.json"))
	if r.code != ExitData {
		t.Errorf("draft of a malformed CSV: %s; want exit %d", r, ExitData)
	}
}

// TestDomainDraftFromPostgres drafts from a table in a real PostgreSQL:
// typed DATE, TIMESTAMPTZ and BOOLEAN columns and a nullable text column.
func TestDomainDraftFromPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL; skipped with -short")
	}
	dsn := pgtest.Start(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`CREATE TABLE visits (visit DATE, seen TIMESTAMPTZ, member BOOLEAN, plan TEXT, amount NUMERIC(7, 2))`,
		`INSERT INTO visits SELECT DATE '2023-01-01' + (g % 700), TIMESTAMPTZ '2024-03-01 00:00:00+00' + (g % 600) * INTERVAL '1 hour',
		   g % 3 = 0, (ARRAY['basic', 'plus', 'pro', NULL])[1 + g % 4], (g % 50000) / 100.0 FROM generate_series(1, 4000) AS g`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "visits-domain.json")
	r := inProcess(t, "domain", "draft", "--source", dsn, "--table", "visits", "--epsilon", "1", "--out", out)
	if r.code != ExitOK {
		t.Fatalf("domain draft --source: %s", r)
	}
	dom, err := universe.LoadDomain(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"visit": "date", "seen": "timestamp", "member": "boolean", "plan": "categorical", "amount": "numeric"}
	for name, kind := range want {
		i, ok := dom.Index(name)
		if !ok || dom.Attr(i).Kind.String() != kind {
			t.Errorf("draft from PostgreSQL: %q is not %s:\n%s", name, kind, mustRead(t, out))
		}
	}
	if i, _ := dom.Index("plan"); !dom.Attr(i).Nullable {
		t.Errorf("plan: no null token drafted for a column with 25%% NULLs")
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
