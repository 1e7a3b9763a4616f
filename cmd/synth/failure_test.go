package main

// Failure tests: every way a release can go wrong gives its documented exit
// code and a clear message, and leaves no output behind.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpsynth/synth/release"
)

// badDir is ingest's bad-input corpus.
var badDir = filepath.Join(pkgDir, "..", "..", "ingest", "testdata", "bad")

// rawDir is ingest's raw test table (strings, integers, reals, nulls).
var rawDir = filepath.Join(pkgDir, "..", "..", "ingest", "testdata", "raw")

// fifo returns a named pipe that no one writes to: opening it for reading
// blocks forever, so a run that must fail before it reads its data shows,
// by returning at all, that it never opened it.
func fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "private.csv")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	return path
}

// inProcess runs a command line in this process, like run, and returns
// its result. A run that blocks (on opening a FIFO) for 30 seconds fails the
// test: the writing end is opened to release it.
func inProcess(t *testing.T, args ...string) result {
	t.Helper()
	ch := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
		code := runMain(context.Background(), e, args)
		ch <- result{code: code, stdout: out.String(), stderr: errb.String()}
	}()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
	}
	// Release a reader blocked on a FIFO among the arguments.
	for _, a := range args {
		if fi, err := os.Stat(a); err == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
			if f, err := os.OpenFile(a, os.O_WRONLY, 0); err == nil {
				f.Close()
			}
		}
	}
	r := <-ch
	t.Fatalf("synth %s: blocked for 30 s, reading its data (a FIFO) when it should not have: %s", strings.Join(args, " "), r)
	return r
}

// noOutput checks that the folder out either does not exist or holds
// exactly the files keep (those that were there before the run).
func noOutput(t *testing.T, out string, keep ...string) {
	t.Helper()
	if _, err := os.Stat(out); errors.Is(err, fs.ErrNotExist) && len(keep) == 0 {
		return
	}
	wantFiles(t, out, keep...)
}

// TestReleaseBadInputs runs synth release on every file of ingest's
// bad-input corpus: exit 65, a message naming file, row and column, and
// nothing new in the output folder (not even a temporary file).
func TestReleaseBadInputs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(badDir, "cases.json"))
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
	domain := filepath.Join(badDir, "domain.json")
	for _, c := range cases {
		t.Run(c.File, func(t *testing.T) {
			out := t.TempDir()
			if err := os.WriteFile(filepath.Join(out, "keep.txt"), []byte("not ours"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(badDir, c.File)
			args := []string{"release", "--data", path, "--domain", domain, "--marginals", "2",
				"--epsilon", "1", "--out", out, "--show-values"}
			if c.CountColumn != "" {
				args = append(args, "--count-column", c.CountColumn)
			}
			r := inProcess(t, args...)
			if r.code != ExitData {
				t.Errorf("release %s: %s\nwant exit %d", c.File, r, ExitData)
			}
			want := append([]string{"synth release: " + path + ": "}, c.Want...)
			if c.Row > 0 {
				want = append(want, "row "+strconv.FormatInt(c.Row, 10))
			}
			if c.Column != "" {
				want = append(want, "column "+strconv.Quote(c.Column))
			}
			for _, w := range want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("release %s: stderr %q does not contain %q", c.File, r.stderr, w)
				}
			}
			if r.stdout != "" {
				t.Errorf("release %s: stdout %q, want nothing", c.File, r.stdout)
			}
			noOutput(t, out, "keep.txt")
		})
	}
}

