package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/datasets"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// run runs the command line in-process with a fake environment and returns
// the exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	code := runMain(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdataDir(t), name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update after checking):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// testdataDir is the absolute path of testdata/, usable after t.Chdir.
func testdataDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(pkgDir, "testdata")
}

var pkgDir, _ = os.Getwd()

// extract writes a shipped dataset into a temporary folder, makes it the
// working directory (so that output shows short relative paths) and
// returns the data and domain file names.
func extract(t *testing.T, name string) (data, domain string) {
	t.Helper()
	ds, err := datasets.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, domain, err = ds.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return filepath.Base(data), filepath.Base(domain)
}

func TestInspectGolden(t *testing.T) {
	tests := []struct {
		dataset string
		want    []string
	}{
		{"adult-reduced", []string{"attributes: 7\n", "universe size: 336,000 (10^5.53)\n", "n: 48,842\n", "validation: ok"}},
		{"adult", []string{"attributes: 14\n", "universe size: 641,263,392,000,000,000 (10^17.81)\n", "n: 48,842\n", "one explicit vector: 4.4 EiB"}},
	}
	for _, tt := range tests {
		t.Run(tt.dataset, func(t *testing.T) {
			data, domain := extract(t, tt.dataset)
			code, out, errs := run(t, "inspect", "--domain", domain, "--data", data)
			if code != ExitOK || errs != "" {
				t.Fatalf("inspect %s: exit %d, stderr %q", tt.dataset, code, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("inspect %s output does not contain %q", tt.dataset, w)
				}
			}
			golden(t, "inspect-"+tt.dataset+".golden", out)
		})
	}
}

// TestDemoSeededReport runs the demo with a seed on the embedded nltcs
// dataset and compares its report.json with the golden one (run times
// masked, numbers within a relative 1e-9).
func TestDemoSeededReport(t *testing.T) {
	out := t.TempDir()
	code, stdout, errs := run(t, "demo", "--dataset", "nltcs", "--seed", "1", "--out", out, "--json", "--quiet")
	if code != ExitOK {
		t.Fatalf("demo: exit %d, stderr %q", code, errs)
	}
	var outcome struct {
		Dir        string   `json:"dir"`
		Rows       int64    `json:"rows"`
		Records    int64    `json:"records"`
		Files      []string `json:"files"`
		Epsilon    float64  `json:"epsilon"`
		Spent      float64  `json:"epsilon_spent"`
		Randomness string   `json:"randomness"`
	}
	if err := json.Unmarshal([]byte(stdout), &outcome); err != nil {
		t.Fatalf("demo --json printed %q: %v", stdout, err)
	}
	// Under add/remove (the default) the rows default to the noisy n̂.
	if outcome.Dir != out || math.Abs(float64(outcome.Rows-21574)) > 0.01*21574 || outcome.Records != 21574 || outcome.Randomness != "seeded" {
		t.Errorf("outcome = %+v, want dir %s, 21574 records and as many rows within 1%%, seeded randomness", outcome, out)
	}
	if !(outcome.Spent <= outcome.Epsilon && outcome.Spent > 0.999*outcome.Epsilon) {
		t.Errorf("spent ε = %v of %v, want the budget used and not exceeded", outcome.Spent, outcome.Epsilon)
	}
	for _, f := range outcome.Files {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("output %s: %v", f, err)
		}
	}
	got, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	got = maskTimes(t, got)
	path := filepath.Join(testdataDir(t), "demo-nltcs-report.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if diff := jsonDiff("", g, w); diff != "" {
		t.Errorf("report.json differs from %s (run go test -update after checking): %s", path, diff)
	}
}

// maskTimes zeroes the wall-clock fields of a report.
func maskTimes(t *testing.T, b []byte) []byte {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r["run_time_seconds"] = 0
	if ss, ok := r["stages"].([]any); ok {
		for _, s := range ss {
			if m, ok := s.(map[string]any); ok {
				m["seconds"] = 0
			}
		}
	}
	if tr, ok := r["trace"].(map[string]any); ok {
		tr["elapsed_seconds"] = 0
		if ss, ok := tr["samples"].([]any); ok {
			for _, s := range ss {
				if m, ok := s.(map[string]any); ok {
					for k := range m {
						if strings.Contains(k, "elapsed") || strings.Contains(k, "seconds") {
							m[k] = 0
						}
					}
				}
			}
		}
	}
	out, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// jsonDiff returns the first difference between two decoded JSON values
// (numbers compared within 1e-15 plus a relative 1e-9), or "".
func jsonDiff(path string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return path + ": different objects"
		}
		for k, v := range x {
			if d := jsonDiff(path+"."+k, v, y[k]); d != "" {
				return d
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path + ": different arrays"
		}
		for i := range x {
			if d := jsonDiff(path+"["+strconv.Itoa(i)+"]", x[i], y[i]); d != "" {
				return d
			}
		}
	case float64:
		y, ok := b.(float64)
		if !ok || math.Abs(x-y) > 1e-15+1e-9*math.Max(math.Abs(x), math.Abs(y)) {
			return fmt.Sprintf("%s: %v, want %v", path, a, b)
		}
	default:
		if a != b {
			return fmt.Sprintf("%s: %v, want %v", path, a, b)
		}
	}
	return ""
}

