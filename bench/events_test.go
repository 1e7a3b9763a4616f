package bench

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

// TestEventsTable: the generated event table is what the event protocols
// state (users, rows, median and heaviest user), the same for the same
// seed, and every value is in its declared domain.
func TestEventsTable(t *testing.T) {
	var a, b bytes.Buffer
	st, err := WriteEvents(&a, eventsUsers, EventsSeed)
	if err != nil {
		t.Fatal(err)
	}
	if want := (EventsStats{Users: 3000, Rows: 208260, MedianRows: 28, Max: 2612}); st != want {
		t.Errorf("WriteEvents(3000, %d) = %+v, want %+v (the figures eventsNote states)", EventsSeed, st, want)
	}
	if _, err := WriteEvents(&b, eventsUsers, EventsSeed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two tables of the same seed differ")
	}
	recs, err := csv.NewReader(bytes.NewReader(a.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]int{}
	for _, r := range recs[1:] {
		users[r[0]]++
	}
	if len(users) != st.Users || len(recs)-1 != st.Rows {
		t.Errorf("table has %d users and %d rows, stats say %d and %d", len(users), len(recs)-1, st.Users, st.Rows)
	}
	dom, err := universe.ParseDomain(EventsDomain())
	if err != nil {
		t.Fatal(err)
	}
	counts, stats, err := ingest.ReadCSV(t.Context(), bytes.NewReader(a.Bytes()), "events.csv", dom, ingest.Options{IgnoreExtraColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	if counts.Total() != int64(st.Rows) || stats.Repaired() != 0 {
		t.Errorf("read %d records (%d repaired), want %d and none", counts.Total(), stats.Repaired(), st.Rows)
	}
}
