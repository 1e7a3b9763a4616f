package query

import (
	"sync"
	"sync/atomic"
)

// team runs one phase of work on up to n workers: the calling goroutine is
// worker 0 and n-1 helper goroutines, started once, are the others. The
// work of a phase is claimed dynamically (atomic counters), so a helper
// that the scheduler runs late takes less of it, and one that has not
// joined by the time worker 0 has finished is not waited for: on a shared
// machine a descheduled helper delays a call by the work it holds, not by
// the time it waits for a core. Waking, joining and waiting allocate
// nothing.
type team struct {
	n    int
	fn   func(w int)
	wake []chan struct{}
	done chan struct{}
	once sync.Once

	// st holds the phase's generation (bits 32-63), whether it is open to
	// helpers (bit 31) and the number of helpers that joined (bits 0-30).
	st     atomic.Uint64
	joined []bool // joined[w]: helper w joined the current phase (read after run)
}

const (
	stOpen = 1 << 31
	stGen  = 1 << 32
)

func newTeam(n int, fn func(w int)) *team {
	t := &team{n: n, fn: fn, wake: make([]chan struct{}, n), done: make(chan struct{}, n), joined: make([]bool, n)}
	for w := 1; w < n; w++ {
		t.wake[w] = make(chan struct{}, 1)
		go t.loop(w)
	}
	return t
}

func (t *team) loop(w int) {
	for range t.wake[w] {
		for {
			s := t.st.Load()
			if s&stOpen == 0 {
				break // closed: worker 0 did the work
			}
			if t.st.CompareAndSwap(s, s+1) {
				t.joined[w] = true
				t.fn(w)
				t.done <- struct{}{}
				break
			}
		}
	}
}

// run calls fn(0) on the calling goroutine and fn(w) on every helper w
// that joins before fn(0) returns, and returns when all of those are done.
// joined reports which helpers took part.
func (t *team) run() {
	s := t.st.Load()
	for w := 1; w < t.n; w++ {
		t.joined[w] = false
	}
	t.joined[0] = true
	t.st.Store((s&^(stGen-1) + stGen) | stOpen)
	for w := 1; w < t.n; w++ {
		select {
		case t.wake[w] <- struct{}{}:
		default: // a wake-up is pending: the helper will see this phase
		}
	}
	t.fn(0)
	var joined uint64
	for {
		s := t.st.Load()
		if t.st.CompareAndSwap(s, s&^stOpen) {
			joined = s & (stOpen - 1)
			break
		}
	}
	for range joined {
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