// TestBadInputExitCodes runs inspect on every file of ingest's bad-input
// corpus: exit 65 and a message naming file, row and column.
func TestBadInputExitCodes(t *testing.T) {
	dir := filepath.Join("..", "..", "ingest", "testdata", "bad")
	b, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		File        string   `json:"file"`
		CountColumn string   `json:"count_column"`
		Row         int64    `json:"row"`
		Column      string   `json:"column"`
		Want        []string `json:"want"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d cases in the corpus", len(cases))
	}
	for _, c := range cases {
		t.Run(c.File, func(t *testing.T) {
			path := filepath.Join(dir, c.File)
			// The corpus's wants name the bad values: --show-values.
			args := []string{"inspect", "--domain", filepath.Join(dir, "domain.json"), "--data", path, "--show-values"}
			if c.CountColumn != "" {
				args = append(args, "--count-column", c.CountColumn)
			}
			code, out, errs := run(t, args...)
			if code != ExitData {
				t.Errorf("inspect %s: exit %d, want %d (stderr %q)", c.File, code, ExitData, errs)
			}
			want := append([]string{"synth inspect: " + path + ": "}, c.Want...)
			if c.Row > 0 {
				want = append(want, "row "+strconv.FormatInt(c.Row, 10))
			}
			if c.Column != "" {
				want = append(want, "column "+strconv.Quote(c.Column))
			}
			for _, w := range want {
				if !strings.Contains(errs, w) {
					t.Errorf("inspect %s: stderr %q does not contain %q", c.File, errs, w)
				}
			}
			if !strings.Contains(out, "validation: failed") {
				t.Errorf("inspect %s: stdout does not report the failed validation:\n%s", c.File, out)
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	bad := filepath.Join("..", "..", "ingest", "testdata", "bad")
	dom := filepath.Join(bad, "domain.json")
	raw := filepath.Join("..", "..", "ingest", "testdata", "raw")
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout or stderr
	}{
		{"good csv", []string{"inspect", "--domain", dom, "--data", filepath.Join(bad, "good.csv")}, ExitOK, "n: 3\n"},
		{"pre-aggregated", []string{"inspect", "--domain", dom, "--data", filepath.Join(bad, "good-counts.csv"), "--count-column", "count"}, ExitOK, "n: 7\n"},
		{"raw parquet", []string{"inspect", "--domain", filepath.Join(raw, "adult-raw-domain.json"), "--data", filepath.Join(raw, "adult-raw.parquet")}, ExitOK, "data: " + filepath.Join(raw, "adult-raw.parquet") + " (parquet)"},
		{"raw csv forced format", []string{"inspect", "--domain", filepath.Join(raw, "adult-raw-domain.json"), "--data", filepath.Join(raw, "adult-raw.csv"), "--format", "csv"}, ExitOK, "n: 2,000\n"},
		{"clamp", []string{"inspect", "--domain", dom, "--data", filepath.Join(bad, "out-of-range.csv"), "--clamp"}, ExitOK, "age: clamped into bounds: 1\n"},
		{"domain only", []string{"inspect", "--domain", dom}, ExitOK, "universe size: 2,160 (10^3.33)"},
		{"missing data file", []string{"inspect", "--domain", dom, "--data", filepath.Join(bad, "nope.csv")}, ExitNoInput, "no such file"},
		{"missing domain file", []string{"inspect", "--domain", "nope.json"}, ExitNoInput, "no such file"},
		{"data is a folder of mixed part files", []string{"inspect", "--domain", dom, "--data", bad}, ExitData, "mixed formats"},
		{"bad format", []string{"inspect", "--domain", dom, "--data", filepath.Join(bad, "good.csv"), "--format", "xlsx"}, ExitUsage, `unknown format "xlsx"`},
		{"policy without data", []string{"inspect", "--domain", dom, "--clamp"}, ExitUsage, "need --data"},
		{"no domain", []string{"inspect"}, ExitUsage, "--domain is required"},
		{"unknown flag", []string{"inspect", "--nope"}, ExitUsage, "unknown flag"},
		{"help", []string{"inspect", "--help"}, ExitOK, "Examples:\n  synth inspect --domain"},
		{"demo help", []string{"demo", "--help"}, ExitOK, "Examples:\n  synth demo"},
		{"demo unknown dataset", []string{"demo", "--dataset", "nope"}, ExitUsage, `no shipped dataset "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(t, tt.args...)
			if code != tt.code {
				t.Errorf("synth %s: exit %d, want %d (stderr %q)", strings.Join(tt.args, " "), code, tt.code, errs)
			}
			if !strings.Contains(out+errs, tt.want) {
				t.Errorf("synth %s: output does not contain %q:\n%s%s", strings.Join(tt.args, " "), tt.want, out, errs)
			}
		})
	}
}

type panicOptions struct{}

func (*panicOptions) AddFlags(*pflag.FlagSet) {}

// TestRunGuardedPanic: a panic in a command (a bug) is exit 70 with the
// panic and a stack on stderr, not the runtime's crash.
func TestRunGuardedPanic(t *testing.T) {
	register(&command{name: "zz-panic", summary: "test only", setup: setupFor[panicOptions](func(context.Context, *env, *panicOptions) error {
		panic("boom")
	})})
	t.Cleanup(func() { delete(commands, "zz-panic") })
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	if code := runGuarded(t.Context(), e, []string{"zz-panic"}); code != ExitInternal {
		t.Errorf("runGuarded(zz-panic) = %d, want %d", code, ExitInternal)
	}
	if s := errb.String(); !strings.Contains(s, "internal error") || !strings.Contains(s, "boom") || !strings.Contains(s, "goroutine") {
		t.Errorf("stderr = %q, want the internal error, the panic and a stack", s)
	}
}
