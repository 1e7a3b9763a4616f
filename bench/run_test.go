package bench

import (
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	solversFlag = flag.String("bench.solvers", "project", "comma-separated solvers the end-to-end test runs on the tiny grid")
	realFlag    = flag.Bool("bench.real", false, "also run one release of titanic and of adult end to end (about 30 s)")
)

// The synth binary the end-to-end tests run, built once on first use (not
// in TestMain, so that fuzzing workers and unit-test runs do not build it).
var (
	buildOnce sync.Once
	buildDir  string
	synthPath string
	buildErr  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// synthExe builds the synth binary with go build -o and returns its path.
func synthExe(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "synth-bench-test-"); buildErr != nil {
			return
		}
		synthPath = filepath.Join(buildDir, "synth")
		if runtime.GOOS == "windows" {
			synthPath += ".exe"
		}
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(gobin); err != nil {
			gobin = "go"
		}
		out, err := exec.Command(gobin, "build", "-o", synthPath, "../cmd/synth").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building the synth binary: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return synthPath
}

// wantHeader pins the results.csv schema: a change must be deliberate (and
// documented in README.md).
var wantHeader = []string{
	"protocol", "dataset", "workload", "universe", "queries", "solver", "setting", "neighbours",
	"epsilon", "delta", "seed", "holdout", "records", "rows",
	"max_error", "mean_error", "rmse", "p95_error", "distribution_max_error", "distribution_mean_error",
	"population_max_error", "population_mean_error", "epsilon_spent", "iterations", "trace_iterations",
	"seconds", "release_seconds", "cpu_seconds", "peak_rss_mib", "status",
	"mean_marginal_l1", "model", "kept_max_error", "kept_mean_marginal_l1",
	"read_seconds", "solve_seconds", "write_seconds", "estimate_seconds", "accounting",
}

