package query

import "sync"

// team runs one phase of work on n workers: the calling goroutine is worker
// 0 and n-1 helper goroutines, started once, are the others. Every worker
// takes part in every phase and run returns when all are done, so that a
// phase's partition of the work, and hence every floating-point sum, is the
// same from call to call (seeded runs are reproducible bit for bit). Waking
// and waiting allocate nothing.
type team struct {
	n    int
	fn   func(w int)
	wake []chan struct{}
	done chan struct{}
	once sync.Once
}

func newTeam(n int, fn func(w int)) *team {
	t := &team{n: n, fn: fn, wake: make([]chan struct{}, n), done: make(chan struct{}, n)}
	for w := 1; w < n; w++ {
		t.wake[w] = make(chan struct{}, 1)
		go t.loop(w)
	}
	return t
}

func (t *team) loop(w int) {
	for range t.wake[w] {
		t.fn(w)
		t.done <- struct{}{}
	}
}

// run calls fn(w) for every worker w and returns when all are done.
func (t *team) run() {
	for w := 1; w < t.n; w++ {
		t.wake[w] <- struct{}{}
	}
	t.fn(0)
	for w := 1; w < t.n; w++ {
		<-t.done
	}
}

// stop ends the helpers; run must not be called afterwards.
func (t *team) stop() {
	t.once.Do(func() {
		for w := 1; w < t.n; w++ {
			close(t.wake[w])
		}
	})
}
