// Command eval-elsewhere makes two synthetic tables "elsewhere" — the way
// another tool might — for the eval walk-through (README.md in this
// folder), as CSV files in DIR:
//
//   - independent.csv: each column drawn on its own from the column's
//     distribution in the data, so every one-way marginal is close and
//     every correlation is lost;
//   - perturbed.csv: a copy of the data in which each value is replaced,
//     with probability 0.2, by a value drawn uniformly from its domain.
//
// Neither is differentially private: they stand in for the output of some
// other generator, to be scored with synth eval. The randomness is the
// project's seeded ChaCha8 stream (privacy.NewSeeded), so the files are the
// same on every run.
//
// Usage:
//
//	go run ./examples/eval-elsewhere DIR
package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/universe"
)

// replaceProb is the chance that perturbed.csv replaces a value.
const replaceProb = 0.2

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: eval-elsewhere DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "eval-elsewhere:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	ds, err := datasets.Lookup("adult-reduced")
	if err != nil {
		return err
	}
	b, err := datasets.ReadFile(ds.Data)
	if err != nil {
		return err
	}
	db, err := datasets.ReadFile(ds.Domain)
	if err != nil {
		return err
	}
	dom, err := universe.ParseDomain(db)
	if err != nil {
		return err
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return err
	}
	header, rows := recs[0], recs[1:]
	sizes := make([]int, len(header))
	for j, name := range header {
		i, ok := dom.Index(name)
		if !ok {
			return fmt.Errorf("column %q is not in the domain", name)
		}
		sizes[j] = dom.Attr(i).Size()
	}
	r := privacy.NewSeeded(2024)

	// independent.csv: column j of each row is the value of column j of a
	// uniformly drawn row, independently for every column.
	ind := make([][]string, len(rows))
	for i := range ind {
		ind[i] = make([]string, len(header))
		for j := range header {
			ind[i][j] = rows[r.Uint64N(uint64(len(rows)))][j]
		}
	}
	// perturbed.csv: each value kept, or with probability replaceProb
	// replaced by a uniform code of its attribute.
	per := make([][]string, len(rows))
	for i, row := range rows {
		per[i] = make([]string, len(header))
		for j, v := range row {
			if r.Float64() < replaceProb {
				v = strconv.FormatUint(r.Uint64N(uint64(sizes[j])), 10)
			}
			per[i][j] = v
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		rows [][]string
	}{{"independent.csv", ind}, {"perturbed.csv", per}} {
		// Sorted rows: another tool's row order says nothing about the data.
		sort.Slice(f.rows, func(a, b int) bool { return less(f.rows[a], f.rows[b]) })
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.Write(header)
		w.WriteAll(f.rows)
		if err := w.Error(); err != nil {
			return err
		}
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Printf("wrote %s: %d rows\n", path, len(f.rows))
	}
	return nil
}

func less(a, b []string) bool {
	for j := range a {
		if a[j] != b[j] {
			return a[j] < b[j]
		}
	}
	return false
}
