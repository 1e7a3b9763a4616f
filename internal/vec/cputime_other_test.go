//go:build !unix

package vec

// cpuNanos is not measured here; the benchmarks then omit their CPU-time
// figures.
func cpuNanos() int64 { return 0 }
