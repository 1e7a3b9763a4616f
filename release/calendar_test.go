package release

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

// timeKinds has a date by week, a timestamp by hour across the night New
// York's clocks change, and a nullable boolean.
const timeKinds = `{"attributes": [
  {"name": "day", "type": "date", "lower": "2024-02-25", "upper": "2024-03-31", "bin": "week", "null": ""},
  {"name": "at", "type": "timestamp", "lower": "2024-03-10T00:00:00-05:00", "upper": "2024-03-10T06:30:00-04:00", "bin": "hour", "timezone": "America/New_York"},
  {"name": "ok", "type": "boolean", "null": ""}
]}`

// TestTimeKindsReadBack writes rows over every cell with each value rule
// that reads back (the bin's start, a draw in it), as Parquet (DATE,
// TIMESTAMP, BOOLEAN) and as CSV (ISO text), and reads them back with
// ingest: every row must land in the cell it was drawn from.
func TestTimeKindsReadBack(t *testing.T) {
	dom := mustDomain(t, timeKinds)
	rows := testRows(dom, 4000, 3)
	want := map[string]int64{}
	codes := make([]int, dom.Len())
	for _, r := range rows {
		want[fmt.Sprint(dom.Decode(uint64(r), codes))]++
	}
	for _, rule := range []ValueRule{Point, Uniform} {
		ds := DecodeSettings{Time: rule}
		data := writeTestParquet(t, dom, rows, ds, nil)
		h, _, err := ingest.ReadParquet(context.Background(), bytes.NewReader(data), "s.parquet", dom, ingest.Options{})
		if err != nil {
			t.Fatalf("%v: ReadParquet = %v", rule, err)
		}
		checkHist(t, rule.String()+" parquet", h, want)

		dec, err := NewDecoder(dom, &ds, seeded(4))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w := NewCSVWriter(&buf, dec, nil)
		if err := w.Write(context.Background(), rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		h, _, err = ingest.ReadCSV(context.Background(), &buf, "s.csv", dom, ingest.Options{})
		if err != nil {
			t.Fatalf("%v: ReadCSV = %v", rule, err)
		}
		checkHist(t, rule.String()+" csv", h, want)
	}
}

func checkHist(t *testing.T, what string, h *universe.Counts, want map[string]int64) {
	t.Helper()
	got := map[string]int64{}
	for i := range h.Distinct() {
		got[fmt.Sprint(h.Codes(i))] += h.Count(i)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: read back %d cells, want %d (or other counts)", what, len(got), len(want))
	}
}

func TestTimeKindsCSVText(t *testing.T) {
	dom := mustDomain(t, timeKinds)
	cases := []struct {
		rule  ValueRule
		codes []int
		want  string
	}{
		{Point, []int{0, 0, 1}, "2024-02-25,2024-03-10T00:00:00-05:00,true"},
		{Point, []int{1, 2, 0}, "2024-02-26,2024-03-10T03:00:00-04:00,false"}, // 02:00 does not exist that night
		{Point, []int{6, 5, 2}, ",2024-03-10T06:00:00-04:00,"},
		{Label, []int{1, 1, 1}, "2024-W09,2024-03-10 01:00,true"},
		{LowerUpper, []int{0, 5, 0}, "2024-02-25,2024-02-25,2024-03-10T06:00:00-04:00,2024-03-10T06:30:00-04:00,false"},
		{LowerUpper, []int{1, 0, 0}, "2024-02-26,2024-03-03,2024-03-10T00:00:00-05:00,2024-03-10T01:00:00-05:00,false"},
	}
	for _, c := range cases {
		dec, err := NewDecoder(dom, &DecodeSettings{Time: c.rule}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w := NewCSVWriter(&buf, dec, nil)
		if err := w.Write(context.Background(), []uint32{uint32(dom.Encode(c.codes))}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if got := lines[len(lines)-1]; got != c.want {
			t.Errorf("%v %v: CSV row %q, want %q", c.rule, c.codes, got, c.want)
		}
	}
}
