package release

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dpsynth/synth/contrib"
	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/sqlsrc"
)

// The privacy unit of a release. Without Config.PrivacyUnit every row is
// its own unit; with it, every row that names the same value of that column
// belongs to one unit (a person, an account), whose rows are bounded to
// Config.MaxRowsPerUnit before any count (package contrib), and the
// guarantee covers adding or removing one whole unit.

// unitRows is K, the most rows a unit contributes (1 for a row).
func (cfg *Config) unitRows() int {
	if cfg.PrivacyUnit == "" {
		return 1
	}
	return cfg.MaxRowsPerUnit
}

// checkUnit validates the privacy-unit settings.
func (cfg *Config) checkUnit() error {
	switch {
	case cfg.PrivacyUnit == "" && cfg.MaxRowsPerUnit != 0:
		return configErrorf("--max-rows-per-unit goes with --privacy-unit COLUMN (without it every row is its own unit)")
	case cfg.PrivacyUnit == "":
		return nil
	case cfg.MaxRowsPerUnit < 1:
		return configErrorf("--privacy-unit %s needs --max-rows-per-unit K >= 1: the most rows one unit may contribute (rows beyond K are dropped at random before counting; synth inspect --privacy-unit %s shows how many rows each K keeps)", cfg.PrivacyUnit, cfg.PrivacyUnit)
	case cfg.Neighbours == solvers.ReplaceOne:
		return configErrorf("--privacy-unit needs --neighbours add-remove (the default): under replace-one the number of rows is public, which it is not once a unit may hold several rows")
	case cfg.Holdout > 0:
		return configErrorf("--holdout draws records, not units: it cannot be combined with --privacy-unit")
	}
	return nil
}

// UnitInfo is the privacy unit of a release, for the manifest.
type UnitInfo struct {
	// Column names the column whose value identifies a unit; empty when
	// every row is its own unit.
	Column string `json:"column,omitempty"`
	// MaxRows is K: the most rows one unit contributes (1 for a row).
	MaxRows int `json:"max_rows"`
}

func (cfg *Config) unitInfo() *UnitInfo {
	return &UnitInfo{Column: cfg.PrivacyUnit, MaxRows: cfg.unitRows()}
}

// UnitText describes a privacy unit for people: "one row", or every row
// with the same value of the column with at most K of them kept.
func UnitText(column string, k int) string {
	if column == "" {
		return "one row"
	}
	rows := "rows"
	if k == 1 {
		rows = "row"
	}
	return fmt.Sprintf("all rows with the same %s, at most %d %s kept per unit", strconv.Quote(column), k, rows)
}

// NeighbourText states the neighbouring relation with its privacy unit, as
// the manifest, the reports and the summary print it.
func NeighbourText(nb solvers.Neighbours, column string, k int) string {
	if nb == solvers.ReplaceOne {
		return "replace one row (the privacy unit is one row); n public"
	}
	return "add or remove one privacy unit (" + UnitText(column, k) + "); n private"
}

func (cfg *Config) neighbourText() string {
	return NeighbourText(cfg.Neighbours, cfg.PrivacyUnit, cfg.unitRows())
}

// unitMemory is what the grouping by unit may hold before it spills: half
// of what the memory cap leaves beside the release's estimate, at least
// 64 MiB.
func (r *runner) unitMemory() uint64 {
	left := int64(r.cfg.memoryCap()) - int64(r.est.PeakBytes)
	return uint64(max(left/2, 64<<20))
}

// unitOptions sets a file read's privacy-unit options: the column, K, a
// salt drawn from the release's randomness (so that a seeded run keeps the
// same rows) and the grouping's memory.
func (r *runner) unitOptions(o *ingest.Options) {
	if r.cfg.PrivacyUnit == "" {
		return
	}
	o.PrivacyUnit, o.MaxRowsPerUnit = r.cfg.PrivacyUnit, r.cfg.MaxRowsPerUnit
	o.UnitSalt = contrib.NewSalt(r.rnd.Uint64)
	o.UnitMemory = r.unitMemory()
}

