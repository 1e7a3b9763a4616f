package release

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpsynth/synth/datasets"
)

// lockedBuffer is a log sink safe for the heartbeat's goroutine.
type lockedBuffer struct {
	mu    sync.Mutex
	lines []time.Time
	b     bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, time.Now())
	return l.b.Write(p)
}

// TestHeartbeat runs a release whose read and solve stages are slowed
// (stageHook sleeps 12 intervals in each) with the heartbeat's interval
// scaled down from 10 s to 50 ms: the log must get a line at least every
// interval (with slack for a machine busy with other tests: no gap over 6
// intervals) while the slow stages run, each line naming its stage.
func TestHeartbeat(t *testing.T) {
	const every = 50 * time.Millisecond
	old, oldHook := progressLogEvery, stageHook
	progressLogEvery = every
	stageHook = func(stage string) {
		if stage == "read" || stage == "solve" {
			time.Sleep(12 * every)
		}
	}
	defer func() { progressLogEvery, stageHook = old, oldHook }()

	ds, err := datasets.Lookup("titanic")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, dom, err := ds.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sink lockedBuffer
	log := slog.New(slog.NewTextHandler(&sink, nil))
	seed := uint64(1)
	start := time.Now()
	if _, err := Run(context.Background(), &Config{Data: data, Domain: dom, Marginals: 2, Epsilon: 1, Delta: 1e-9,
		Out: filepath.Join(dir, "o"), Seed: &seed}, &Hooks{Log: log, ProgressLog: true}); err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	text := sink.b.String()
	for _, want := range []string{"level=INFO msg=working stage=read", "level=INFO msg=working stage=solve"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	// The slowed part: from the start to the end of the solve stage's sleep.
	prev := start
	for _, at := range sink.lines {
		if at.Sub(start) > 24*every {
			break
		}
		if gap := at.Sub(prev); gap > 6*every {
			t.Errorf("no log line for %v (interval %v)", gap, every)
		}
		prev = at
	}
}
