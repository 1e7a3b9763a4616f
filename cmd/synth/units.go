package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dpsynth/synth/contrib"
	"github.com/dpsynth/synth/ingest"
)

// unitReadOptions sets the options of a read grouped by privacy unit for
// synth inspect: K is the bound to count with (0: no bound, every row kept,
// so that the statistics describe the table as it is), and the salt comes
// from crypto/rand (inspect releases nothing; the salt only picks which rows
// a bound keeps).
func unitReadOptions(o *ingest.Options, column string, k int) error {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	o.PrivacyUnit, o.UnitSalt = column, contrib.Salt(hex.EncodeToString(b[:]))
	o.MaxRowsPerUnit = k
	if k == 0 {
		o.MaxRowsPerUnit = int(^uint(0) >> 1) // keep every row
	}
	return nil
}

// printUnits prints the rows-per-unit statistics of a read (internal, not
// DP).
func printUnits(w io.Writer, column string, k int, st *ingest.Stats) {
	s := st.RowsPerUnit
	fmt.Fprintf(w, "\nprivacy unit %q (internal, not DP: exact statistics of the private data, for choosing --max-rows-per-unit):\n", column)
	fmt.Fprintf(w, "units: %d\nrows per unit: min %d, median %d, p90 %d, p99 %d, max %d (mean %.1f)\n",
		s.Units, s.Min, s.Median, s.P90, s.P99, s.Max, float64(s.Rows)/float64(max(s.Units, 1)))
	if k > 0 {
		fmt.Fprintf(w, "with --max-rows-per-unit %d: %d rows kept, %d dropped (the counts above are of the kept rows)\n", k, st.N, st.UnitRowsDropped)
	}
	fmt.Fprintln(w, "what a bound of K rows per unit keeps (each sensitivity is K times a row's: the noise grows with K):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "K\trows kept\tunits truncated\t\n")
	for _, ks := range s.Ks {
		fmt.Fprintf(tw, "%d\t%.1f%%\t%.1f%%\t\n", ks.K, 100*ks.RowsKept, 100*ks.Truncated)
	}
	tw.Flush()
}
