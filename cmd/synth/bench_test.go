package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchDryRun(t *testing.T) {
	code, out, errs := run(t, "bench", "--dry-run", "--protocols", "tiny", "--solvers", "project", "--settings", "tuned,paper")
	if code != ExitOK {
		t.Fatalf("bench --dry-run: exit %d, stderr %q", code, errs)
	}
	for _, w := range []string{"tiny: dataset nltcs, 16 attributes, 65,536 cells", "tiny 2-way project/paper ε=1 δ=1e-9 seed=1\n", "4 runs, 4 to do\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("bench --dry-run output does not contain %q:\n%s", w, out)
		}
	}
}

func TestBenchDryRunResume(t *testing.T) {
	dir := t.TempDir()
	// A results file with the header only: nothing done yet.
	header := "protocol,dataset,workload,universe,queries,solver,setting,neighbours,epsilon,delta,seed,holdout,records,rows," +
		"max_error,mean_error,rmse,p95_error,distribution_max_error,distribution_mean_error,population_max_error," +
		"population_mean_error,epsilon_spent,iterations,trace_iterations,seconds,release_seconds,cpu_seconds,peak_rss_mib,status\n"
	row := "tiny,nltcs,2-way,65536,480,project,tuned,add-remove,0.5,1e-09,1,0,21574,21574,0.01,0.003,0.004,0.007,0.01,0.003,,,0.5,0,281,0.9,0.8,0.9,64,ok\n"
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), []byte(header+row), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "bench", "--dry-run", "--resume", "--protocols", "tiny", "--solvers", "project", "--out", dir)
	if code != ExitOK || !strings.Contains(out, "seed=1 (done)\n") || !strings.HasSuffix(out, "2 runs, 1 to do\n") {
		t.Errorf("bench --dry-run --resume: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), []byte("protocol,oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = run(t, "bench", "--dry-run", "--resume", "--protocols", "tiny", "--solvers", "project", "--out", dir)
	if code != ExitData || !strings.Contains(errs, "results.csv: line 1") {
		t.Errorf("bench --resume on a bad results.csv: exit %d, stderr %q; want %d naming the file and line", code, errs, ExitData)
	}
}

func TestBenchUsage(t *testing.T) {
	tests := [][]string{
		{"bench", "--dry-run", "--protocols", "adult-full"},
		{"bench", "--dry-run", "--solvers", "aim"},
		{"bench", "--dry-run", "--eps", "0"},
		{"bench", "--dry-run", "--neighbours", "swap"},
		{"bench", "extra"},
	}
	for _, args := range tests {
		if code, _, errs := run(t, args...); code != ExitUsage {
			t.Errorf("synth %s: exit %d, stderr %q; want %d", strings.Join(args, " "), code, errs, ExitUsage)
		}
	}
}

// TestBenchDryRunResumeRelabels: a row of titanic from before it took all 9
// attributes (979,776 cells) is a done point of titanic-no-age, not of
// titanic.
func TestBenchDryRunResumeRelabels(t *testing.T) {
	dir := t.TempDir()
	header := "protocol,dataset,workload,universe,queries,solver,setting,neighbours,epsilon,delta,seed,holdout,records,rows," +
		"max_error,mean_error,rmse,p95_error,distribution_max_error,distribution_mean_error,population_max_error," +
		"population_mean_error,epsilon_spent,iterations,trace_iterations,seconds,release_seconds,cpu_seconds,peak_rss_mib,status\n"
	row := "titanic,titanic,3-way,979776,20914,project,tuned,add-remove,1,1e-09,1,0,1304,1304,0.06,0.001,0.004,0.007,0.06,0.001,,,1,0,281,0.9,0.8,0.9,64,ok\n"
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), []byte(header+row), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "bench", "--dry-run", "--resume", "--protocols", "titanic,titanic-no-age", "--solvers", "project",
		"--eps", "1", "--seeds", "1", "--out", dir)
	if code != ExitOK || !strings.Contains(out, "titanic 3-way project/tuned ε=1 δ=1e-9 seed=1\n") ||
		!strings.Contains(out, "titanic-no-age 3-way project/tuned ε=1 δ=1e-9 seed=1 (done)\n") {
		t.Errorf("bench --dry-run --resume: exit %d, stdout %q, stderr %q; want titanic to do and titanic-no-age done", code, out, errs)
	}
}
