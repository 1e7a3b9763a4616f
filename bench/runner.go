package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/release"
)

// Output file names inside Config.Out.
const (
	ResultsFile = "results.csv"
	SummaryFile = "summary.md"
)

// Report is what a finished Run did.
type Report struct {
	// Results are every row of results.csv: kept from an earlier run
	// (Resume) and new.
	Results []*Result
	// Ran, Skipped and Failed count the points of this invocation.
	Ran, Skipped, Failed int
	// Files are the files written, relative to Config.Out.
	Files []string
}

// Run runs the grid cfg asks for, one release at a time, appending each
// result to results.csv as it finishes, then writes summary.md and the
// plots from every row of results.csv. A failed or timed-out run is
// recorded with its status and does not stop the grid; an interruption
// (ctx) stops it, keeping the finished rows, and returns ctx.Err().
func Run(ctx context.Context, cfg *Config) (*Report, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if c.Out == "" {
		return nil, configErrorf("no output folder (--out)")
	}
	pts, err := Grid(c)
	if err != nil {
		return nil, err
	}
	exe := c.Exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("bench: locating the synth binary: %w", err)
		}
	}
	logw := c.Log
	if logw == nil {
		logw = io.Discard
	}

	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return nil, err
	}
	resultsPath := filepath.Join(c.Out, ResultsFile)
	kept, err := previousResults(resultsPath, pts, c.Resume, c.Force)
	if err != nil {
		return nil, err
	}
	done := make(map[string]bool, len(kept))
	for _, r := range kept {
		if r.OK() {
			done[r.Key()] = true
		}
	}
	var todo []Point
	for _, pt := range pts {
		if !done[pt.Key()] {
			todo = append(todo, pt)
		}
	}
	rep := &Report{Results: kept, Skipped: len(pts) - len(todo)}

	// Start results.csv with the kept rows; append each new row as it ends.
	if err := writeFileAtomic(resultsPath, func(w io.Writer) error { return WriteResults(w, kept) }); err != nil {
		return nil, err
	}
	rf, err := os.OpenFile(resultsPath, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer rf.Close()
	if len(todo) > 0 {
		if err := runPoints(ctx, exe, c.Timeout, todo, rep, csv.NewWriter(rf), logw); err != nil {
			return nil, err
		}
	}
	if err := rf.Close(); err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, ResultsFile)

	meta := &Meta{Generated: time.Now().UTC(), Command: c.Command, Machine: machine(), Version: toolVersion(ctx, exe)}
	if err := writeFileAtomic(filepath.Join(c.Out, SummaryFile), func(w io.Writer) error {
		return WriteSummary(w, rep.Results, meta)
	}); err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, SummaryFile)
	plots, err := WritePlots(c.Out, rep.Results)
	if err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, plots...)
	return rep, nil
}

