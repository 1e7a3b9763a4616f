package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dpsynth/synth/continual"
	"github.com/dpsynth/synth/internal/pgtest"
)

// splitAdult writes adult-reduced's rows into k period files, row i into
// period i mod k.
func splitAdult(t *testing.T, dir string, k int) (parts []string, domain string) {
	t.Helper()
	data, domain := extract(t, "adult-reduced")
	b, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	bufs := make([]strings.Builder, k)
	for i := range bufs {
		bufs[i].WriteString(lines[0] + "\n")
	}
	for i, l := range lines[1:] {
		bufs[i%k].WriteString(l + "\n")
	}
	for i := range bufs {
		p := filepath.Join(dir, fmt.Sprintf("part%d.csv", i))
		if err := os.WriteFile(p, []byte(bufs[i].String()), 0o644); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	abs, _ := filepath.Abs(domain)
	return parts, abs
}

func TestContinualEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	dir := t.TempDir()
	parts, domain := splitAdult(t, dir, 3)
	state := filepath.Join(dir, "st")
	led := filepath.Join(dir, "t.ledger.json")
	if r := runBinary(t, "", "ledger", "init", "--ledger", led, "--epsilon", "2"); r.code != ExitOK {
		t.Fatal(r)
	}
	r := runBinary(t, "", "continual", "init", "--state", state, "--domain", domain, "--marginals", "2", "--periods", "3",
		"--epsilon", "1", "--ledger", led)
	if r.code != ExitOK || !strings.Contains(r.stdout, "3 periods, 21 tables") {
		t.Fatalf("continual init: %s", r)
	}
	if r := runBinary(t, "", "ledger", "show", "--ledger", led); !strings.Contains(r.stdout, "continual") {
		t.Errorf("the ledger has no entry for the horizon: %s", r)
	}
	for i, p := range parts {
		out := filepath.Join(dir, fmt.Sprint("rel", i))
		r := runBinary(t, "", "continual", "add", "--state", state, "--period", fmt.Sprint("day", i), "--data", p, "--out", out)
		if r.code != ExitOK {
			t.Fatalf("continual add %d: %s", i, r)
		}
		var man continual.Manifest
		b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
		if err != nil || json.Unmarshal(b, &man) != nil {
			t.Fatalf("period %d: manifest: %v", i, err)
		}
		if man.Period != fmt.Sprint("day", i) || man.Periods != i+1 || man.Horizon != 3 || man.Privacy.Epsilon != 1 {
			t.Errorf("period %d: manifest %+v", i, man)
		}
		// The cumulative table: about (i+1)/3 of adult-reduced's 48,842 rows.
		if want := 48842.0 * float64(i+1) / 3; man.NEstimate < 0.9*want || man.NEstimate > 1.1*want {
			t.Errorf("period %d: n estimate %.0f, want about %.0f", i, man.NEstimate, want)
		}
		if _, err := os.Stat(filepath.Join(out, "synthetic.parquet")); err != nil {
			t.Error(err)
		}
	}
	before, _ := os.ReadFile(filepath.Join(state, "state.json"))
	// A committed period re-writes its release without reading data.
	r = runBinary(t, "", "continual", "add", "--state", state, "--period", "day1", "--data", "/nonexistent.csv", "--out", filepath.Join(dir, "again"))
	if r.code != ExitOK || !strings.Contains(r.stdout, "no data read") {
		t.Errorf("re-adding a committed period: %s", r)
	}
	// A period past the horizon reads nothing and writes nothing (exit 77).
	r = runBinary(t, "", "continual", "add", "--state", state, "--period", "day3", "--data", parts[0], "--out", filepath.Join(dir, "late"))
	if r.code != ExitBudget {
		t.Errorf("a period past the horizon: %s; want exit %d", r, ExitBudget)
	}
	if _, err := os.Stat(filepath.Join(dir, "late")); err == nil {
		t.Error("a refused period wrote its output folder")
	}
	if after, _ := os.ReadFile(filepath.Join(state, "state.json")); string(after) != string(before) {
		t.Error("re-adding and refusing periods changed the state")
	}
	r = runBinary(t, "", "continual", "status", "--state", state, "--json")
	var st continual.Status
	if r.code != ExitOK || json.Unmarshal([]byte(r.stdout), &st) != nil || st.Done != 3 || st.Remaining != 0 || len(st.Periods) != 3 {
		t.Errorf("continual status --json: %s", r)
	}
	r = runBinary(t, "", "continual", "init", "--state", filepath.Join(dir, "u"), "--domain", domain, "--marginals", "2",
		"--periods", "3", "--epsilon", "1", "--privacy-unit", "person")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "span periods") {
		t.Errorf("--privacy-unit: %s; want a usage error saying why", r)
	}
}

