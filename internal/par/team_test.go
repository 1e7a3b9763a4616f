package par

import (
	"testing"
)

type sumJob struct {
	x    []float64
	part []float64
}

func (j *sumJob) Run(w, lo, hi int) {
	s := 0.0
	for _, v := range j.x[lo:hi] {
		s += v
	}
	j.part[w] = s
}

func TestForCoversRange(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 7} {
		tm := NewTeam(workers)
		for _, n := range []int{0, 1, 100, MinParallel, MinParallel*3 + 17} {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(i)
			}
			j := &sumJob{x: x, part: make([]float64, workers)}
			tm.For(n, 8, j)
			got := 0.0
			for _, p := range j.part {
				got += p
			}
			want := float64(n) * float64(n-1) / 2
			if got != want {
				t.Errorf("workers %d, n %d: sum = %v, want %v", workers, n, got, want)
			}
		}
		tm.Close()
	}
}

func TestSplitAligned(t *testing.T) {
	prev := 0
	for w := range 3 {
		lo, hi := Split(1000, 3, w, 64)
		if lo != prev || (lo%64 != 0 && lo != 1000) {
			t.Errorf("Split(1000, 3, %d, 64) = %d, %d; want lo = %d, a multiple of 64", w, lo, hi, prev)
		}
		prev = hi
	}
	if prev != 1000 {
		t.Errorf("parts end at %d, want 1000", prev)
	}
}

func TestForAllocatesNothing(t *testing.T) {
	tm := NewTeam(2)
	defer tm.Close()
	j := &sumJob{x: make([]float64, 1<<16), part: make([]float64, 2)}
	allocs := testing.AllocsPerRun(100, func() { tm.For(len(j.x), 1, j) })
	if allocs != 0 {
		t.Errorf("For allocates %v times per call, want 0", allocs)
	}
}
