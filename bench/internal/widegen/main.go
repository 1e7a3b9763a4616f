// Command widegen writes a wide benchmark table and its domain (bench/wide.go)
// into a folder, for profiling a release outside synth bench:
//
//	go run ./bench/internal/widegen -cols 128 -rows 200000 -out /tmp/wide128
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dpsynth/synth/bench"
)

func main() {
	cols := flag.Int("cols", 64, "columns")
	rows := flag.Int("rows", 200_000, "rows")
	out := flag.String("out", "", "output folder (wide.csv, wide-domain.json)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "widegen: give -out")
		os.Exit(2)
	}
	if _, _, err := bench.WriteWideFiles(*out, *cols, *rows); err != nil {
		fmt.Fprintln(os.Stderr, "widegen:", err)
		os.Exit(1)
	}
}
