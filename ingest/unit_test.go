package ingest

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dpsynth/synth/contrib"
	"github.com/dpsynth/synth/universe"
)

const unitSalt contrib.Salt = "00112233445566778899aabbccddeeff"

// unitDomain is a small raw domain for the unit tests.
const unitDomainJSON = `{"attributes": [
  {"name": "g", "type": "categorical", "values": ["a", "b", "c"]},
  {"name": "n", "type": "integer", "min": 0, "max": 9},
  {"name": "h", "type": "categorical", "values": ["x", "y"], "null": ""}
]}`

func unitDomain(t testing.TB) *universe.Domain {
	t.Helper()
	d, err := universe.ParseDomain([]byte(unitDomainJSON))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// urow is one row of a unit table: its unit and its values (g, n, h).
type urow struct {
	unit    string
	g, n, h string
}

// unitTable draws users with a heavy tail of rows.
func unitTable(users int, seed uint64) []urow {
	r := rand.New(rand.NewPCG(seed, 5))
	var rows []urow
	for u := range users {
		n := 1 + int(30*r.Float64()*r.Float64()*r.Float64())
		fav := []string{"a", "b", "c"}[r.IntN(3)]
		for range n {
			g := fav
			if r.IntN(3) == 0 {
				g = []string{"a", "b", "c"}[r.IntN(3)]
			}
			h := []string{"x", "y", ""}[r.IntN(3)]
			rows = append(rows, urow{fmt.Sprintf("u%d", 1000+u), g, strconv.Itoa(r.IntN(10)), h})
		}
	}
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	return rows
}

func unitCSV(rows []urow) []byte {
	var b bytes.Buffer
	b.WriteString("h,user,g,n\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%s,%s\n", r.h, r.unit, r.g, r.n)
	}
	return b.Bytes()
}