// TestRunTiny runs the tiny grid end to end and checks the outputs.
func TestRunTiny(t *testing.T) {
	exe := synthExe(t)
	out, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cfg := &Config{Exe: exe, Protocols: []string{"tiny"}, Solvers: strings.Split(*solversFlag, ","), Out: out}
	pts, err := Grid(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != len(pts) || rep.Failed != 0 || rep.Skipped != 0 {
		t.Errorf("Run = ran %d, failed %d, skipped %d; want %d, 0, 0", rep.Ran, rep.Failed, rep.Skipped, len(pts))
	}

	// The CSV: header, one row per grid point, typed fields, status ok.
	f, err := os.Open(filepath.Join(out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], wantHeader) {
		t.Fatalf("results.csv header = %v, want %v", recs[0], wantHeader)
	}
	if got, want := len(recs)-1, len(pts); got != want {
		t.Fatalf("results.csv has %d rows, want %d (one per grid point)", got, want)
	}
	col := func(rec []string, name string) string { return rec[slices.Index(wantHeader, name)] }
	num := func(t *testing.T, rec []string, name string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(col(rec, name), 64)
		if err != nil {
			t.Errorf("column %s = %q: %v", name, col(rec, name), err)
		}
		return v
	}
	keys := map[string]bool{}
	for i := range pts {
		keys[pts[i].Key()] = true
	}
	for i, rec := range recs[1:] {
		t.Run(fmt.Sprintf("row%d", i+1), func(t *testing.T) {
			if s := col(rec, "status"); s != StatusOK {
				t.Fatalf("status = %q, want ok", s)
			}
			for _, c := range []struct {
				name string
				want string
			}{{"protocol", "tiny"}, {"dataset", "nltcs"}, {"workload", "2-way"}, {"universe", "65536"}, {"queries", "480"},
				{"setting", "tuned"}, {"neighbours", "add-remove"}, {"delta", "1e-09"}, {"seed", "1"}, {"holdout", "0"},
				{"records", "21574"}, {"population_max_error", ""}, {"population_mean_error", ""},
				{"model", "explicit"}} {
				if got := col(rec, c.name); got != c.want {
					t.Errorf("%s = %q, want %q", c.name, got, c.want)
				}
			}
			// Under add/remove (the default) the rows are the noisy n̂.
			if rows := num(t, rec, "rows"); math.Abs(rows-21574) > 0.01*21574 {
				t.Errorf("rows = %v, want 21574 within 1%% (n̂)", rows)
			}
			eps := num(t, rec, "epsilon")
			mx, mean, rmse, p95 := num(t, rec, "max_error"), num(t, rec, "mean_error"), num(t, rec, "rmse"), num(t, rec, "p95_error")
			if !(0 < mean && mean <= rmse && rmse <= mx && p95 <= mx && mx < 1) {
				t.Errorf("errors max %v, mean %v, rmse %v, p95 %v: want 0 < mean ≤ rmse ≤ max < 1, p95 ≤ max", mx, mean, rmse, p95)
			}
			// A marginal's L1 is at most 2; its cells' errors sum to at least
			// its largest, so the mean L1 is at least the mean error.
			if l1 := num(t, rec, "mean_marginal_l1"); !(l1 >= mean && l1 <= 2) {
				t.Errorf("mean_marginal_l1 = %v, want in [mean error %v, 2]", l1, mean)
			}
			if d := num(t, rec, "distribution_max_error"); !(d > 0 && d < 1) {
				t.Errorf("distribution_max_error = %v, want in (0, 1)", d)
			}
			if spent := num(t, rec, "epsilon_spent"); !(spent > 0 && spent <= eps*(1+1e-9)) {
				t.Errorf("epsilon_spent = %v, want in (0, %v]", spent, eps)
			}
			for _, name := range []string{"iterations", "trace_iterations"} {
				if v, err := strconv.Atoi(col(rec, name)); err != nil || v < 0 {
					t.Errorf("%s = %q, want a non-negative integer", name, col(rec, name))
				}
			}
			sec, rel := num(t, rec, "seconds"), num(t, rec, "release_seconds")
			if !(sec > 0 && rel > 0 && rel <= sec) {
				t.Errorf("seconds = %v, release_seconds = %v: want 0 < release_seconds ≤ seconds", sec, rel)
			}
			if v := num(t, rec, "cpu_seconds"); !(v > 0) {
				t.Errorf("cpu_seconds = %v, want > 0", v)
			}
			if v := num(t, rec, "peak_rss_mib"); runtime.GOOS == "linux" && !(v > 1 && v < 1<<14) {
				t.Errorf("peak_rss_mib = %v, want a plausible size in MiB", v)
			}
		})
	}
	rs, err := ReadResults(strings.NewReader(readFile(t, filepath.Join(out, ResultsFile))), ResultsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if !keys[r.Key()] {
			t.Errorf("row %s is not a grid point", r.Key())
		}
		delete(keys, r.Key())
	}
	if len(keys) > 0 {
		t.Errorf("grid points without a row: %v", keys)
	}

	// The summary and the plots.
	sum := readFile(t, filepath.Join(out, SummaryFile))
	for _, want := range []string{"## tiny", "| 0.5 | ", "| 1 | ", "project (tuned)", "not private", "tiny-max-error.svg"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary.md does not contain %q:\n%s", want, sum)
		}
	}
	plots := []string{"tiny-max-error.svg", "tiny-mean-error.svg", "tiny-marginal-l1.svg", "tiny-seconds.svg"}
	for _, name := range plots {
		checkSVG(t, filepath.Join(out, name))
	}
	if !slices.Equal(rep.Files, append([]string{ResultsFile, SummaryFile}, plots...)) {
		t.Errorf("Report.Files = %v", rep.Files)
	}

	// Nothing is left in the temporary folder: inputs and release folders
	// are removed.
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in the temporary folder: %v", left)
	}

	// Again: refused without --resume or --force; with --resume nothing runs.
	if _, err := Run(context.Background(), cfg); !isConfigError(err) {
		t.Errorf("second Run without Resume: err = %v, want a ConfigError", err)
	}
	cfg.Resume = true
	rep, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != 0 || rep.Skipped != len(pts) || len(rep.Results) != len(pts) {
		t.Errorf("resumed Run = ran %d, skipped %d, %d results; want 0, %d, %d", rep.Ran, rep.Skipped, len(rep.Results), len(pts), len(pts))
	}
}

// TestResumeRerunsFailed: with Resume, a failed row of a grid point is
// replaced by a new run, ok rows are kept.
func TestResumeRerunsFailed(t *testing.T) {
	out := t.TempDir()
	cfg := &Config{Exe: synthExe(t), Protocols: []string{"tiny"}, Solvers: []string{"project"}, Out: out, Resume: true}
	pts, err := Grid(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := pts[0].Protocol.Shape()
	if err != nil {
		t.Fatal(err)
	}
	okRow := newResult(&pts[0], sh)
	okRow.MaxError, okRow.MeanError, okRow.RMSE, okRow.Seconds, okRow.Status = 0.5, 0.25, 0.3, 1, StatusOK
	failed := newResult(&pts[1], sh)
	failed.Status = "exit 70: boom"
	other := newResult(&pts[1], sh)
	other.Protocol, other.Status = "elsewhere", "timeout after 1s" // not in this grid: kept
	writeResultsFile(t, filepath.Join(out, ResultsFile), okRow, failed, other)

	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != 1 || rep.Skipped != 1 || rep.Failed != 0 {
		t.Errorf("Run = ran %d, skipped %d, failed %d; want 1, 1, 0", rep.Ran, rep.Skipped, rep.Failed)
	}
	rs, err := ReadResults(strings.NewReader(readFile(t, filepath.Join(out, ResultsFile))), ResultsFile)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Protocol+" "+formatFloat(r.Epsilon)+" "+r.Status)
	}
	want := []string{"tiny 0.5 ok", "elsewhere 1 timeout after 1s", "tiny 1 ok"}
	if !slices.Equal(got, want) {
		t.Errorf("results after resume = %q, want %q", got, want)
	}
	if rs[0].MaxError != 0.5 {
		t.Errorf("kept row changed: max_error %v, want 0.5", rs[0].MaxError)
	}
}

