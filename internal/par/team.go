package par

import (
	"runtime"
	"sync"
)

// Job is one parallel loop body: Run handles indices [lo, hi) for worker w.
// Implement it on a pointer to a struct the caller allocates once, so that
// calling For allocates nothing.
type Job interface {
	Run(w, lo, hi int)
}

// Team is a fixed set of workers: the calling goroutine is worker 0 and
// Workers()-1 helper goroutines, started on first use, are the others.
// A Team is not safe for concurrent calls of For; use one per solver.
type Team struct {
	n     int
	start sync.Once
	wake  []chan struct{}
	done  chan struct{}
	job   Job
	total int
	grain int
}

// NewTeam returns a team of workers goroutines (0 means GOMAXPROCS).
func NewTeam(workers int) *Team {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &Team{n: workers}
}

// Workers is the number of workers.
func (t *Team) Workers() int { return t.n }

func (t *Team) init() {
	t.wake = make([]chan struct{}, t.n)
	t.done = make(chan struct{}, t.n)
	for w := 1; w < t.n; w++ {
		t.wake[w] = make(chan struct{}, 1)
		go t.loop(w)
	}
}

func (t *Team) loop(w int) {
	for range t.wake[w] {
		t.runPart(w)
		t.done <- struct{}{}
	}
}

// Split returns the bounds of worker w's part of [0, n) for a team of
// workers, in contiguous blocks aligned to grain.
func Split(n, workers, w, grain int) (lo, hi int) {
	if grain < 1 {
		grain = 1
	}
	blocks := (n + grain - 1) / grain
	lo = min(blocks*w/workers*grain, n)
	hi = min(blocks*(w+1)/workers*grain, n)
	return lo, hi
}

func (t *Team) runPart(w int) {
	lo, hi := Split(t.total, t.n, w, t.grain)
	if lo < hi {
		t.job.Run(w, lo, hi)
	}
}

// MinParallel is the loop length below which For runs on the caller alone.
const MinParallel = 1 << 14

// For runs job over [0, n) split into one contiguous part per worker
// (boundaries multiples of grain, which may be 0 for 1) and returns when all
// parts are done. Short loops run on the calling goroutine.
func (t *Team) For(n, grain int, job Job) {
	if t.n == 1 || n < MinParallel {
		if n > 0 {
			job.Run(0, 0, n)
		}
		return
	}
	t.start.Do(t.init)
	t.job, t.total, t.grain = job, n, grain
	for w := 1; w < t.n; w++ {
		t.wake[w] <- struct{}{}
	}
	t.runPart(0)
	for w := 1; w < t.n; w++ {
		<-t.done
	}
	t.job = nil
}

// Close stops the helper goroutines; the team must not be used afterwards.
func (t *Team) Close() {
	t.start.Do(func() {}) // never start helpers after Close
	for w := 1; w < len(t.wake); w++ {
		close(t.wake[w])
	}
	t.wake = nil
}
