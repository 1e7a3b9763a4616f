package draft

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dpsynth/synth/privacy"
)

// unitTable: a unit "heavy" with 1,000 rows (value "X", and a row number in
// "n"), then 600 units of one row each (values "apple" and "kiwi").
func unitTable() (names []string, cols [][]string) {
	var u, v, n []string
	for i := range 1000 {
		u, v, n = append(u, "heavy"), append(v, "xylo"), append(n, fmt.Sprint(i))
	}
	for i := range 600 {
		u, v, n = append(u, fmt.Sprintf("p%d", i)), append(v, []string{"apple", "kiwi"}[i%2]), append(n, fmt.Sprint(i))
	}
	return []string{"u", "v", "n"}, [][]string{u, v, n}
}

// TestPrivacyUnit: with K = 2, the unit with 1,000 rows keeps 2, counts 2
// in the vote and 1 in partition selection, and its value never appears.
func TestPrivacyUnit(t *testing.T) {
	names, cols := unitTable()
	s := Settings{Epsilon: 1, Delta: 1e-9, PrivacyUnit: "u", MaxRowsPerUnit: 2}
	st, _ := s.check()
	sc, next := stringRecords(names, cols, 128)
	tb, err := newTable(sc, st)
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := next()
		if err != nil {
			break
		}
		if err := tb.append(rec); err != nil {
			t.Fatal(err)
		}
	}
	picks := map[string]bool{}
	for seed := range uint64(20) {
		groups, err := tb.bound(2, privacy.NewSeeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		if len(groups) != 601 {
			t.Fatalf("%d units, want 601", len(groups))
		}
		rows := keptRows(groups, tb.n)
		if len(rows) != 602 {
			t.Fatalf("%d rows kept, want 602", len(rows))
		}
		heavy := groups[0] // "heavy" sorts first
		if len(heavy) != 2 || heavy[0] >= 1000 || heavy[1] >= 1000 {
			t.Fatalf("heavy unit keeps %v", heavy)
		}
		picks[fmt.Sprint(heavy)] = true
		cv := tb.cols[0] // "v"
		counts := tally(cv, layout(cv, st), rows, st)
		var text int64
		for i, c := range layout(cv, st) {
			if c.kind == cText {
				text = counts[i]
			}
		}
		if text != 602 {
			t.Errorf("text votes %d, want 600 + 2", text)
		}
		if uc := unitCounts(cv, nil, rows, groups); uc["xylo"] != 1 || uc["apple"] != 300 {
			t.Errorf("unit counts %v", uc)
		}
	}
	if len(picks) < 15 {
		t.Errorf("the heavy unit kept the same rows under different salts: %d different picks in 20", len(picks))
	}
	// End to end: "xylo" (1,000 rows, one unit) never appears; the unit column
	// is neither drafted nor written.
	for seed := range uint64(5) {
		sc, next := stringRecords(names, cols, 128)
		d, err := Records(context.Background(), sc, next, s, privacy.NewSeeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		f := parseDomain(t, d.JSON)
		if f.Draft.PrivacyUnit != "u" || f.Draft.MaxRowsPerUnit != 2 || len(f.Attributes) != 2 {
			t.Fatalf("draft %s", d.JSON)
		}
		for _, a := range f.Attributes {
			if a.Name == "v" && strings.Join(a.Values, ",") != "apple,kiwi,"+OtherValue {
				t.Errorf("seed %d: values %q", seed, a.Values)
			}
		}
		if bytes.Contains(d.JSON, []byte("heavy")) || bytes.Contains(d.JSON, []byte("p1")) {
			t.Errorf("a unit value is in the draft")
		}
	}
}

func TestEmptyUnit(t *testing.T) {
	sc, next := stringRecords([]string{"u", "v"}, [][]string{{"a", "", "b"}, {"1", "2", "3"}}, 10)
	_, err := Records(context.Background(), sc, next, Settings{Epsilon: 1, Delta: 1e-9, PrivacyUnit: "u"}, privacy.NewSeeded(1))
	if err == nil || !strings.Contains(err.Error(), "row 2") {
		t.Errorf("empty unit: %v", err)
	}
}
