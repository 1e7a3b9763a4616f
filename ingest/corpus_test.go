package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpsynth/synth/universe"
)

// badCase is one file of the bad-input corpus (testdata/bad/cases.json,
// shared with the CLI tests in cmd/synth).
type badCase struct {
	File        string   `json:"file"`
	CountColumn string   `json:"count_column"`
	Row         int64    `json:"row"`
	Column      string   `json:"column"`
	Want        []string `json:"want"`
}

func loadCases(t *testing.T) []badCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "bad", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []badCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestBadCorpus(t *testing.T) {
	dom, err := universe.LoadDomain(filepath.Join("testdata", "bad", "domain.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := loadCases(t)
	// Every file of the corpus has a case (or is a good file).
	files, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.*"))
	for _, f := range files {
		base := filepath.Base(f)
		if base == "cases.json" || base == "domain.json" || strings.HasPrefix(base, "good") {
			continue
		}
		if !slices.ContainsFunc(cases, func(c badCase) bool { return c.File == base }) {
			t.Errorf("%s has no case in cases.json", base)
		}
	}
	for _, c := range cases {
		t.Run(c.File, func(t *testing.T) {
			path := filepath.Join("testdata", "bad", c.File)
			for _, workers := range []int{1, 3} {
				_, _, err := ReadFile(context.Background(), path, dom, Options{CountColumn: c.CountColumn, Workers: workers, BatchRows: 1, ShowValues: true})
				var de *DataError
				if !errors.As(err, &de) {
					t.Fatalf("ReadFile(%s) = %v, want a *DataError", c.File, err)
				}
				if de.File != path || de.Row != c.Row || de.Column != c.Column {
					t.Errorf("ReadFile(%s): file %q, row %d, column %q; want %q, %d, %q", c.File, de.File, de.Row, de.Column, path, c.Row, c.Column)
				}
				msg := err.Error()
				want := append([]string{path + ": "}, c.Want...)
				if c.Row > 0 {
					want = append(want, "row "+strconv.FormatInt(c.Row, 10))
				}
				if c.Column != "" {
					want = append(want, "column "+strconv.Quote(c.Column))
				}
				for _, w := range want {
					if !strings.Contains(msg, w) {
						t.Errorf("ReadFile(%s) error %q does not contain %q", c.File, msg, w)
					}
				}
			}
		})
	}
}

func TestGoodCorpus(t *testing.T) {
	dom, err := universe.LoadDomain(filepath.Join("testdata", "bad", "domain.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, st, err := ReadFile(context.Background(), filepath.Join("testdata", "bad", "good.csv"), dom, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Total() != 3 || c.Distinct() != 3 || st.Rows != 3 || st.Format != CSV {
		t.Errorf("good.csv: total %d, distinct %d, stats %+v; want 3 rows in 3 cells", c.Total(), c.Distinct(), st)
	}
	// Pre-aggregated, columns in another order, a duplicated cell and a
	// zero count: 7 records in 1 cell.
	c, st, err = ReadFile(context.Background(), filepath.Join("testdata", "bad", "good-counts.csv"), dom, Options{CountColumn: "count"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Total() != 7 || c.Distinct() != 1 || st.Rows != 3 || st.N != 7 {
		t.Errorf("good-counts.csv: total %d, distinct %d, stats %+v; want n 7 in 1 cell from 3 rows", c.Total(), c.Distinct(), st)
	}
	want := []int32{0, 0, 3, 0, 0, 0} // F, a, 30..39, [0, 25000), 0, x
	if got := c.Codes(0); !slices.Equal(got, want) {
		t.Errorf("good-counts.csv: codes %v, want %v", got, want)
	}
}

// TestRawMatchesEncoded checks the raw dataset (strings, integers, reals,
// nulls) against the encoded table it was made from: the raw file's counts
// must equal the encoded file's counts under the label map.
func TestRawMatchesEncoded(t *testing.T) {
	dir := filepath.Join("testdata", "raw")
	rawDom, err := universe.LoadDomain(filepath.Join(dir, "adult-raw-domain.json"))
	if err != nil {
		t.Fatal(err)
	}
	header, rows := encodedPrefix(t, rawRows)
	_, encDom := shipped(t, "adult-reduced")

	// Expected: the encoded rows' counts over the encoded domain, mapped to
	// the raw domain attribute by attribute (the label map keeps codes), with
	// the nulled rows moved to occupation's null cell.
	var enc strings.Builder
	enc.WriteString(strings.Join(header, ",") + "\n")
	for _, r := range rows {
		for j, v := range r {
			if j > 0 {
				enc.WriteByte(',')
			}
			enc.WriteString(strconv.Itoa(v))
		}
		enc.WriteByte('\n')
	}
	ec, _, err := ReadCSV(context.Background(), strings.NewReader(enc.String()), "encoded.csv", encDom, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := universe.NewCounts(rawDom)
	codes := make([]int, rawDom.Len())
	toRaw := func(src []int32, at func(name string) int) {
		for i, a := range rawDom.Attrs() {
			codes[i] = int(src[at(a.Name)])
		}
	}
	encIndex := func(name string) int {
		if name == "income" {
			name = "income>50K"
		}
		i, _ := encDom.Index(name)
		return i
	}
	for i := range ec.Distinct() {
		toRaw(ec.Codes(i), encIndex)
		if err := want.Add(codes, ec.Count(i)); err != nil {
			t.Fatal(err)
		}
	}
	occ, _ := rawDom.Index("occupation")
	nullCode, _ := rawDom.Attr(occ).NullCode()
	fileCol := make(map[string]int)
	for j, h := range header {
		fileCol[rawName(h)] = j
	}
	moved := universe.NewCounts(rawDom)
	for i, r := range rows {
		if !rawNull(i) {
			continue
		}
		r32 := make([]int32, len(r))
		for j, v := range r {
			r32[j] = int32(v)
		}
		toRaw(r32, func(name string) int { return fileCol[name] })
		if err := moved.Add(codes, 1); err != nil { // removed below from the non-null cell
			t.Fatal(err)
		}
	}
	wantCells := cells(want)
	for i := range moved.Distinct() {
		k := key(moved.Codes(i))
		wantCells[k] -= moved.Count(i)
		if wantCells[k] == 0 {
			delete(wantCells, k)
		}
		c := slices.Clone(moved.Codes(i))
		c[occ] = int32(nullCode)
		wantCells[key(c)] += moved.Count(i)
	}

	for _, f := range []string{"adult-raw.csv", "adult-raw.parquet"} {
		got, st, err := ReadFile(context.Background(), filepath.Join(dir, f), rawDom, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Total() != rawRows || st.Repaired() != 0 {
			t.Errorf("%s: total %d, repaired %d; want %d, 0", f, got.Total(), st.Repaired(), rawRows)
		}
		if g := cells(got); !mapsEqual(g, wantCells) {
			t.Errorf("%s: counts differ from the encoded file's under the label map (%d cells, want %d)", f, len(g), len(wantCells))
		}
		var nulls int64
		for i := range got.Distinct() {
			if int(got.Codes(i)[occ]) == nullCode {
				nulls += got.Count(i)
			}
		}
		if nulls != rawRows/50 {
			t.Errorf("%s: %d null occupations, want %d", f, nulls, rawRows/50)
		}
	}
}

func key(c []int32) string {
	var b strings.Builder
	for _, v := range c {
		b.WriteString(strconv.Itoa(int(v)))
		b.WriteByte(',')
	}
	return b.String()
}

func cells(c *universe.Counts) map[string]int64 {
	m := make(map[string]int64, c.Distinct())
	for i := range c.Distinct() {
		m[key(c.Codes(i))] += c.Count(i)
	}
	return m
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
