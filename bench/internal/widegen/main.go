// Command widegen writes a wide benchmark table and its domain (bench/wide.go)
// into a folder, for profiling a release outside synth bench:
//
//	go run ./bench/internal/widegen -cols 128 -rows 200000 -out /tmp/wide128
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dpsynth/synth/bench"
)

func main() {
	cols := flag.Int("cols", 64, "columns")
	rows := flag.Int("rows", 200_000, "rows")
	out := flag.String("out", "", "output folder (wide.csv, wide-domain.json)")
	flag.Parse()
	if err := write(*out, *cols, *rows); err != nil {
		fmt.Fprintln(os.Stderr, "widegen:", err)
		os.Exit(1)
	}
}

func write(dir string, cols, rows int) error {
	if dir == "" {
		return fmt.Errorf("give -out")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "wide.csv"))
	if err != nil {
		return err
	}
	if err := bench.WriteWide(f, cols, rows, bench.WideSeed); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "wide-domain.json"), bench.WideDomain(cols, bench.WideSeed), 0o644)
}