// TestReleaseOutputRefused: an output folder that cannot be used gives
// exit 73 before the data is opened (the data is a FIFO) and changes
// nothing.
func TestReleaseOutputRefused(t *testing.T) {
	data := fifo(t)
	domain := filepath.Join(rawDir, "adult-raw-domain.json")
	dir := t.TempDir()
	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	earlier := filepath.Join(dir, "earlier")
	if err := os.Mkdir(earlier, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{release.SyntheticFile, release.ManifestFile} {
		if err := os.WriteFile(filepath.Join(earlier, f), []byte("earlier"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, out, want string
	}{
		// As root, permission bits are not enforced; a parent that is a
		// regular file fails for everyone.
		{"parent is a file", filepath.Join(regular, "out"), "not a directory"},
		{"out is a file", regular, "not a directory"},
		{"earlier release", earlier, "already holds a release"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := inProcess(t, "release", "--data", data, "--domain", domain, "--marginals", "1",
				"--epsilon", "1", "--out", tt.out)
			if r.code != ExitCantOut || !strings.Contains(r.stderr, "synth release: cannot create output") || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("release --out %s: %s\nwant exit %d and %q", tt.out, r, ExitCantOut, tt.want)
			}
		})
	}
	if b, err := os.ReadFile(regular); err != nil || string(b) != "x" {
		t.Errorf("the regular file now holds %q, %v", b, err)
	}
	for _, f := range []string{release.SyntheticFile, release.ManifestFile} {
		if b, err := os.ReadFile(filepath.Join(earlier, f)); err != nil || string(b) != "earlier" {
			t.Errorf("the earlier release's %s now holds %q, %v", f, b, err)
		}
	}
	wantFiles(t, earlier, release.SyntheticFile, release.ManifestFile)
}

// TestReleaseBudgetRefused: δ = 0 asks for pure DP, which the zCDP
// measurements of the project solver cannot give: the ledger refuses the
// plan before the data is opened (the data is a FIFO, whose opening would
// block) and before the output folder is made. Exit 77.
// The same holds for every Gaussian-based solver (dpam, mwem tuned).
func TestReleaseBudgetRefused(t *testing.T) {
	for _, solver := range []string{"project", "dpam", "mwem"} {
		data := fifo(t)
		out := filepath.Join(t.TempDir(), "out")
		r := inProcess(t, "release", "--data", data, "--domain", filepath.Join(rawDir, "adult-raw-domain.json"),
			"--marginals", "2", "--epsilon", "1", "--delta", "0", "--solver", solver, "--out", out)
		if r.code != ExitBudget {
			t.Fatalf("release --delta 0 --solver %s: %s\nwant exit %d", solver, r, ExitBudget)
		}
		for _, w := range []string{"synth release: privacy: charge", "refused", "the budget is pure (δ = 0)"} {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("--solver %s: stderr %q does not contain %q", solver, r.stderr, w)
			}
		}
		noOutput(t, out)
	}
}

// TestReleasePaperAddRemove: the paper setting of project measures no
// marginal table, so under add/remove (the default) it spends a share of its
// budget on a noisy record count, which the manifest lists first.
func TestReleasePaperAddRemove(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r := inProcess(t, "release", "--data", filepath.Join(rawDir, "adult-raw.csv"), "--domain", filepath.Join(rawDir, "adult-raw-domain.json"),
		"--marginals", "2", "--epsilon", "1", "--setting", "paper", "--seed", "1", "--out", out)
	if r.code != ExitOK {
		t.Fatalf("release --setting paper: %s", r)
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := release.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Privacy.Charges) == 0 || !strings.Contains(m.Privacy.Charges[0].Label, "discrete Gaussian on the record count (ℓ2 sensitivity 1 counts") {
		t.Errorf("manifest charges %+v: want the record count's first", m.Privacy.Charges)
	}
	if m.Privacy.Relation != "add-remove" || m.Privacy.Unit == nil || m.Privacy.Unit.MaxRows != 1 {
		t.Errorf("manifest privacy %+v: want add-remove of one row", m.Privacy)
	}
}