// runPoints prepares each protocol's input once, in a temporary folder
// removed after, then runs the points one at a time (each within timeout),
// appending each result to rep and its row to cw as the run ends.
func runPoints(ctx context.Context, exe string, timeout time.Duration, todo []Point, rep *Report, cw *csv.Writer, logw io.Writer) error {
	in, err := os.MkdirTemp("", "synth-bench-data-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(in)
	type input struct {
		data, domain string
		shape        *Shape
	}
	inputs := map[*Protocol]*input{}
	for _, pt := range todo {
		p := pt.Protocol
		if inputs[p] != nil {
			continue
		}
		data, domain, err := p.Prepare(in)
		if err != nil {
			return err
		}
		sh, err := p.Shape()
		if err != nil {
			return err
		}
		inputs[p] = &input{data, domain, sh}
	}
	for i := range todo {
		pt := &todo[i]
		ip := inputs[pt.Protocol]
		res, err := runOne(ctx, exe, pt, ip.data, ip.domain, ip.shape, timeout)
		if err != nil {
			return err
		}
		rep.Ran++
		if !res.OK() {
			rep.Failed++
		}
		rep.Results = append(rep.Results, res)
		if err := cw.Write(res.record()); err != nil {
			return err
		}
		cw.Flush() // each row reaches the file as its run ends
		if err := cw.Error(); err != nil {
			return err
		}
		fmt.Fprintf(logw, "[%d/%d] %s: %s\n", i+1, len(todo), pt, describe(res))
	}
	return nil
}

// previousResults returns the rows of an existing results file to keep:
// none without one or with force; with resume, every successful row and
// the failed rows of points outside the grid (the others run again).
func previousResults(path string, pts []Point, resume, force bool) ([]*Result, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && force) {
		if f != nil {
			f.Close()
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !resume {
		return nil, configErrorf("%s exists: give --resume to add to it or --force to start over", path)
	}
	rs, err := ReadResults(bufio.NewReader(f), path)
	if err != nil {
		return nil, err
	}
	Relabel(rs)
	inGrid := make(map[string]bool, len(pts))
	for i := range pts {
		inGrid[pts[i].Key()] = true
	}
	var kept []*Result
	for _, r := range rs {
		if r.OK() || !inGrid[r.Key()] {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// Relabel gives rows of a protocol whose definition has changed since they
// were run the name the earlier definition has now: a row whose universe is
// not its protocol's, but is that of another built-in protocol on the same
// dataset and workload, moves to that protocol (rows of titanic with 979,776
// cells, run before titanic took all 9 attributes, are titanic-no-age).
// Otherwise --resume would count them as done points of the new protocol.
func Relabel(rs []*Result) {
	cells := map[*Protocol]int64{}
	universeOf := func(p *Protocol) int64 {
		if v, ok := cells[p]; ok {
			return v
		}
		v := int64(-1)
		if sh, err := p.Shape(); err == nil {
			v = universeCells(sh)
		}
		cells[p] = v
		return v
	}
	for _, r := range rs {
		p, err := LookupProtocol(r.Protocol)
		if err != nil || r.Universe < 0 || universeOf(p) < 0 || universeOf(p) == r.Universe {
			continue
		}
		for _, q := range protocols {
			if q != p && q.Dataset == r.Dataset && q.WorkloadName() == r.Workload && universeOf(q) == r.Universe {
				r.Protocol = q.Name
				break
			}
		}
	}
}

// runOne runs one release of pt in a child process. A failed release is a
// result with its status; the error is for an interruption (ctx) or a
// failure of the harness itself.
func runOne(ctx context.Context, exe string, pt *Point, data, domain string, sh *Shape, timeout time.Duration) (*Result, error) {
	res := newResult(pt, sh)
	tmp, err := os.MkdirTemp("", "synth-bench-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "release")
	p := pt.Protocol
	args := []string{"release", "--data", data, "--domain", domain, "--marginals", strconv.Itoa(p.Marginals)}
	if p.Sample > 0 {
		args = append(args, "--sample", strconv.Itoa(p.Sample), "--workload-seed", strconv.FormatUint(p.WorkloadSeed, 10))
	}
	args = append(args, "--epsilon", formatFloat(pt.Epsilon), "--delta", formatFloat(pt.Delta),
		"--solver", pt.Solver, "--setting", pt.Setting, "--neighbours", pt.Neighbours,
		"--seed", strconv.FormatUint(pt.Seed, 10), "--out", out, "--json", "--quiet")
	if pt.Holdout > 0 {
		args = append(args, "--holdout", formatFloat(pt.Holdout))
	}
	if pt.Model != "" && pt.Model != "auto" {
		args = append(args, "--model", pt.Model)
	}
	if pt.Accounting != "" && pt.Accounting != "auto" {
		args = append(args, "--accounting", pt.Accounting)
	}
	if p.UnitRows > 0 {
		args = append(args, "--privacy-unit", EventsUnit, "--max-rows-per-unit", strconv.Itoa(p.UnitRows))
	} else if p.Events > 0 {
		// The table has a unit column that no attribute declares.
		args = append(args, "--ignore-extra-columns")
	}

	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, exe, args...)
	// Ask the release to stop (it removes its partial output), then kill it
	// if it has not within the grace period.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()
	res.Seconds = micro(time.Since(start).Seconds())
	if ps := cmd.ProcessState; ps != nil {
		res.CPUSeconds = micro((ps.UserTime() + ps.SystemTime()).Seconds())
		res.PeakRSSMiB = maxRSSMiB(ps)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if runErr != nil {
		var ee *exec.ExitError
		switch {
		case errors.Is(rctx.Err(), context.DeadlineExceeded):
			res.Status = "timeout after " + timeout.String()
		case errors.As(runErr, &ee):
			res.Status = fmt.Sprintf("exit %d: %s", ee.ExitCode(), errorLine(stderr.String()))
		default:
			return nil, fmt.Errorf("bench: running %s: %w", exe, runErr)
		}
		return res, nil
	}
	if err := readOutputs(res, stdout.Bytes(), out); err != nil {
		res.Status = "harness: " + oneLine(err.Error())
	} else {
		res.Status = StatusOK
	}
	return res, nil
}

// readOutputs fills res from the release's outcome line, manifest and
// report.
func readOutputs(res *Result, stdout []byte, dir string) error {
	var o release.Outcome
	if err := json.Unmarshal(bytes.TrimSpace(lastLineBytes(stdout)), &o); err != nil {
		return fmt.Errorf("reading the outcome line %q: %w", oneLine(string(stdout)), err)
	}
	if o.Errors == nil {
		return errors.New("the outcome has no internal_errors")
	}
	res.Records, res.Rows = o.Records, o.Rows
	res.MaxError, res.MeanError, res.RMSE, res.P95Error = o.Errors.Max, o.Errors.Mean, o.Errors.RMSE, o.Errors.P95
	res.EpsilonSpent, res.ReleaseSeconds = o.Spent, micro(o.Seconds)

	mb, err := os.ReadFile(filepath.Join(dir, release.ManifestFile))
	if err != nil {
		return err
	}
	man, err := release.ParseManifest(mb)
	if err != nil {
		return err
	}
	res.Iterations = int64(man.Solver.Iterations)

	rep, err := readReport(filepath.Join(dir, release.ReportJSONFile))
	if err != nil {
		return err
	}
	if d := rep.Errors.Distribution; d != nil {
		res.DistMaxError, res.DistMeanError = d.Max, d.Mean
	}
	if p := rep.Errors.Population; p != nil {
		res.PopMaxError, res.PopMeanError = p.Max, p.Mean
	}
	if rep.Trace.Points > 0 {
		res.TraceIterations = int64(rep.Trace.Iterations)
	}
	res.MeanMarginalL1 = rep.meanMarginalL1()
	for _, st := range rep.Stages {
		switch st.Name {
		case "read":
			res.ReadSeconds = st.Seconds
		case "solve":
			res.SolveSeconds = st.Seconds
		case "write rows":
			res.WriteSeconds = st.Seconds
		}
	}
	if e := rep.TimeEstimate; e != nil {
		res.EstimateSeconds = e.ReleaseSeconds
	}
	res.Model = o.Model
	if o.KeptErrors != nil {
		res.KeptMaxError, res.KeptMarginalL1 = o.KeptErrors.Max, o.KeptMarginalL1
	}
	return nil
}

// reportFields are the fields of report.json the harness reads. The report
// of a large workload is big (about 12 MB for all 3-way marginals of ADULT,
// most of it the listed queries and drill-downs): decoding into this struct
// skips everything else without building it.
type reportFields struct {
	Errors struct {
		Distribution *eval.Metrics `json:"distribution"`
		Population   *eval.Metrics `json:"population"`
	} `json:"errors"`
	Trace struct {
		Points     int `json:"points"`
		Iterations int `json:"iterations"`
	} `json:"trace"`
	Marginals []struct {
		L1 *float64 `json:"l1"`
	} `json:"marginals"`
	Stages       []eval.Stage       `json:"stages"`
	TimeEstimate *eval.TimeEstimate `json:"time_estimate"`
}

// readReport decodes the fields the harness needs from the report.json at
// path.
func readReport(path string) (*reportFields, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep reportFields
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", release.ReportJSONFile, err)
	}
	return &rep, nil
}

// meanMarginalL1 is the mean over the workload's marginals of their L1
// errors, NaN when the report lists none or one lacks its L1.
func (r *reportFields) meanMarginalL1() float64 {
	if len(r.Marginals) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, m := range r.Marginals {
		if m.L1 == nil {
			return math.NaN()
		}
		sum += *m.L1
	}
	return sum / float64(len(r.Marginals))
}

// micro rounds seconds to microseconds (the CSV need not carry nanosecond
// noise).
func micro(s float64) float64 { return math.Round(s*1e6) / 1e6 }

// describe is the log line's account of a result.
func describe(r *Result) string {
	if !r.OK() {
		return fmt.Sprintf("FAILED after %.1f s: %s", r.Seconds, r.Status)
	}
	return fmt.Sprintf("max %s, mean %s, %.2f s, %.0f MiB", fmtErr(r.MaxError), fmtErr(r.MeanError), r.Seconds, r.PeakRSSMiB)
}

// errorLine returns the CLI's error message in its stderr s: the last line
// that starts with "synth:" or "synth " (a subcommand's "synth release:"),
// else the last non-empty line. An internal
// error's message is followed by its goroutine stack, whose last line names
// a source file of the build machine, not the error.
func errorLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "synth:") || strings.HasPrefix(lines[i], "synth ") {
			return oneLine(lines[i])
		}
	}
	return oneLine(string(lastLineBytes([]byte(s))))
}

func lastLineBytes(b []byte) []byte {
	b = bytes.TrimRight(b, "\r\n\t ")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return b
}

// oneLine makes s fit one CSV cell that reads well: no newlines, at most
// 300 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:297] + "..."
	}
	return s
}

// writeFileAtomic writes path through a temporary file in its folder.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// machine describes the computer for the summary.
func machine() string {
	s := fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				s += ", " + strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kib, err := strconv.ParseFloat(f[1], 64); err == nil {
					s += fmt.Sprintf(", %.0f GiB", math.Round(kib/(1<<20)))
				}
			}
		}
	}
	return s
}

// toolVersion asks the binary for its version ("" if it cannot tell).
func toolVersion(ctx context.Context, exe string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
