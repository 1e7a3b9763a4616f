package ingest

import (
	"bytes"
	"context"
	"testing"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/universe"
)

// shipped returns the data and domain of a shipped dataset.
func shipped(t testing.TB, name string) ([]byte, *universe.Domain) {
	t.Helper()
	ds, err := datasets.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := datasets.ReadFile(ds.Data)
	if err != nil {
		t.Fatal(err)
	}
	db, err := datasets.ReadFile(ds.Domain)
	if err != nil {
		t.Fatal(err)
	}
	dom, err := universe.ParseDomain(db)
	if err != nil {
		t.Fatal(err)
	}
	return data, dom
}

func TestShippedDatasets(t *testing.T) {
	for _, ds := range datasets.All {
		t.Run(ds.Name, func(t *testing.T) {
			data, dom := shipped(t, ds.Name)
			c, st, err := ReadCSV(context.Background(), bytes.NewReader(data), ds.Data, dom, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Total() != int64(ds.Rows) || st.Rows != int64(ds.Rows) || st.N != int64(ds.Rows) {
				t.Errorf("ReadCSV(%s): total %d, rows %d, n %d; want %d", ds.Name, c.Total(), st.Rows, st.N, ds.Rows)
			}
			if st.Distinct != c.Distinct() || st.Repaired() != 0 {
				t.Errorf("stats %+v disagree with counts (distinct %d)", st, c.Distinct())
			}
		})
	}
}