// TestReleaseInterrupted starts a release of 10^7 rows, which spends about
// half a second or more writing synthetic.parquet, polls (every
// millisecond) for its temporary file, then
// interrupts it (SIGINT: exit 130, nothing left at all) or kills it
// (SIGKILL: no synthetic.parquet and no manifest.json; the temporary file
// may stay, under a name no reader mistakes for an output).
func TestReleaseInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10 million rows; skipped with -short")
	}
	dir := t.TempDir()
	data, domain := extractTo(t, "adult-reduced", dir)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strconv.Itoa(int(sig)))
			cmd := exec.Command(synthBinary(t), "release", "--data", data, "--domain", domain, "--marginals", "1",
				"--epsilon", "1", "--rows", "10000000", "--out", out, "--quiet")
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			deadline := time.After(2 * time.Minute)
			tmp := filepath.Join(out, "."+release.SyntheticFile+".tmp-*")
		wait:
			for {
				select {
				case err := <-done:
					t.Fatalf("the release ended (%v) before %s appeared; stderr %q", err, tmp, errb.String())
				case <-deadline:
					cmd.Process.Kill()
					<-done
					t.Fatalf("no %s after 2 minutes", tmp)
				default:
				}
				if m, _ := filepath.Glob(tmp); len(m) > 0 {
					break wait
				}
				time.Sleep(time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running a minute after %v", sig)
			}
			code := cmd.ProcessState.ExitCode()
			switch sig {
			case syscall.SIGINT:
				if code != ExitCanceled || !strings.Contains(errb.String(), "interrupted") {
					t.Errorf("after SIGINT: %v, exit %d, stderr %q; want exit %d", err, code, errb.String(), ExitCanceled)
				}
				noOutput(t, out)
			case syscall.SIGKILL:
				if code != -1 {
					t.Errorf("after SIGKILL: exit %d, want killed", code)
				}
				for _, f := range release.Outputs {
					if _, err := os.Lstat(filepath.Join(out, f)); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("after SIGKILL %s is there (%v)", f, err)
					}
				}
			}
		})
	}
}

// TestBinaryExitCodes checks that the process itself exits with the codes
// the in-process tests above see (main is os.Exit(runMain(...))).
func TestBinaryExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	domain := filepath.Join(badDir, "domain.json")
	bad := filepath.Join(badDir, "unknown-category.csv")
	out := filepath.Join(t.TempDir(), "out")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--data", bad, "--marginals", "1", "--epsilon", "1"}, ExitData, bad + `: row 3, column "sex"`},
		{[]string{"--data", fifo(t), "--marginals", "1", "--epsilon", "1", "--delta", "0"}, ExitBudget, "the budget is pure"},
		{[]string{"--data", bad, "--marginals", "1"}, ExitUsage, "--epsilon is required"},
	}
	for _, tt := range tests {
		args := append([]string{"release", "--domain", domain, "--out", out}, tt.args...)
		r := runBinary(t, "", args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("synth %s: %s\nwant exit %d and %q", strings.Join(args, " "), r, tt.code, tt.want)
		}
		noOutput(t, out)
	}
}

// TestReleaseMissingInput: a missing input file is exit 66, and the output
// folder made for the run is removed again.
func TestReleaseMissingInput(t *testing.T) {
	data, domain := filepath.Join(rawDir, "adult-raw.csv"), filepath.Join(rawDir, "adult-raw-domain.json")
	dir := t.TempDir()
	nope := filepath.Join(dir, "nope")
	tests := []struct {
		name string
		args []string
	}{
		{"data", []string{"--data", nope, "--domain", domain, "--marginals", "1"}},
		{"domain", []string{"--data", data, "--domain", nope, "--marginals", "1"}},
		{"workload", []string{"--data", data, "--domain", domain, "--workload", nope}},
		{"config", []string{"--config", nope, "--data", data, "--domain", domain, "--marginals", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+tt.name)
			args := append([]string{"release", "--epsilon", "1", "--out", out}, tt.args...)
			r := inProcess(t, args...)
			if r.code != ExitNoInput || !strings.Contains(r.stderr, nope+": no such file") {
				t.Errorf("synth %s: %s\nwant exit %d naming %s", strings.Join(args, " "), r, ExitNoInput, nope)
			}
			noOutput(t, out)
		})
	}
}