// unitStats keeps a read's unbounded counts for the internal report and
// tells the operator what the bound did (internal, not DP).
func (r *runner) unitStats(st *ingest.Stats) {
	if st.AllCounts == nil {
		return
	}
	r.allCounts, r.allN = st.AllCounts, st.AllCounts.Total()
	r.internalf("privacy unit %q: %d rows of %d units read, %d rows beyond --max-rows-per-unit %d dropped, %d kept (internal, not DP)",
		r.cfg.PrivacyUnit, st.Rows, st.Units, st.UnitRowsDropped, r.cfg.MaxRowsPerUnit, st.N)
}

// reportTruth returns what the internal report scores the rows against:
// the table as read — with a privacy unit, every row before the bound, so
// that the report shows the error a user of the table sees (the bound's
// bias included) — with its one-way tables and row count.
func (r *runner) reportTruth() ([]float64, *OneWay, int64, error) {
	one := NewOneWay(r.dom)
	switch {
	case r.allCounts != nil:
		one.AddCounts(r.allCounts)
		return r.wl.AnswerCounts(r.allCounts, make([]float64, r.wl.M())), one, r.allN, nil
	case r.unbounded != nil:
		truth, err := answersFromData(r.ctx, r.wl, r.unbounded, r.allN)
		if err != nil {
			return nil, nil, 0, err
		}
		if err := one.addData(r.ctx, r.unbounded); err != nil {
			return nil, nil, 0, err
		}
		return truth, one, r.allN, nil
	case r.counts != nil:
		one.AddCounts(r.counts)
	default:
		if err := one.addData(r.ctx, r.data); err != nil {
			return nil, nil, 0, err
		}
	}
	return r.truth, one, r.n, nil
}

// keptRows is the rows the unit's bound kept (0 without a unit); the
// outcome's Records is then every row read.
func (r *runner) keptRows() int64 {
	if r.allN == 0 {
		return 0
	}
	return r.n
}

// recordsRead is every record read (before a unit's bound).
func (r *runner) recordsRead() int64 {
	if r.allN > 0 {
		return r.allN
	}
	return r.n
}

// sqlUnit is a database source's privacy-unit bound (nil without a unit),
// its salt drawn from the release's randomness as for a file.
func (r *runner) sqlUnit() *sqlsrc.Unit {
	if r.cfg.PrivacyUnit == "" {
		return nil
	}
	return &sqlsrc.Unit{Column: r.cfg.PrivacyUnit, MaxRows: r.cfg.MaxRowsPerUnit, Salt: contrib.NewSalt(r.rnd.Uint64)}
}

// sqlUnitStats, with a privacy unit, counts the rows the bound kept (the
// solvers' n), keeps the unbounded view of the source for the internal
// report and tells the operator (internal, not DP).
func (r *runner) sqlUnitStats(src *sqlsrc.Source, rows int64) error {
	if r.cfg.PrivacyUnit == "" {
		return nil
	}
	kept, err := r.data.Marginals(r.ctx, [][]int{{}})
	if err != nil {
		return err
	}
	r.n, r.allN = kept[0][0], rows
	if r.counts != nil {
		// The solver reads the histogram: the report's truth is the
		// unbounded histogram (any workload family).
		if r.allCounts, err = src.Unbounded().Histogram(r.ctx); err != nil {
			return err
		}
	} else {
		r.unbounded = src.Unbounded()
	}
	if r.n == 0 {
		return &DataError{File: sqlsrc.RedactDSN(r.cfg.Source), Msg: "no records to release (the bound kept no row)"}
	}
	r.internalf("privacy unit %q: %d rows read, %d rows beyond --max-rows-per-unit %d dropped, %d kept (internal, not DP)",
		r.cfg.PrivacyUnit, rows, rows-r.n, r.cfg.MaxRowsPerUnit, r.n)
	return nil
}

// keptErrors, with a privacy unit, scores the rows against the kept rows
// (the solver's input): what the noise costs apart from the bound's bias.
func (r *runner) keptErrors() {
	if r.allN == 0 || r.truth == nil || len(r.synthAns) != len(r.truth) {
		return
	}
	m := eval.Summarize(eval.AbsErrors(r.truth, r.synthAns, make([]float64, len(r.truth))))
	r.kept = &m
	if l1 := eval.MeanMarginalL1(r.wl, r.truth, r.synthAns); !math.IsNaN(l1) {
		r.keptL1 = l1
	}
	r.internalf("workload error against the %d rows kept by the unit's bound (internal, not DP): max %.4g, mean %.3g", r.n, m.Max, m.Mean)
}
