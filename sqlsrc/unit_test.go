package sqlsrc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpsynth/synth/contrib"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

const testSalt contrib.Salt = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"

// unitRecords adds two unit columns to the raw records: "who" (text) and
// "uid" (integer), the same unit for each row, with a heavy tail of rows
// per unit (a few units hold hundreds of rows).
func unitRecords(header []string, recs [][]string) ([]string, [][]string) {
	r := rand.New(rand.NewPCG(3, 4))
	h := append([]string{"who", "uid"}, header...)
	out := make([][]string, len(recs))
	for i, rec := range recs {
		x := r.Float64()
		u := int(300 * x * x * x)
		out[i] = append([]string{fmt.Sprintf("person %d", u), strconv.Itoa(9000 + u)}, rec...)
	}
	return h, out
}

// unitTests: with a privacy unit the engine counts exactly the rows the file
// reader keeps (the same salt, K = 1, 2, 5), with a text and an integer unit
// column, through GROUPING SETS (ARRAY JOIN on ClickHouse), one GROUP BY, a
// query source, and the histogram; a unit adds at most K rows to every
// marginal; NULL and empty units fail the check; a unit that is an attribute
// is refused.
func unitTests(t *testing.T, e *engine, dom *universe.Domain, header []string, recs [][]string) {
	ctx := context.Background()
	uh, urecs := unitRecords(header, recs)
	e.load(t, csvTable("events", uh, urecs,
		func(c string) string { return map[bool]string{true: "BIGINT", false: "TEXT"}[c == "uid"] },
		func(c string) string { return map[bool]string{true: "Int64", false: "String"}[c == "uid"] },
		func(c, v string) any {
			if c == "uid" {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
			return v
		}))
	file := filepath.Join(t.TempDir(), "events.csv")
	writeCSV(t, file, uh, urecs)
	for _, col := range []string{"who", "uid"} {
		for _, k := range []int{1, 2, 5} {
			want, _, err := ingest.ReadFile(ctx, file, dom, ingest.Options{PrivacyUnit: col, MaxRowsPerUnit: k, UnitSalt: testSalt,
				IgnoreExtraColumns: true})
			if err != nil {
				t.Fatal(err)
			}
			unit := &Unit{Column: col, MaxRows: k, Salt: testSalt}
			for _, o := range []Options{{Table: "events", Unit: unit}, {Table: "events", Unit: unit, LocalCells: -1},
				{Query: "SELECT * FROM events", Unit: unit}} {
				src, err := Open(ctx, e.dsn, dom, &o)
				if err != nil {
					t.Fatal(err)
				}
				t.Run(fmt.Sprintf("%s/K%d/local%d/query%v", col, k, o.LocalCells, o.Query != ""), func(t *testing.T) {
					compareSource(t, ctx, src, want)
				})
				src.Close()
			}
		}
	}
	// Adding one unit of 40 rows adds at most K to every two-way marginal.
	added := append([][]string(nil), urecs...)
	for i := range 40 {
		row := slices.Clone(urecs[i%len(urecs)])
		row[0], row[1] = "newcomer", "1"
		added = append(added, row)
	}
	e.load(t, csvTable("events_plus", uh, added,
		func(c string) string { return map[bool]string{true: "BIGINT", false: "TEXT"}[c == "uid"] },
		func(c string) string { return map[bool]string{true: "Int64", false: "String"}[c == "uid"] },
		func(c, v string) any {
			if c == "uid" {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
			return v
		}))
	sets := allSets(dom.Len(), 2)
	const k = 3
	tabs := map[string][][]int64{}
	for _, tb := range []string{"events", "events_plus"} {
		src, err := Open(ctx, e.dsn, dom, &Options{Table: tb, Unit: &Unit{Column: "who", MaxRows: k, Salt: testSalt}, LocalCells: -1})
		if err != nil {
			t.Fatal(err)
		}
		if tabs[tb], err = src.Marginals(ctx, sets); err != nil {
			t.Fatal(err)
		}
		src.Close()
	}
	for j, s := range sets {
		added := int64(0)
		for c := range tabs["events"][j] {
			d := tabs["events_plus"][j][c] - tabs["events"][j][c]
			if d < 0 {
				t.Fatalf("marginal %v, cell %d: a unit's addition removed %d rows", s, c, -d)
			}
			added += d
		}
		if added != k {
			t.Errorf("marginal %v: a unit of 40 rows added %d kept rows, want K = %d", s, added, k)
		}
	}
	// NULL and empty units.
	bad := append([][]string(nil), urecs[:50]...)
	bad[7] = slices.Clone(bad[7])
	bad[7][0] = ""
	e.load(t, csvTable("events_bad", uh, bad,
		func(c string) string { return map[bool]string{true: "BIGINT", false: "TEXT"}[c == "uid"] },
		func(c string) string { return map[bool]string{true: "Int64", false: "Nullable(String)"}[c == "uid"] },
		func(c, v string) any {
			switch {
			case c == "uid":
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			case c == "who" && v == "":
				return nil
			}
			return v
		}))
	src, err := Open(ctx, e.dsn, dom, &Options{Table: "events_bad", Unit: &Unit{Column: "who", MaxRows: 2, Salt: testSalt}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Marginals(ctx, [][]int{{0}})
	var de *DataError
	if !errors.As(err, &de) || de.Column != "who" || de.Count != 1 || !strings.Contains(err.Error(), "privacy unit is NULL or empty") {
		t.Errorf("a NULL unit: err = %v, want a DataError naming the column and 1 row", err)
	}
	src.Close()
	if _, err := Open(ctx, e.dsn, dom, &Options{Table: "events", Unit: &Unit{Column: "sex", MaxRows: 2, Salt: testSalt}}); err == nil ||
		!strings.Contains(err.Error(), "attribute of the domain") {
		t.Errorf("a unit that is an attribute: err = %v", err)
	}
	if _, err := Open(ctx, e.dsn, dom, &Options{Table: "events", Unit: &Unit{Column: "nobody", MaxRows: 2, Salt: testSalt}}); err == nil ||
		!strings.Contains(err.Error(), "privacy unit") {
		t.Errorf("a missing unit column: err = %v", err)
	}
}
