//go:build cpubench && linux

package query

import (
	"runtime"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
	"gonum.org/v1/gonum/floats"
)

// TestCPUMin measures the operator on one worker by the thread CPU time of
// single calls (minimum and median of many), against the same for one
// plain read of D: on a shared machine this is the most repeatable figure
// of the work per call. Run with
//
//	go test -tags cpubench ./query -run CPUMin -v
func TestCPUMin(t *testing.T) {
	for _, bc := range benchCases {
		dom := bc.dom(t)
		w := bc.work(t, dom)
		op, err := w.Compile(&CompileSettings{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		k := op.K()
		d := make([]float64, k)
		for i := range d {
			d[i] = 1 / float64(k)
		}
		ans := make([]float64, op.M())
		reps := 200
		if k > 1_000_000 {
			reps = 30
		}
		rm, rmed := threadCPU(reps, func() { sink += floats.Sum(d) })
		am, amed := threadCPU(reps, func() { op.Answer(d, ans) })
		jm, jmed := threadCPU(reps, func() { op.Adjoint(ans, d) })
		c := func(x float64) float64 { return x / float64(k) }
		t.Logf("%s (%d calls each, thread CPU ns/cell, min / median): read %.3f / %.3f; Answer %.3f / %.3f (%.1fx read); Adjoint %.3f / %.3f (%.1fx read)",
			bc.name, reps, c(rm), c(rmed), c(am), c(amed), am/rm, c(jm), c(jmed), jm/rm)
	}
}

// threadCPU returns the minimum and median thread CPU time of reps calls
// of f (after one call to warm up), in ns.
func threadCPU(reps int, f func()) (minNs, medNs float64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	now := func() int64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
			panic(err)
		}
		return ts.Nano()
	}
	f()
	xs := make([]float64, reps)
	for i := range xs {
		t0 := now()
		f()
		xs[i] = float64(now() - t0)
	}
	slices.Sort(xs)
	return xs[0], xs[reps/2]
}