// TestContinualKill kills "continual add" at several moments and checks
// that the next add of the same period is accepted and leaves a state with
// the period committed once.
func TestContinualKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	dir := t.TempDir()
	parts, domain := splitAdult(t, dir, 2)
	for k, delay := range []time.Duration{5 * time.Millisecond, 40 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond, 1200 * time.Millisecond} {
		state := filepath.Join(dir, fmt.Sprint("st", k))
		if r := runBinary(t, "", "continual", "init", "--state", state, "--domain", domain, "--marginals", "1", "--periods", "4", "--epsilon", "1"); r.code != ExitOK {
			t.Fatal(r)
		}
		cmd := exec.Command(synthBinary(t), "continual", "add", "--state", state, "--period", "a", "--data", parts[0], "--out", filepath.Join(dir, fmt.Sprint("o", k)))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		r := runBinary(t, "", "continual", "add", "--state", state, "--period", "a", "--data", parts[0], "--out", filepath.Join(dir, fmt.Sprint("p", k)), "--force")
		if r.code != ExitOK {
			t.Fatalf("kill after %v: the next add: %s", delay, r)
		}
		r = runBinary(t, "", "continual", "add", "--state", state, "--period", "b", "--data", parts[1], "--out", filepath.Join(dir, fmt.Sprint("q", k)))
		if r.code != ExitOK {
			t.Fatalf("kill after %v: the period after: %s", delay, r)
		}
		s, err := continual.Load(state)
		if err != nil || len(s.Periods) != 2 || s.Periods[0].Label != "a" || s.Periods[1].Label != "b" {
			t.Errorf("kill after %v: state %+v, %v", delay, s, err)
		}
	}
}

// TestContinualFromPostgres adds periods counted in a real PostgreSQL, each
// from a query that selects only that period's rows.
func TestContinualFromPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL; skipped with -short")
	}
	dsn := pgtest.Start(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE events AS SELECT g % 3 AS period, (ARRAY['F', 'M'])[1 + g % 2] AS sex,
		(g * 7) % 100 AS age FROM generate_series(1, 3000) AS g`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	domain := filepath.Join(dir, "d.json")
	os.WriteFile(domain, []byte(`{"attributes": [{"name": "sex", "type": "categorical", "values": ["F", "M"]},
	  {"name": "age", "type": "integer", "min": 0, "max": 99, "width": 10}]}`), 0o644)
	state := filepath.Join(dir, "st")
	if r := inProcess(t, "continual", "init", "--state", state, "--domain", domain, "--marginals", "2", "--periods", "3", "--epsilon", "2"); r.code != ExitOK {
		t.Fatal(r)
	}
	for p := range 3 {
		out := filepath.Join(dir, fmt.Sprint("rel", p))
		r := inProcess(t, "continual", "add", "--state", state, "--period", fmt.Sprint(p), "--source", dsn,
			"--query", fmt.Sprintf("SELECT sex, age FROM events WHERE period = %d", p), "--out", out)
		if r.code != ExitOK {
			t.Fatalf("continual add --source, period %d: %s", p, r)
		}
		var man continual.Manifest
		b, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
		if err := json.Unmarshal(b, &man); err != nil {
			t.Fatal(err)
		}
		if want := 1000.0 * float64(p+1); man.NEstimate < 0.8*want || man.NEstimate > 1.2*want {
			t.Errorf("period %d: n estimate %.0f, want about %.0f", p, man.NEstimate, want)
		}
	}
}

// TestContinualHeartbeat: a long release step prints a line on a batch
// log's stderr at every interval (scaled down from 10 s to 20 ms).
func TestContinualHeartbeat(t *testing.T) {
	old := continualEvery
	continualEvery = 20 * time.Millisecond
	defer func() { continualEvery = old }()
	var b strings.Builder
	e := &env{stderr: &syncWriter{w: &b}}
	stop := heartbeat(e, "fitting")
	time.Sleep(400 * time.Millisecond)
	stop()
	if n := strings.Count(b.String(), "synth: working: fitting"); n < 3 {
		t.Errorf("%d lines in 400 ms at an interval of 20 ms, want at least 3 (20 expected):\n%s", n, b.String())
	}
	e.tty = true
	stop = heartbeat(e, "quiet")
	time.Sleep(60 * time.Millisecond)
	stop()
	if strings.Contains(b.String(), "quiet") {
		t.Error("a terminal got heartbeat lines")
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