// TestReleaseUsageErrors: bad command lines are exit 2 with a pointer to
// --help, found before the data is opened (the data is a FIFO).
func TestReleaseUsageErrors(t *testing.T) {
	data := fifo(t)
	domain := filepath.Join(rawDir, "adult-raw-domain.json")
	out := filepath.Join(t.TempDir(), "out")
	base := []string{"--data", data, "--domain", domain, "--out", out}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no epsilon", []string{"--marginals", "1"}, "--epsilon is required"},
		{"unknown flag", []string{"--marginals", "1", "--epsilon", "1", "--nope"}, "unknown flag: --nope"},
		{"argument", []string{"--marginals", "1", "--epsilon", "1", "extra"}, `unexpected arguments ["extra"]`},
		{"no workload", []string{"--epsilon", "1"}, "no workload"},
		{"two workloads", []string{"--marginals", "1", "--workload", domain, "--epsilon", "1"}, "either --workload or --marginals"},
		{"negative epsilon", []string{"--marginals", "1", "--epsilon", "-1"}, "--epsilon must be > 0"},
		{"zero epsilon", []string{"--marginals", "1", "--epsilon", "0"}, "--epsilon must be > 0"},
		{"NaN epsilon", []string{"--marginals", "1", "--epsilon", "NaN"}, "--epsilon must be > 0"},
		{"delta 1", []string{"--marginals", "1", "--epsilon", "1", "--delta", "1"}, "must be in [0, 1)"},
		{"not a number", []string{"--marginals", "1", "--epsilon", "one"}, `invalid argument "one"`},
		{"unknown solver", []string{"--marginals", "1", "--epsilon", "1", "--solver", "nope"}, `unknown solver "nope"`},
		{"unknown setting", []string{"--marginals", "1", "--epsilon", "1", "--setting", "nope"}, "nope"},
		{"sampling", []string{"--marginals", "1", "--epsilon", "1", "--sampling", "nope"}, "--sampling"},
		{"integer values", []string{"--marginals", "1", "--epsilon", "1", "--integer-values", "nope"}, "--integer-values"},
		{"negative rows", []string{"--marginals", "1", "--epsilon", "1", "--rows", "-1"}, "--rows must be positive"},
		{"holdout 1", []string{"--marginals", "1", "--epsilon", "1", "--holdout", "1"}, "--holdout must be in [0, 1)"},
		{"seed", []string{"--marginals", "1", "--epsilon", "1", "--seed", "x"}, "--seed must be a non-negative integer"},
		{"log format", []string{"--marginals", "1", "--epsilon", "1", "--log-format", "xml"}, "--log-format must be text or json"},
		{"neighbours", []string{"--marginals", "1", "--epsilon", "1", "--neighbours", "nope"}, "--neighbours must be"},
		{"accounting", []string{"--marginals", "1", "--epsilon", "1", "--accounting", "pld"}, "--accounting must be auto, exact or zcdp"},
		{"too many marginals", []string{"--marginals", "9", "--epsilon", "1"}, "--marginals"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"release"}, base...), tt.args...)
			r := inProcess(t, args...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tt.want) || !strings.Contains(r.stderr, "Run 'synth release --help' for usage.") {
				t.Errorf("synth %s: %s\nwant exit %d and %q", strings.Join(args, " "), r, ExitUsage, tt.want)
			}
			noOutput(t, out)
		})
	}
	// The other pipeline command.
	r := inProcess(t, "eval", "--data", data, "--domain", domain, "--marginals", "1")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "no synthetic file (--synthetic)") {
		t.Errorf("eval without --synthetic: %s", r)
	}
}

// TestReleaseConfigFile: settings come from --config, flags override them,
// an unknown key is a usage error, and the file is hashed into the manifest.
func TestReleaseConfigFile(t *testing.T) {
	data, domain := filepath.Join(rawDir, "adult-raw.csv"), filepath.Join(rawDir, "adult-raw-domain.json")
	dir := t.TempDir()
	write := func(name string, v map[string]any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.json", map[string]any{
		"data": data, "domain": domain, "marginals": 1, "epsilon": 0.25, "delta": 1e-7,
		"seed": "4", "json": true, "quiet": true, "rows": 100,
	})
	bad := write("bad.json", map[string]any{"data": data, "epsilon": 1, "epsilonn": 2})

	r := inProcess(t, "release", "--config", bad, "--out", filepath.Join(dir, "bad-out"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, `unknown setting "epsilonn"`) {
		t.Errorf("config with an unknown key: %s", r)
	}
	noOutput(t, filepath.Join(dir, "bad-out"))

	out := filepath.Join(dir, "out")
	r = inProcess(t, "release", "--config", good, "--epsilon", "2", "--rows", "300", "--out", out)
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("release --config: %s\nwant success and nothing on stderr (quiet from the file)", r)
	}
	var oc release.Outcome
	jsonLine(t, r.stdout, &oc) // json from the file
	if oc.Epsilon != 2 || oc.Delta != 1e-7 || oc.Rows != 300 || oc.Randomness != "seeded" {
		t.Errorf("outcome = %+v, want ε = 2 and 300 rows (flags) with δ = 1e-7 and a seed (file)", oc)
	}
	man := checkManifest(t, out, 2, 1e-7, &oc, -1)
	var found bool
	for _, in := range man.Inputs {
		if in.Role == "config" {
			found = in.Path == good && in.SHA256 == sha256Of(t, good)
		}
	}
	if !found {
		t.Errorf("manifest inputs %+v: no config entry for %s with its SHA-256", man.Inputs, good)
	}
	rep := readReport(t, filepath.Join(out, release.ReportJSONFile))
	if len(rep.Queries) != 16+7+15+1+5+2+2+10 { // 1-way marginals of the raw domain, null cell included
		t.Errorf("report has %d queries, want the 1-way marginals from the config file", len(rep.Queries))
	}
}