// TestRunHoldout: the population columns are filled with a holdout.
func TestRunHoldout(t *testing.T) {
	out := t.TempDir()
	rep, err := Run(context.Background(), &Config{Exe: synthExe(t), Protocols: []string{"tiny"}, Solvers: []string{"project"},
		Epsilons: []float64{1}, Holdout: 0.25, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || !rep.Results[0].OK() {
		t.Fatalf("results = %+v, want one ok run", rep.Results)
	}
	r := rep.Results[0]
	if !(r.PopMaxError > 0 && r.PopMeanError > 0 && r.PopMeanError <= r.PopMaxError) {
		t.Errorf("population errors max %v, mean %v: want 0 < mean ≤ max", r.PopMaxError, r.PopMeanError)
	}
	if !(r.Records > 0 && r.Records < 21574) {
		t.Errorf("records = %d, want fewer than the 21,574 of nltcs after a 25%% holdout", r.Records)
	}
	if sum := readFile(t, filepath.Join(out, SummaryFile)); !strings.Contains(sum, "population max") {
		t.Errorf("summary.md has no population columns:\n%s", sum)
	}
}

// TestRunFailures: a release that fails or times out is a row with its
// status; the grid goes on.
func TestRunFailures(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a shell script as the synth binary")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake-synth")
	script := "#!/bin/sh\nif [ \"$1\" = version ]; then echo 'synth fake'; exit 0; fi\n" +
		"for a in \"$@\"; do if [ \"$a\" = 0.5 ]; then exec sleep 5; fi; done\n" +
		"echo 'some progress' >&2\necho 'synth release: budget refused: ε too small' >&2\nexit 77\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	rep, err := Run(context.Background(), &Config{Exe: fake, Protocols: []string{"tiny"}, Solvers: []string{"project"},
		Timeout: 500 * time.Millisecond, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != 2 || rep.Failed != 2 {
		t.Fatalf("Run = ran %d, failed %d; want 2, 2", rep.Ran, rep.Failed)
	}
	want := []string{"timeout after 500ms", "exit 77: synth release: budget refused: ε too small"}
	for i, r := range rep.Results {
		if r.Status != want[i] {
			t.Errorf("run %d status = %q, want %q", i, r.Status, want[i])
		}
		if !math.IsNaN(r.MaxError) || math.IsNaN(r.Seconds) {
			t.Errorf("run %d: max_error %v, seconds %v; want empty and measured", i, r.MaxError, r.Seconds)
		}
	}
	if rep.Results[0].Seconds > 4 {
		t.Errorf("timed-out run took %v s: the child was not stopped", rep.Results[0].Seconds)
	}
	sum := readFile(t, filepath.Join(out, SummaryFile))
	for _, w := range []string{"| 0.5 | failed |", "Failed runs", "exit 77: synth release: budget refused"} {
		if !strings.Contains(sum, w) {
			t.Errorf("summary.md does not contain %q:\n%s", w, sum)
		}
	}
	if len(rep.Files) != 2 {
		t.Errorf("files = %v, want no plots without a successful run", rep.Files)
	}
}

func isConfigError(err error) bool {
	var ce *ConfigError
	return errors.As(err, &ce)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeResultsFile(t *testing.T, path string, rs ...*Result) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteResults(f, rs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkSVG checks that path is a well-formed SVG document.
func checkSVG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Errorf("%s: not well-formed XML: %v", path, err)
			return
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("%s: root element %q, want svg", path, root)
	}
}

// TestResumeLegacyFile: --resume on a results.csv written before the
// mean_marginal_l1 and model columns keeps its rows (those fields unknown),
// runs the missing point and rewrites the file in the current schema.
func TestResumeLegacyFile(t *testing.T) {
	out := t.TempDir()
	cfg := &Config{Exe: synthExe(t), Protocols: []string{"tiny"}, Solvers: []string{"project"}, Out: out, Resume: true}
	pts, err := Grid(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := pts[0].Protocol.Shape()
	if err != nil {
		t.Fatal(err)
	}
	old := newResult(&pts[0], sh)
	old.MaxError, old.MeanError, old.RMSE, old.Seconds, old.Status = 0.5, 0.25, 0.3, 1, StatusOK
	path := filepath.Join(out, ResultsFile)
	writeLegacyResults(t, path, old)

	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != 1 || rep.Skipped != 1 || rep.Failed != 0 {
		t.Errorf("Run = ran %d, skipped %d, failed %d; want 1, 1, 0", rep.Ran, rep.Skipped, rep.Failed)
	}
	text := readFile(t, path)
	if first, _, _ := strings.Cut(text, "\n"); first != strings.Join(wantHeader, ",") {
		t.Errorf("rewritten header = %q, want the current schema", first)
	}
	rs, err := ReadResults(strings.NewReader(text), ResultsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d rows after resume, want 2", len(rs))
	}
	if rs[0].MaxError != 0.5 || !math.IsNaN(rs[0].MeanMarginalL1) || rs[0].Model != "" {
		t.Errorf("kept legacy row: max %v, mean_marginal_l1 %v, model %q; want 0.5, unknown, unknown",
			rs[0].MaxError, rs[0].MeanMarginalL1, rs[0].Model)
	}
	if !(rs[1].MeanMarginalL1 > 0) || rs[1].Model != "explicit" {
		t.Errorf("new row: mean_marginal_l1 %v, model %q; want positive, explicit", rs[1].MeanMarginalL1, rs[1].Model)
	}
	// The summary shows the L1 where it is known and — for the legacy row.
	if sum := readFile(t, filepath.Join(out, SummaryFile)); !strings.Contains(sum, "mean marginal L1") {
		t.Errorf("summary.md has no mean marginal L1:\n%s", sum)
	}
}

// writeLegacyResults writes rs in the first results schema: the columns up
// to status.
func writeLegacyResults(t *testing.T, path string, rs ...*Result) {
	t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.Write(Columns()[:legacyColumns]); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := w.Write(r.record()[:legacyColumns]); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunRealProtocols runs one point of titanic and of adult (the factored
// model; adult takes 10–20 s and about 2 GiB) with -bench.real.
func TestRunRealProtocols(t *testing.T) {
	if !*realFlag {
		t.Skip("slow: run with -bench.real")
	}
	out := t.TempDir()
	rep, err := Run(context.Background(), &Config{Exe: synthExe(t), Protocols: []string{"titanic", "adult"},
		Solvers: []string{"project"}, Epsilons: []float64{1}, Seeds: 1, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2", len(rep.Results))
	}
	for _, r := range rep.Results {
		if !r.OK() || r.Model != "factored" || !(r.MeanMarginalL1 >= r.MeanError && r.MeanMarginalL1 <= 2) || r.Universe <= 0 {
			t.Errorf("%s: status %q, model %q, mean_marginal_l1 %v, universe %d; want ok, factored, in [mean error, 2], positive",
				r.Protocol, r.Status, r.Model, r.MeanMarginalL1, r.Universe)
		}
		t.Logf("%s: max %v, mean %v, mean marginal L1 %v, %.1f s, %.0f MiB", r.Protocol, r.MaxError, r.MeanError, r.MeanMarginalL1, r.Seconds, r.PeakRSSMiB)
	}
	sum := readFile(t, filepath.Join(out, SummaryFile))
	for _, w := range []string{"## titanic", "## adult", "### synth against AIM (private-pgm)", "641,263,392,000,000,000 (6.4e17) cells", "| factored |"} {
		if !strings.Contains(sum, w) {
			t.Errorf("summary.md does not contain %q", w)
		}
	}
}

// TestErrorLine: a failed run's status is the CLI's error message, also when
// a goroutine stack follows it (an internal error, exit 70), whose last line
// names a source file of the build machine.
func TestErrorLine(t *testing.T) {
	for _, c := range []struct{ stderr, want string }{
		{"some progress\nsynth release: budget refused: ε too small\n", "synth release: budget refused: ε too small"},
		{"synth: internal error (a bug, please report it with this message): bin=40, n=40\n\ngoroutine 1 [running]:\nmain.main()\n\t/build/cmd/synth/main.go:94 +0x1a6\n",
			"synth: internal error (a bug, please report it with this message): bin=40, n=40"},
		{"signal: killed\n", "signal: killed"},
		{"", ""},
	} {
		if got := errorLine(c.stderr); got != c.want {
			t.Errorf("errorLine(%q) = %q, want %q", c.stderr, got, c.want)
		}
	}
}
