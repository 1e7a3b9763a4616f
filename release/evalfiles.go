package release

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

// EvalConfig scores a synthetic table (made by synth or by another tool)
// against the private data on a workload.
type EvalConfig struct {
	Data        string
	DataFormat  ingest.Format
	CountColumn string
	Policy      universe.Policy
	// Inputs select the attributes and columns used, in the data and in
	// the synthetic table (and stdin for "-").
	Inputs Inputs

	// Synthetic is the synthetic table; it must fit the same domain.
	Synthetic       string
	SyntheticFormat ingest.Format
	SyntheticCount  string // count column of a pre-aggregated synthetic table

	Domain       string
	Workload     string
	Marginals    int
	Sample       int
	WorkloadSeed uint64

	// Out, if set, receives report.json and report.html (atomically);
	// Force allows replacing earlier reports there.
	Out   string
	Force bool

	MemoryCap uint64
	Title     string
}

// EvalOutcome summarises an evaluation.
type EvalOutcome struct {
	Report *eval.Report `json:"-"`
	// Errors are the workload errors of the synthetic table against the
	// data: internal, not differentially private.
	Errors   eval.Metrics `json:"internal_errors"`
	Records  int64        `json:"records"`
	Rows     int64        `json:"synthetic_rows"`
	Files    []string     `json:"files,omitempty"`
	Dir      string       `json:"dir,omitempty"`
	Workload string       `json:"workload"`
	Seconds  float64      `json:"seconds"`
}

// Evaluate reads the data and the synthetic table, answers the workload on
// both and builds the internal report (and writes it to Out when set).
// Nothing private is released by this: the report is internal.
func Evaluate(ctx context.Context, cfg *EvalConfig) (*EvalOutcome, error) {
	start := time.Now()
	switch {
	case cfg.Data == "":
		return nil, configErrorf("no data file (--data)")
	case cfg.Synthetic == "":
		return nil, configErrorf("no synthetic file (--synthetic)")
	case cfg.Domain == "":
		return nil, configErrorf("no domain file (--domain)")
	case cfg.Data == ingest.Stdin && cfg.Synthetic == ingest.Stdin:
		return nil, configErrorf("--data and --synthetic cannot both read stdin (-)")
	}
	spec := WorkloadSpec{File: cfg.Workload, Marginals: cfg.Marginals, Sample: cfg.Sample, Seed: cfg.WorkloadSeed}
	if err := spec.Check(); err != nil {
		return nil, err
	}
	dom, err := universe.LoadDomain(cfg.Domain)
	if err != nil {
		return nil, err
	}
	if dom, err = cfg.Inputs.domain(dom); err != nil {
		return nil, err
	}
	wl, desc, err := loadWorkload(spec, dom)
	if err != nil {
		return nil, err
	}
	var od *OutDir
	if cfg.Out != "" {
		if od, err = CreateOutDir(ctx, cfg.Out, &OutDirSettings{Force: cfg.Force}); err != nil {
			return nil, err
		}
		defer od.Abort()
	}
	data, _, err := ingest.ReadFile(ctx, cfg.Data, dom, cfg.Inputs.options(cfg.DataFormat, cfg.CountColumn, cfg.Policy))
	if err != nil {
		return nil, err
	}
	if data.Total() == 0 {
		return nil, &DataError{File: cfg.Data, Msg: "no records"}
	}
	synIn := cfg.Inputs
	syn, _, err := ingest.ReadFile(ctx, cfg.Synthetic, dom, synIn.options(cfg.SyntheticFormat, cfg.SyntheticCount, universe.Policy{}))
	if err != nil {
		return nil, err
	}
	if syn.Total() == 0 {
		return nil, &DataError{File: cfg.Synthetic, Msg: "no synthetic rows"}
	}
	title := cfg.Title
	if title == "" {
		title = fmt.Sprintf("%s against %s, %s", filepath.Base(cfg.Synthetic), filepath.Base(cfg.Data), desc)
	}
	rep, err := eval.Evaluate(&eval.Input{
		Workload:  wl,
		True:      wl.AnswerCounts(data, make([]float64, wl.M())),
		Synthetic: wl.AnswerCounts(syn, make([]float64, wl.M())),
		DataRows:  data.Total(), SyntheticRows: syn.Total(),
		Title: title, RunTime: time.Since(start),
		Note:   "Evaluation of a synthetic table against the private data.",
		OneWay: oneWayCounts(data, syn),
	})
	if err != nil {
		return nil, err
	}
	out := &EvalOutcome{Report: rep, Errors: rep.Errors.Synthetic, Records: data.Total(), Rows: syn.Total(), Workload: desc}
	if od != nil {
		js, err := rep.JSON()
		if err != nil {
			return nil, err
		}
		var html strings.Builder
		if err := rep.WriteHTML(&html); err != nil {
			return nil, err
		}
		if err := od.Write(ctx, ReportJSONFile, 0o600, writeBytes(js)); err != nil {
			return nil, err
		}
		if err := od.Write(ctx, ReportHTMLFile, 0o600, func(w io.Writer) error {
			_, err := io.WriteString(w, html.String())
			return err
		}); err != nil {
			return nil, err
		}
		if err := od.Commit(ctx); err != nil {
			return nil, err
		}
		out.Dir, out.Files = od.Dir(), []string{ReportJSONFile, ReportHTMLFile}
	}
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}
