package release

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/eval"
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
	// The report states the stages' times (the slowed ones at least their
	// sleep) and the dry run's estimate of the solve beside them.
	b, err := os.ReadFile(filepath.Join(dir, "o", ReportJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep eval.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, st := range rep.Stages {
		got[st.Name] = st.Seconds
	}
	for _, name := range []string{"read", "solve"} {
		if got[name] < (12 * every).Seconds() {
			t.Errorf("report stage %q took %v s, want at least the %v slept (stages %v)", name, got[name], 12*every, rep.Stages)
		}
	}
	if _, ok := got["write rows"]; !ok {
		t.Errorf("report stages %v lack \"write rows\"", rep.Stages)
	}
	if e := rep.TimeEstimate; e == nil || !(e.SolveSeconds > 0) || !(e.Low <= e.SolveSeconds && e.SolveSeconds <= e.High) {
		t.Errorf("report time_estimate = %+v, want a solve estimate inside its range", e)
	}
}
