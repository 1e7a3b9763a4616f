package sqlsrc

import (
	"os"
	"strconv"
	"testing"

	"github.com/dpsynth/synth/datasets"
)

// Hooks for the external tests (release_test.go): the real servers and
// the loading of adult-reduced into them.

// TestEngine is a started engine holding adult-reduced as table "adult".
type TestEngine struct {
	DSN string
	e   *engine
}

func startAdultEngine(t *testing.T, e *engine) *TestEngine {
	t.Helper()
	loadAdultReduced(t, e)
	return &TestEngine{DSN: e.dsn, e: e}
}

// LoadText loads a table of text columns (header, records) into the engine.
func (te *TestEngine) LoadText(t *testing.T, name string, header []string, recs [][]string) {
	t.Helper()
	te.e.load(t, csvTable(name, header, recs,
		func(string) string { return "TEXT" }, func(string) string { return "String" },
		func(_, v string) any { return v }))
}

// StartPostgresAdult starts PostgreSQL 15 on loopback with adult-reduced.
func StartPostgresAdult(t *testing.T) *TestEngine { return startAdultEngine(t, postgresEngine(t)) }

// StartClickHouseAdult starts the two-shard ClickHouse cluster with
// adult-reduced behind a Distributed table.
func StartClickHouseAdult(t *testing.T) *TestEngine { return startAdultEngine(t, clickhouseEngine(t)) }

// loadAdultReduced loads the shipped adult-reduced as table "adult" with
// integer columns.
func loadAdultReduced(t *testing.T, e *engine) {
	t.Helper()
	ds, err := datasets.Lookup("adult-reduced")
	if err != nil {
		t.Fatal(err)
	}
	csvPath, _, err := ds.Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	header, recs := readCSV(t, data)
	e.load(t, csvTable("adult", header, recs,
		func(string) string { return "SMALLINT" }, func(string) string { return "UInt8" },
		func(_, v string) any { n, _ := strconv.Atoi(v); return int16(n) }))
}
