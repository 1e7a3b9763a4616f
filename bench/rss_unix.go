//go:build unix

package bench

import (
	"math"
	"os"
	"runtime"
	"syscall"
)

// maxRSSMiB returns the finished process's peak resident set size in MiB
// from getrusage(2): ru_maxrss is in KiB on Linux and the BSDs, in bytes on
// Darwin. NaN if the platform does not report it.
func maxRSSMiB(ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return math.NaN()
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return float64(ru.Maxrss) / (1 << 20)
	}
	return float64(ru.Maxrss) / (1 << 10)
}
