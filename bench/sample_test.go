package bench

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/dpsynth/synth/datasets"
)

// TestLookupSampledProtocol: NAME@ROWS and NAME@ROWS:SEED name protocol
// NAME on a sample of its rows, without its references; bad specifications
// and generated tables are configuration errors.
func TestLookupSampledProtocol(t *testing.T) {
	for _, tt := range []struct {
		in, name string
		rows     int
		seed     uint64
	}{
		{"beps@500", "beps@500", 500, 1},
		{"beps@500:1", "beps@500", 500, 1},
		{"beps@0500:7", "beps@500:7", 500, 7},
		{"titanic-no-age@100", "titanic-no-age@100", 100, 1},
	} {
		p, err := LookupProtocol(tt.in)
		if err != nil {
			t.Fatalf("LookupProtocol(%q): %v", tt.in, err)
		}
		if p.Name != tt.name || p.Rows != tt.rows || p.RowsSeed != tt.seed || p.References != nil || p.Versus != "" {
			t.Errorf("LookupProtocol(%q) = %s, %d rows, seed %d, %d references, versus %q; want %s, %d, %d, none",
				tt.in, p.Name, p.Rows, p.RowsSeed, len(p.References), p.Versus, tt.name, tt.rows, tt.seed)
		}
		sh, err := p.Shape()
		if err != nil {
			t.Fatal(err)
		}
		if sh.N != tt.rows {
			t.Errorf("LookupProtocol(%q).Shape().N = %d, want %d", tt.in, sh.N, tt.rows)
		}
	}
	if _, err := LookupProtocol("adult-reduced@1000"); err != nil {
		t.Fatal(err)
	}
	if len(protocolNamed(t, "adult-reduced").References) == 0 {
		t.Error("adult-reduced lost its references to its sample's lookup")
	}
	for _, bad := range []string{"beps@", "beps@0", "beps@-3", "beps@x", "beps@1526", "beps@10:x", "nope@10", "wide16-3way@100", "events-k1@10", "beps@10@2"} {
		if _, err := LookupProtocol(bad); !isConfigError(err) {
			t.Errorf("LookupProtocol(%q) = %v, want a ConfigError", bad, err)
		}
	}
}

func protocolNamed(t *testing.T, name string) *Protocol {
	t.Helper()
	p, err := LookupProtocol(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPrepareSampledRows: a sampled protocol's data file holds the header
// and ROWS distinct records of the dataset, in the dataset's order; the
// same seed draws the same sample and another seed another.
func TestPrepareSampledRows(t *testing.T) {
	ds, err := datasets.Lookup("beps")
	if err != nil {
		t.Fatal(err)
	}
	b, err := datasets.ReadFile(ds.Data)
	if err != nil {
		t.Fatal(err)
	}
	full := parseCSV(t, b)
	in := map[string]bool{} // the dataset's records, by their CSV line
	for _, r := range full[1:] {
		in[key(r)] = true
	}
	read := func(spec string) [][]string {
		t.Helper()
		data, _, err := protocolNamed(t, spec).Prepare(t.TempDir())
		if err != nil {
			t.Fatalf("%s: Prepare: %v", spec, err)
		}
		return readCSV(t, data)
	}
	a := read("beps@300")
	if len(a) != 301 || !slices.Equal(a[0], full[0]) {
		t.Fatalf("beps@300: %d lines, header %v; want 301 and %v", len(a), a[0], full[0])
	}
	for _, r := range a[1:] {
		if !in[key(r)] {
			t.Fatalf("beps@300: record %v is not in the dataset", r)
		}
	}
	if b := read("beps@300"); !equalRecords(a, b) {
		t.Error("beps@300 drew two different samples")
	}
	if c := read("beps@300:2"); equalRecords(a, c) {
		t.Error("beps@300 and beps@300:2 drew the same sample")
	}
	if all := read("beps@1525"); !equalRecords(all, full) {
		t.Error("beps@1525 is not the whole dataset in its order")
	}
	// A dataset shipped gzip-compressed keeps its compression.
	data, _, err := protocolNamed(t, "mplsstops@300").Prepare(t.TempDir())
	if err != nil {
		t.Fatalf("mplsstops@300: Prepare: %v", err)
	}
	if m := readCSV(t, data); len(m) != 301 || m[0][0] == "" {
		t.Errorf("mplsstops@300: %d lines, header %v; want 301", len(m), m[0])
	}
}

// key is a record as its CSV line.
func key(r []string) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(r)
	w.Flush()
	return b.String()
}

func equalRecords(a, b [][]string) bool {
	return slices.EqualFunc(a, b, slices.Equal[[]string])
}

// readCSV returns the records of the CSV file at path (gzip-compressed when
// its name ends in .gz), its header first.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := readMaybeGzip(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseCSV(t, b)
}

func parseCSV(t *testing.T, b []byte) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestSampleRows: sampleRows keeps the header and n distinct records in
// file order, and refuses a sample larger than the file.
func TestSampleRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	var b bytes.Buffer
	b.WriteString("id,v\n")
	for i := range 100 {
		fmt.Fprintf(&b, "%d,\"a, %d\"\n", i, i%7)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sampleRows(path, 101, 1); err == nil {
		t.Error("sampleRows(101 of 100) = nil, want an error")
	}
	if err := sampleRows(path, 10, 1); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, path)
	if len(recs) != 11 || recs[0][0] != "id" {
		t.Fatalf("sampleRows(10 of 100) = %d lines, header %v; want 11, [id v]", len(recs), recs[0])
	}
	last := -1
	for _, r := range recs[1:] {
		id, err := strconv.Atoi(r[0])
		if err != nil || id <= last || r[1] != fmt.Sprintf("a, %d", id%7) {
			t.Fatalf("sampleRows: record %v after id %d: want increasing ids with their own fields", r, last)
		}
		last = id
	}
}
