// Command adult-release reads a released synthetic.parquet the way a
// downstream user would, with Apache Arrow: it prints the columns and their
// types, the privacy statement stored in the file's metadata, and the counts
// of the rows by the columns named on the command line.
//
// Usage:
//
//	go run ./examples/adult-release FILE [COLUMN...]
//
// See README.md in this folder for the walk-through.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpsynth/synth/release"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: adult-release FILE [COLUMN...]")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "adult-release:", err)
		os.Exit(1)
	}
}

func run(path string, by []string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return err
	}
	defer tbl.Release()

	sc := tbl.Schema()
	fmt.Printf("%s: %d rows, %d columns\n", path, tbl.NumRows(), sc.NumFields())
	for _, fd := range sc.Fields() {
		null := ""
		if fd.Nullable {
			null = " (nullable)"
		}
		fmt.Printf("  %-15s %s%s\n", fd.Name, fd.Type, null)
	}

	// The manifest travels with the data, in the key-value metadata.
	if v := pf.MetaData().KeyValueMetadata().FindValue(release.ManifestKey); v != nil {
		man, err := release.ParseManifest([]byte(*v))
		if err != nil {
			return err
		}
		p := man.Privacy
		fmt.Printf("manifest: %s (%s) spent ε = %.6g of %g at δ = %g; randomness %s\n",
			man.Solver.Name, man.Solver.Setting, p.Total.Epsilon, p.Budget.Epsilon, p.Total.Delta, man.Randomness.Source)
		fmt.Printf("  neighbouring datasets: %s\n", p.Neighbouring)
	}

	if len(by) == 0 {
		return nil
	}
	cols := make([]arrow.Array, len(by))
	for i, name := range by {
		idx := sc.FieldIndices(name)
		if len(idx) == 0 {
			return fmt.Errorf("no column %q", name)
		}
		// One chunk is enough for a table this size; concatenate in general.
		chunks := tbl.Column(idx[0]).Data().Chunks()
		col, err := array.Concatenate(chunks, memory.DefaultAllocator)
		if err != nil {
			return err
		}
		defer col.Release()
		cols[i] = col
	}
	counts := map[string]int64{}
	key := make([]string, len(by))
	for r := range int(tbl.NumRows()) {
		for i, c := range cols {
			key[i] = by[i] + "=" + value(c, r)
		}
		counts[strings.Join(key, " ")]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Printf("rows by %s:\n", strings.Join(by, ", "))
	for _, k := range keys {
		fmt.Printf("  %-28s %7d  %5.1f%%\n", k, counts[k], 100*float64(counts[k])/float64(tbl.NumRows()))
	}
	return nil
}

// value formats row r of an Arrow column.
func value(c arrow.Array, r int) string {
	if c.IsNull(r) {
		return "null"
	}
	switch c := c.(type) {
	case *array.String:
		return c.Value(r)
	case *array.Int64:
		return strconv.FormatInt(c.Value(r), 10)
	case *array.Float64:
		return strconv.FormatFloat(c.Value(r), 'g', 6, 64)
	}
	return c.ValueStr(r)
}