// TestOutputModes: --json prints exactly one JSON line on stdout, --quiet
// prints nothing on stderr on success (even with --seed), and with
// --log-format json every line on stderr is JSON.
func TestOutputModes(t *testing.T) {
	data, domain := filepath.Join(rawDir, "adult-raw.csv"), filepath.Join(rawDir, "adult-raw-domain.json")
	dir := t.TempDir()
	base := []string{"release", "--data", data, "--domain", domain, "--marginals", "1", "--epsilon", "1", "--seed", "2", "--rows", "2000"}

	r := inProcess(t, append(base, "--out", filepath.Join(dir, "json"), "--json")...)
	if r.code != ExitOK {
		t.Fatalf("release --json: %s", r)
	}
	var oc release.Outcome
	jsonLine(t, r.stdout, &oc)
	if oc.Errors == nil || oc.Rows != 2000 {
		t.Errorf("--json outcome = %+v, want 2000 rows and the internal errors", oc)
	}

	r = inProcess(t, append(base, "--out", filepath.Join(dir, "quiet"), "--quiet")...)
	if r.code != ExitOK || r.stderr != "" || r.stdout != "" {
		t.Errorf("release --quiet: %s\nwant nothing on stdout or stderr", r)
	}
	// Notes of changes made to the data still reach the operator: an age
	// of 120 is out of the declared bins and --clamp moves it.
	raw, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(raw), "\n", 3)
	fields := strings.Split(lines[1], ",")
	fields[len(fields)-1] = "120"
	clampData := filepath.Join(dir, "clamp.csv")
	if err := os.WriteFile(clampData, []byte(lines[0]+"\n"+strings.Join(fields, ",")+"\n"+lines[2]), 0o644); err != nil {
		t.Fatal(err)
	}
	qbase := []string{"release", "--data", clampData, "--domain", domain, "--marginals", "1", "--epsilon", "1", "--seed", "2"}
	r = inProcess(t, append(qbase, "--out", filepath.Join(dir, "quiet-clamp"), "--quiet", "--clamp")...)
	if r.code != ExitOK || r.stdout != "" || !strings.Contains(r.stderr, "synth: note: ") || !strings.Contains(r.stderr, "clamped into the declared bounds") {
		t.Errorf("release --quiet --clamp: %s\nwant a note of the repairs on stderr and nothing on stdout", r)
	}

	r = inProcess(t, append(base, "--out", filepath.Join(dir, "logs"), "--verbose", "--log-format", "json")...)
	if r.code != ExitOK {
		t.Fatalf("release --log-format json: %s", r)
	}
	recs := logRecords(t, r.stderr)
	var msgs []string
	for _, rec := range recs {
		msgs = append(msgs, rec["msg"].(string))
	}
	for _, w := range []string{"--seed given: seeded: not private against anyone who knows the seed", "budget checked", "reading data", "writing"} {
		found := false
		for _, m := range msgs {
			found = found || m == w
		}
		if !found {
			t.Errorf("--log-format json: no record %q in %q", w, msgs)
		}
	}

	r = inProcess(t, "eval", "--data", data, "--domain", domain, "--marginals", "1",
		"--synthetic", filepath.Join(dir, "json", release.SyntheticFile), "--json")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("eval --json: %s", r)
	}
	var eo release.EvalOutcome
	jsonLine(t, r.stdout, &eo)
	if !metricsNear(*oc.Errors, eo.Errors, 1e-12) {
		t.Errorf("eval errors %+v, release errors %+v", eo.Errors, *oc.Errors)
	}
}