// unitReference bounds rows by the contrib rule directly: the expected
// kept counts, as a table() string.
func unitReference(t testing.TB, dom *universe.Domain, rows []urow, k int64) (kept, all string) {
	t.Helper()
	type cellKey struct{ unit, cell string }
	counts := map[cellKey]int64{}
	codesOf := map[string][]int{}
	for _, r := range rows {
		codes := make([]int, 3)
		for i, v := range []string{r.g, r.n, r.h} {
			c, _, err := dom.Attr(i).EncodeString(v, universe.Policy{})
			if err != nil {
				t.Fatal(err)
			}
			codes[i] = c
		}
		cell := contrib.CellText(codes)
		codesOf[cell] = codes
		counts[cellKey{r.unit, cell}]++
	}
	byUnit := map[string][]contrib.Cell{}
	for k, c := range counts {
		byUnit[k.unit] = append(byUnit[k.unit], contrib.Cell{Text: []byte(k.cell), Count: c})
	}
	kc, ac := universe.NewCounts(dom), universe.NewCounts(dom)
	for u, cells := range byUnit {
		out := make([]int64, len(cells))
		contrib.Keep(contrib.UnitID(unitSalt, u), k, cells, out)
		for i, c := range cells {
			codes := codesOf[string(c.Text)]
			if err := ac.Add(codes, c.Count); err != nil {
				t.Fatal(err)
			}
			if out[i] > 0 {
				if err := kc.Add(codes, out[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	ks, err := mergeSorted(dom, []*universe.Counts{kc})
	if err != nil {
		t.Fatal(err)
	}
	as, err := mergeSorted(dom, []*universe.Counts{ac})
	if err != nil {
		t.Fatal(err)
	}
	return table(ks), table(as)
}

func unitOpts(k int) Options {
	return Options{PrivacyUnit: "user", MaxRowsPerUnit: k, UnitSalt: unitSalt}
}

// TestUnitBoundCSV: the kept counts of a CSV read equal the contrib rule
// applied to the same rows, whatever the workers, batches and row order,
// and the unbounded counts are every row.
func TestUnitBoundCSV(t *testing.T) {
	dom := unitDomain(t)
	rows := unitTable(200, 1)
	for _, k := range []int{1, 2, 5} {
		want, wantAll := unitReference(t, dom, rows, int64(k))
		for _, v := range []struct {
			name          string
			workers, rows int
			shuffle       uint64
		}{{"one worker", 1, 0, 0}, {"two workers, small batches", 2, 7, 0}, {"shuffled", 2, 64, 9}} {
			in := append([]urow(nil), rows...)
			if v.shuffle > 0 {
				r := rand.New(rand.NewPCG(v.shuffle, 1))
				r.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
			}
			o := unitOpts(k)
			o.Workers, o.BatchRows = v.workers, v.rows
			c, st, err := ReadCSV(t.Context(), bytes.NewReader(unitCSV(in)), "t.csv", dom, o)
			if err != nil {
				t.Fatalf("K = %d, %s: %v", k, v.name, err)
			}
			if got := table(c); got != want {
				t.Errorf("K = %d, %s: ReadCSV = %s, want %s", k, v.name, got, want)
			}
			if got := table(st.AllCounts); got != wantAll {
				t.Errorf("K = %d, %s: AllCounts = %s, want every row %s", k, v.name, got, wantAll)
			}
			if st.Rows != int64(len(rows)) || st.N+st.UnitRowsDropped != st.Rows || st.Units != 200 {
				t.Errorf("K = %d, %s: stats rows %d, kept %d, dropped %d, units %d; want %d rows = kept + dropped, 200 units",
					k, v.name, st.Rows, st.N, st.UnitRowsDropped, st.Units, len(rows))
			}
		}
	}
}

// TestUnitBoundParts: a unit whose rows are spread over part files is
// bounded once over all of them (the grouping spans the parts), and the
// spill path gives the same counts and leaves no file behind.
func TestUnitBoundParts(t *testing.T) {
	dom := unitDomain(t)
	rows := unitTable(150, 2)
	want, _ := unitReference(t, dom, rows, 3)
	dir := filepath.Join(t.TempDir(), "parts")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p := range 3 {
		part := rows[p*len(rows)/3 : (p+1)*len(rows)/3]
		write(t, filepath.Join(dir, fmt.Sprintf("part-%d.csv", p)), unitCSV(part))
	}
	spill := t.TempDir()
	spilled := ""
	spillHook = func(dir string) { spilled = dir }
	defer func() { spillHook = nil }()
	for _, mem := range []uint64{0, 16 << 10} {
		o := unitOpts(3)
		o.UnitMemory, o.SpillDir = mem, spill
		spilled = ""
		c, _, err := ReadFile(t.Context(), dir, dom, o)
		if err != nil {
			t.Fatalf("UnitMemory %d: %v", mem, err)
		}
		if (mem > 0) != (filepath.Dir(spilled) == spill) {
			t.Errorf("UnitMemory %d: spilled to %q, want a spill under %s only with the small memory", mem, spilled, spill)
		}
		if got := table(c); got != want {
			t.Errorf("parts, UnitMemory %d: %s, want %s", mem, got, want)
		}
		if left, _ := os.ReadDir(spill); len(left) > 0 {
			t.Errorf("UnitMemory %d: %d files left in the spill folder", mem, len(left))
		}
	}
	// A partition over the limit is refused.
	o := unitOpts(3)
	o.UnitMemory, o.SpillDir = 8, spill
	_, _, err := ReadFile(t.Context(), dir, dom, o)
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Errorf("UnitMemory 8 B: err = %v, want a *MemoryError", err)
	}
	if left, _ := os.ReadDir(spill); len(left) > 0 {
		t.Errorf("after a refusal: %d files left in the spill folder", len(left))
	}
	// Cancelled while reading: nothing left either.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	o.UnitMemory = 16 << 10
	if _, _, err := ReadFile(ctx, dir, dom, o); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: err = %v", err)
	}
	if left, _ := os.ReadDir(spill); len(left) > 0 {
		t.Errorf("after a cancellation: %d files left in the spill folder", len(left))
	}
}

// TestUnitNeighbours: adding one unit of many rows to a table changes its
// kept counts by a non-negative vector of total at most K — so every
// one-way and two-way table moves by at most K rows. A property over 50
// random tables and added units of 1–40 rows.
func TestUnitNeighbours(t *testing.T) {
	dom := unitDomain(t)
	r := rand.New(rand.NewPCG(7, 7))
	for trial := range 50 {
		k := 1 + r.IntN(6)
		base := unitTable(30, uint64(100+trial))
		plus := append([]urow(nil), base...)
		added := unitTable(1, uint64(900+trial))
		for len(added) < 1+r.IntN(40) {
			added = append(added, added[r.IntN(len(added))])
		}
		for _, a := range added {
			a.unit = "new-unit"
			i := r.IntN(len(plus) + 1)
			plus = append(plus[:i], append([]urow{a}, plus[i:]...)...)
		}
		read := func(rows []urow) map[string]int64 {
			c, _, err := ReadCSV(t.Context(), bytes.NewReader(unitCSV(rows)), "t.csv", dom, unitOpts(k))
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]int64{}
			for i := range c.Distinct() {
				m[fmt.Sprint(c.Codes(i))] = c.Count(i)
			}
			return m
		}
		a, b := read(base), read(plus)
		total := int64(0)
		for cell, cb := range b {
			d := cb - a[cell]
			if d < 0 {
				t.Fatalf("trial %d: cell %s lost %d rows when a unit was added", trial, cell, -d)
			}
			total += d
		}
		for cell, ca := range a {
			if _, ok := b[cell]; !ok && ca > 0 {
				t.Fatalf("trial %d: cell %s vanished when a unit was added", trial, cell)
			}
		}
		if want := min(int64(k), int64(len(added))); total != want {
			t.Fatalf("trial %d: adding a unit of %d rows added %d kept rows, want min(K = %d, rows) = %d", trial, len(added), total, k, want)
		}
	}
}

// TestUnitErrors: a null or empty unit is a bad value naming file, row and
// column and never a value; a unit that is an attribute, a missing unit
// column and bad options are refused.
func TestUnitErrors(t *testing.T) {
	dom := unitDomain(t)
	csv := "user,g,n,h\nsecret-7,a,1,x\n,b,2,y\nsecret-9,c,99,x\n"
	_, _, err := ReadCSV(t.Context(), strings.NewReader(csv), "t.csv", dom, unitOpts(2))
	var de *DataError
	if !errors.As(err, &de) || de.Row != 2 || de.Column != "user" || !errors.Is(de.Err, ErrNullUnit) || de.Total != 2 {
		t.Fatalf("null unit: err = %v, want row 2, column user, ErrNullUnit, 2 bad values in all", err)
	}
	if msg := err.Error(); strings.Contains(msg, "secret") {
		t.Errorf("the error shows a unit's value: %s", msg)
	}
	for _, tc := range []struct {
		name string
		csv  string
		opts Options
		want string
	}{
		{"unit is an attribute", "g,n,h\na,1,x\n", Options{PrivacyUnit: "g", MaxRowsPerUnit: 1, UnitSalt: unitSalt}, "attribute of the domain"},
		{"missing unit column", "g,n,h\na,1,x\n", unitOpts(1), `missing column: "user"`},
		{"no K", "user,g,n,h\nu,a,1,x\n", Options{PrivacyUnit: "user", UnitSalt: unitSalt}, "MaxRowsPerUnit = 0"},
		{"no salt", "user,g,n,h\nu,a,1,x\n", Options{PrivacyUnit: "user", MaxRowsPerUnit: 1}, "salt"},
	} {
		_, _, err := ReadCSV(t.Context(), strings.NewReader(tc.csv), "t.csv", dom, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestUnitTypedColumns: integer, dictionary and boolean unit columns of an
// Arrow stream identify units by their text (decimal for integers), so the
// same units give the same kept rows as in CSV; a pre-aggregated row stands
// for count rows of its unit.
func TestUnitTypedColumns(t *testing.T) {
	dom := unitDomain(t)
	rows := unitTable(80, 3)
	// Integer units: "u1037" becomes 1037 (CSV: "1037").
	intUnit := func(u string) int64 { v, _ := strconv.ParseInt(strings.TrimPrefix(u, "u"), 10, 64); return v }
	csvRows := make([]urow, len(rows))
	for i, r := range rows {
		csvRows[i] = r
		csvRows[i].unit = strconv.FormatInt(intUnit(r.unit), 10)
	}
	want, _ := unitReference(t, dom, csvRows, 2)
	mem := memory.DefaultAllocator
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int64, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}} {
		sc := arrow.NewSchema([]arrow.Field{{Name: "user", Type: typ}, {Name: "g", Type: arrow.BinaryTypes.String},
			{Name: "n", Type: arrow.PrimitiveTypes.Int32}, {Name: "h", Type: arrow.BinaryTypes.String}}, nil)
		b := array.NewRecordBuilder(mem, sc)
		for _, r := range rows {
			switch ub := b.Field(0).(type) {
			case *array.Int64Builder:
				ub.Append(intUnit(r.unit))
			case *array.BinaryDictionaryBuilder:
				ub.AppendString(strconv.FormatInt(intUnit(r.unit), 10))
			}
			b.Field(1).(*array.StringBuilder).Append(r.g)
			n, _ := strconv.Atoi(r.n)
			b.Field(2).(*array.Int32Builder).Append(int32(n))
			b.Field(3).(*array.StringBuilder).Append(r.h)
		}
		rec := b.NewRecordBatch()
		b.Release()
		rr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := ReadRecords(t.Context(), rr, "rec", dom, unitOpts(2))
		rr.Release()
		rec.Release()
		if err != nil {
			t.Fatalf("%s units: %v", typ, err)
		}
		if got := table(c); got != want {
			t.Errorf("%s units: %s, want %s", typ, got, want)
		}
	}
	// Pre-aggregated: the same rows as (unit, cell, count).
	agg := map[urow]int{}
	for _, r := range csvRows {
		agg[r]++
	}
	var b bytes.Buffer
	b.WriteString("user,g,n,h,count\n")
	for r, c := range agg {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%d\n", r.unit, r.g, r.n, r.h, c)
	}
	o := unitOpts(2)
	o.CountColumn = "count"
	c, _, err := ReadCSV(t.Context(), &b, "agg.csv", dom, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := table(c); got != want {
		t.Errorf("pre-aggregated: %s, want %s", got, want)
	}
}

func TestSummarize(t *testing.T) {
	s := summarize([]int64{5, 1, 1, 2, 100, 3, 1, 1, 1, 1})
	if s.Units != 10 || s.Rows != 116 || s.Min != 1 || s.Median != 1 || s.Max != 100 || s.P90 != 5 {
		t.Errorf("summarize = %+v", s)
	}
	last := s.Ks[len(s.Ks)-1]
	if s.Ks[0].K != 1 || s.Ks[0].RowsKept != 10.0/116 || last.K != 128 || last.RowsKept != 1 || last.Truncated != 0 {
		t.Errorf("summarize Ks = %+v", s.Ks)
	}
}

// BenchmarkReadCSVUnits reads 10^6 rows of 40,000 units (heavy-tailed:
// 1–30 rows per unit, some far more) bounded to K = 16, against the same
// table read with every row its own unit.
func BenchmarkReadCSVUnits(b *testing.B) {
	dom := unitDomain(b)
	rows := unitTable(40000, 11)
	for len(rows) < 1_000_000 {
		rows = append(rows, rows[:min(len(rows), 1_000_000-len(rows))]...)
	}
	data := unitCSV(rows)
	for _, bc := range []struct {
		name string
		opts Options
	}{{"rows", Options{IgnoreExtraColumns: true}}, {"units", unitOpts(16)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := ReadCSV(b.Context(), bytes.NewReader(data), "bench.csv", dom, bc.opts); err != nil {
					b.Fatal(err)
				}
			}
			reportRows(b, len(rows))
		})
	}
}

// FuzzReadCSVUnits: a read with a privacy unit never panics; its errors are
// data or I/O errors that never show a unit's value; a successful read
// keeps at most K rows per unit and at most every row, whatever the
// workers and batches.
func FuzzReadCSVUnits(f *testing.F) {
	f.Add([]byte("user,g,n,h\nsecret-a,a,1,x\nsecret-a,b,2,\nsecret-b,c,3,y\n"), uint8(1))
	f.Add([]byte("h,user,g,n\nx,secret-1,a,9\n,secret-1,a,9\ny,,b,0\n"), uint8(2))
	f.Add([]byte("user,g,n,h\nsecret-q,a,10,x\n"), uint8(3))
	dom := unitDomain(f)
	f.Fuzz(func(t *testing.T, raw []byte, k uint8) {
		o := unitOpts(int(k%8) + 1)
		o.Workers = 1
		one, st, err1 := ReadCSV(context.Background(), bytes.NewReader(raw), "f.csv", dom, o)
		o.Workers, o.BatchRows = 3, 2
		many, _, err2 := ReadCSV(context.Background(), bytes.NewReader(raw), "f.csv", dom, o)
		if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
			t.Fatalf("1 worker: %v; 3 workers: %v", err1, err2)
		}
		if err1 != nil {
			for _, v := range unitOnlyValues(raw) {
				// Errors quote the values they show.
				if strings.Contains(err1.Error(), strconv.Quote(v)) {
					t.Fatalf("an error shows a unit's value %q: %v", v, err1)
				}
			}
			return
		}
		if table(one) != table(many) {
			t.Fatalf("1 worker: %s; 3 workers: %s", table(one), table(many))
		}
		if one.Total() > st.Rows || one.Total() > int64(o.MaxRowsPerUnit)*st.Units || st.N+st.UnitRowsDropped != st.AllCounts.Total() {
			t.Fatalf("kept %d of %d rows of %d units (K = %d), dropped %d", one.Total(), st.Rows, st.Units, o.MaxRowsPerUnit, st.UnitRowsDropped)
		}
	})
}

// unitOnlyValues returns the values of a CSV's "user" column that appear in
// no other field (nor the header): those an error must never show.
func unitOnlyValues(raw []byte) []string {
	recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil || len(recs) == 0 {
		return nil
	}
	col := slices.Index(recs[0], "user")
	if col < 0 {
		return nil
	}
	elsewhere := map[string]bool{}
	for i, r := range recs {
		for j, v := range r {
			if i == 0 || j != col {
				elsewhere[v] = true
			}
		}
	}
	var out []string
	for _, r := range recs[1:] {
		if col < len(r) && len(r[col]) >= 3 && !elsewhere[r[col]] {
			out = append(out, r[col])
		}
	}
	return out
}

// TestHintNullSpelling: a missing value spelled as text ("NA", "?") in an
// attribute without a null token gets the hint to declare that spelling as
// the null token, not to declare it as a category.
func TestHintNullSpelling(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(`{"attributes": [
  {"name": "job", "type": "categorical", "values": ["x", "y"]},
  {"name": "wage", "type": "numeric", "lower": 0, "upper": 100, "bins": 4},
  {"name": "kind", "type": "categorical", "values": ["p", "q"]}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ReadCSV(t.Context(), strings.NewReader("job,wage,kind\nNA,10,p\nx,?,q\ny,10,zz\n"), "t.csv", dom, Options{})
	var de *DataError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a DataError", err)
	}
	hints := strings.Join(de.Hints, "\n")
	for _, w := range []string{`"null": "NA" for "job"`, `"null": "?" for "wage"`, `unknown categories of "kind": declare them in the domain's "values"`} {
		if !strings.Contains(hints, w) {
			t.Errorf("hints do not contain %q:\n%s", w, hints)
		}
	}
	if strings.Contains(hints, `unknown categories of "job"`) {
		t.Errorf("\"NA\" of job is hinted as a category to declare:\n%s", hints)
	}
}

// TestHintBinLabels: a file whose numeric and bucketed integer columns hold
// bin labels (synth release --bins label) gets a hint naming --bins.
func TestHintBinLabels(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(`{"attributes": [
  {"name": "age", "type": "numeric", "edges": [17, 20, 25, 91]},
  {"name": "income", "type": "integer", "min": 0, "max": 99, "width": 50}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ReadCSV(t.Context(), strings.NewReader("age,income\n\"[20, 25)\",0..49\n\"[17, 20)\",50..99\n"), "t.csv", dom, Options{})
	var de *DataError
	if !errors.As(err, &de) || de.Total != 4 {
		t.Fatalf("err = %v, want a DataError with 4 bad values", err)
	}
	if h := strings.Join(de.Hints, "\n"); !strings.Contains(h, `the values of "age", "income" are bin labels`) || !strings.Contains(h, "--bins midpoint") {
		t.Errorf("hints = %q, want one naming the bin labels and --bins", h)
	}
}
