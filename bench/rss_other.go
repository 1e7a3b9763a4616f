//go:build !unix

package bench

import (
	"math"
	"os"
)

// maxRSSMiB is not available on this platform: the peak_rss_mib column
// stays empty.
func maxRSSMiB(*os.ProcessState) float64 { return math.NaN() }
