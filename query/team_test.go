package query

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestTeamClaims runs many phases in which the workers claim 64 units of
// work from a counter, some helpers sleeping before they claim (as a
// descheduled thread would): every unit must be done exactly once, and
// all of them by the time run returns.
func TestTeamClaims(t *testing.T) {
	const units = 64
	var next atomic.Int64
	var done [units]atomic.Int32
	phase := 0
	tm := newTeam(3, func(w int) {
		if w > 0 && (phase+w)%3 == 0 {
			time.Sleep(50 * time.Microsecond)
		}
		for i := next.Add(1) - 1; i < units; i = next.Add(1) - 1 {
			done[i].Add(1)
		}
	})
	defer tm.stop()
	for phase = range 2000 {
		next.Store(0)
		for i := range done {
			done[i].Store(0)
		}
		tm.run()
		for i := range done {
			if n := done[i].Load(); n != 1 {
				t.Fatalf("phase %d: unit %d done %d times, want 1", phase, i, n)
			}
		}
	}
}
