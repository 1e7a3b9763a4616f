//go:build unix

package vec

import "syscall"

// cpuNanos is the CPU time (user and system) of the process so far: under
// load, the work of a benchmark is its CPU time, while its wall time also
// counts the time it waits for a core.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
