package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/sqlsrc"
	"github.com/dpsynth/synth/universe"
)

// inspectReport is what "synth inspect --json" prints: the same facts as
// the text, one JSON object on stdout. The data part holds exact
// statistics of the private data, marked internal.
type inspectReport struct {
	Domain     string              `json:"domain"`
	Attributes []attrReport        `json:"attributes"`
	Universe   universeReport      `json:"universe"`
	Workload   *workloadReport     `json:"workload,omitempty"`
	Estimate   *estimateReport     `json:"release_estimate,omitempty"`
	Data       *dataReport         `json:"data,omitempty"`
	Source     *sourceReport       `json:"source,omitempty"`
	Units      *ingest.UnitSummary `json:"rows_per_unit,omitempty"`
}

type attrReport struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Size     int    `json:"size"`
	Declared string `json:"declared"`
}

type universeReport struct {
	Attributes    int     `json:"attributes"`
	Cells         string  `json:"cells"` // exact, in decimal (may exceed 2^64)
	Log10Cells    float64 `json:"log10_cells"`
	ExplicitBytes string  `json:"explicit_vector_bytes"`
}

type workloadReport struct {
	Queries      int         `json:"queries"`
	MarginalSets int         `json:"marginal_sets"`
	TotalCells   int         `json:"total_cells"`
	Sets         []setReport `json:"sets"`
	MaxCells     int64       `json:"max_cells"`
}

type setReport struct {
	Attributes []string `json:"attributes"`
	Cells      int      `json:"cells"`
}

type estimateReport struct {
	Solver  string                 `json:"solver"`
	Model   string                 `json:"model"`
	Memory  *release.PreviewMemory `json:"memory,omitempty"`
	Refused string                 `json:"refused,omitempty"`
}

type dataReport struct {
	Internal string           `json:"internal"`
	File     string           `json:"file"`
	Format   string           `json:"format,omitempty"`
	Parts    []string         `json:"parts,omitempty"`
	Rows     int64            `json:"rows"`
	N        int64            `json:"n"`
	Distinct int              `json:"distinct_cells"`
	Valid    bool             `json:"valid"`
	Error    string           `json:"error,omitempty"`
	Repairs  []ingest.Repairs `json:"repairs,omitempty"`
}

type sourceReport struct {
	Internal string         `json:"internal"`
	Source   string         `json:"source"`
	Dialect  string         `json:"dialect"`
	Rows     int64          `json:"rows"`
	Columns  []sourceColumn `json:"columns"`
	Valid    bool           `json:"valid"`
	Error    string         `json:"error,omitempty"`
}

type sourceColumn struct {
	Column   string `json:"column"`
	Bad      int64  `json:"bad"`
	Repaired int64  `json:"repaired"`
}

const internalNote = "internal, not DP: exact statistics of the private data, for the operator only"

func newInspectReport(path string, d *universe.Domain) *inspectReport {
	r := &inspectReport{Domain: path, Universe: universeReport{
		Attributes: d.Len(), Cells: d.SizeBig().String(), Log10Cells: d.Log10Size(), ExplicitBytes: d.ExplicitBytes().String(),
	}}
	for _, a := range d.Attrs() {
		r.Attributes = append(r.Attributes, attrReport{Name: a.Name, Kind: a.Kind.String(), Size: a.Size(), Declared: a.Describe()})
	}
	return r
}

func workloadOf(wl *query.Workload, memCap uint64) *workloadReport {
	s := wl.Summary(memCap)
	w := &workloadReport{Queries: s.Queries, MarginalSets: s.MarginalSets, TotalCells: s.TotalCells, MaxCells: s.MaxCellsGuard}
	for _, set := range s.Sets {
		w.Sets = append(w.Sets, setReport{Attributes: set.Attrs, Cells: set.Cells})
	}
	return w
}

func dataOf(st *ingest.Stats) *dataReport {
	return &dataReport{Internal: internalNote, File: st.File, Format: st.Format.String(), Parts: st.Parts,
		Rows: st.Rows, N: st.N, Distinct: st.Distinct, Valid: true, Repairs: repairsOf(st)}
}

// repairsOf lists the attributes with repairs.
func repairsOf(st *ingest.Stats) []ingest.Repairs {
	var rs []ingest.Repairs
	for _, r := range st.Repairs {
		if r.Clamped > 0 || r.MappedToOther > 0 {
			rs = append(rs, r)
		}
	}
	return rs
}

func (r *inspectReport) write(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// inspectJSON is runInspect with --json: the same steps, one JSON object
// on stdout. A failed validation is in the object (data.valid false) and
// its error goes to stderr with the usual exit code.
func inspectJSON(ctx context.Context, e *env, o *inspectOptions, d *universe.Domain, opts ingest.Options) error {
	rep := newInspectReport(o.Domain, d)
	if o.Workload != "" || o.Marginals > 0 {
		wl, _, err := o.spec().Load(d)
		if err != nil {
			return err
		}
		rep.Workload = workloadOf(wl, o.MemoryCap)
		if rep.Estimate, err = o.estimate(ctx); err != nil {
			return err
		}
	}
	var failed error
	switch {
	case o.Source != "":
		src, err := o.openSource(ctx, d)
		if err != nil {
			return err
		}
		defer src.Close()
		sr := &sourceReport{Internal: internalNote, Source: sqlsrc.RedactDSN(o.Source), Dialect: src.Dialect().String(), Valid: true}
		r, err := src.Check(ctx)
		if r != nil {
			sr.Rows = r.Rows
			for _, c := range r.Columns {
				sr.Columns = append(sr.Columns, sourceColumn{Column: c.Column, Bad: c.Bad, Repaired: c.Repaired})
			}
		}
		if err != nil {
			var de *sqlsrc.DataError
			if !errors.As(err, &de) {
				return err
			}
			sr.Valid, sr.Error, failed = false, err.Error(), err
		}
		rep.Source = sr
	case o.Data != "":
		_, st, err := ingest.ReadFile(ctx, o.Data, d, opts)
		if err != nil {
			var de *ingest.DataError
			if !errors.As(err, &de) {
				return err
			}
			rep.Data = &dataReport{Internal: internalNote, File: o.Data, Error: err.Error()}
			failed = err
			break
		}
		rep.Data = dataOf(st)
		rep.Units = st.RowsPerUnit
	}
	if err := rep.write(e.stdout); err != nil {
		return err
	}
	return failed
}

// estimate is printEstimate's content.
func (o *inspectOptions) estimate(ctx context.Context) (*estimateReport, error) {
	model, err := release.ParseModelChoice(o.Model)
	if err != nil {
		return nil, usagef("--model: %v", err)
	}
	cfg := &release.Config{Domain: o.Domain, Workload: o.Workload, Marginals: o.Marginals, Sample: o.Sample, WorkloadSeed: o.WorkloadSeed,
		Epsilon: 1, Delta: 1e-9, Solver: o.Solver, Model: model, MemoryCap: o.MemoryCap, MaxModelBytes: o.MaxModelSize}
	est := &estimateReport{Solver: o.Solver, Model: model.String()}
	p, err := release.PlanOnly(ctx, cfg)
	var me *release.MemoryError
	switch {
	case errors.As(err, &me):
		est.Refused = err.Error()
	case err != nil:
		return nil, err
	default:
		est.Memory = &p.Memory
	}
	return est, nil
}
