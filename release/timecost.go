package release

import (
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// The time model's stages and their kernels, calibrated on this kind of
// machine (2 cores, nothing else running) from the stages' measured times
// in report.json of 38 releases: the accuracy suite's 11 tables at ε = 0.1,
// 0.5 and 1 and the width table's 7 at ε = 1 (project, tuned, δ = 1e-9,
// seed 1; docs/BENCHMARKS.md "An estimate of the whole release"). Each
// stage's constants were fitted to that stage's times (least squares in
// log scale); on the whole release the model's estimate is within 0.50–2.45×
// of the measured time on every one of them.
const (
	// secPerValueRead is reading and encoding one value (record × column).
	secPerValueRead = 9.2e-8
	// Writing the rows: per value written, on the factored model (the
	// junction-tree sampler and Parquet) and on the explicit one (plus
	// the sampler's pass over the universe and the balancing step's
	// tables).
	secPerValueWriteFactored = 3.7e-7
	secPerValueWriteExplicit = 1.5e-7
	secPerCellWriteExplicit  = 6.2e-8
	secPerTableRootWrite     = 2.5e-6 // per workload table × √(universe cells)
	// The fixed part (start, plan, output folder, report files) and the
	// report's per-query and per record × marginal-table costs.
	secFixed          = 0.12
	secPerQuery       = 1.7e-8
	secPerRecordTable = 1.1e-10
	// The explicit project solve: its steps grow with ε·n (the stopping
	// rule ends it when the noise dominates: 67–718 steps on the suite),
	// each a pass over the universe plus per-table work. The per-step
	// constants (1.38e-8 and 3.75e-8 as fitted, with one SURE shadow)
	// are scaled by 1.46 for SURE's second probe: the median ratio of the
	// solve stage's time, two probes against one, over the 22 explicit
	// suite points whose solve took more than 0.2 s (seeds 1–18;
	// docs/BENCHMARKS.md, "SURE's divergence read through two probes"),
	// by 0.85 for the one-pass trial step: the median ratio of the
	// whole release's time, one pass against two, on mplsstops and
	// healthins at ε = 1, run in alternation (docs/BENCHMARKS.md, "The
	// explicit fit's trial step in one pass"), and by 0.75 for the adjoint,
	// step and answers in one pass over the universe: the median ratio of
	// the whole release's time, against the three passes before, on
	// gss7402, mplsstops and healthins at ε = 1, run in alternation
	// (docs/BENCHMARKS.md, "The explicit fit's step in one pass over the
	// universe").
	explicitStepsScale  = 1.89
	explicitStepsPower  = 0.429
	secPerCellStep      = 1.38e-8 * 1.46 * 0.85 * 0.75
	secPerTableRootStep = 3.75e-8 * 1.46 * 0.85 * 0.75 // per workload table × √(universe cells)
	// The factored project solve with rounds: about half the nominal fits
	// run (the budget annealing ends the rounds early: 29–66% on the
	// calibration runs), each scoring every candidate against the model
	// (secPerCandidate at 4 nominal rounds per attribute and 100 cells per
	// candidate; the model grows with the rounds per attribute, power
	// roundsPower, and a large candidate is more often answered inside one
	// clique, power cellsPower) and reading its cells.
	fitShare          = 0.5
	secPerCandidate   = 1.88e-4
	roundsPower       = 2.78
	cellsPower        = -0.371
	secPerCandCell    = 4.6e-9
	candidateRefCells = 100.0
	// factoredSecPerTreeCell is a factored fit of the whole measured
	// workload (no rounds) per junction-tree cell per measured table.
	factoredSecPerTreeCell = 5e-7
	// timeSpread is the range the estimate states: the calibration runs
	// fall within it, with the load of a shared machine on top.
	timeSpread = 3.0
	// maxEstimate (a day) bounds the estimates the model gives: above it
	// the model is outside what it was calibrated on.
	maxEstimate = 86400.0
	// calibratedHighSets is the most workload marginals of three or more
	// attributes in a calibration release with rounds (wide32-3way: 4,960).
	// Past it the rounds' cost is extrapolated: each fit scores those sets
	// against a model that grows with the rounds, so the estimate's range
	// reaches extrapolatedSpread above it. The factor states uncertainty,
	// it changes no release. One release past the calibration has been
	// measured (wide64-3way, 41,664 sets): estimated 180 s, 1,220 s when
	// every score was exact (0.15×), a median of 120 s once the candidates
	// that would cost more than a sample of the model are scored on one
	// (1.50×); to be refit when more are measured.
	calibratedHighSets = 4960
	extrapolatedSpread = 10.0
	// roundsSpread is the top of the range for the factored solve with
	// rounds. fitShare counts half the nominal fits, as the annealing
	// ends the rounds early; the widening of σ (where more sets are off
	// than the rounds left afford) runs them to their nominal count or
	// past it, on a model grown by the extra sets. Measured after the
	// widening, on releases not in the calibration (ε = 0.5, seed 1):
	// wide64-2way 3.5× the estimate (0.9× with the widening off),
	// wide128-2way 3.1×, wide200-2way 2.6× (docs/BENCHMARKS.md). The
	// factor states uncertainty, it changes no release.
	roundsSpread = 6.0
	// The rounds' fits run belief propagation over the model, whose size
	// the data decide (titanic at ε = 0.5 grew it to 1.8 million cells,
	// at ε = 1 to 0.3 million), within the cap's schedule: a selection
	// keeps the model under the cap times the share of ρ spent. The top
	// of the range adds a bound on that work: every nominal fit (and the
	// one-way fit) at evalsPerFit loss evaluations, each a pass over a
	// model of half the cap on average, at secPerModelCellEval.
	// evalsPerFit: 100 steps a fit, 1.27–1.29 evaluations a step on the
	// suite's releases with rounds; secPerModelCellEval: the solve time
	// left by the candidates' term over the evaluations and the final
	// model's cells on titanic at ε = 0.5 (0.6·10⁻⁹) and wide32-2way at
	// ε = 1 (0.5·10⁻⁹), doubled for a model that grows over the fits.
	evalsPerFit         = 130.0
	secPerModelCellEval = 1.2e-9
)

// timeInputs are what the time model reads: the public plan and workload,
// and the number of records (a release's count once the data is read; a
// dry run's guess from the file's size, or 0 when it has none).
type timeInputs struct {
	solver  string
	model   solvers.ModelKind
	plan    *solvers.Plan
	dom     *universe.Domain
	wl      *query.Workload
	epsilon float64
	records float64
	// recordsFrom says where records comes from, for the method's text.
	recordsFrom string
}

// StageTime is one stage's estimated wall time.
type StageTime struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// estimateTime estimates the release's wall time, stage by stage, with the
// calibrated kernels above. Without a record count the per-record stages
// are left out and PerRecord says what each record adds. Solvers other than
// project have an iteration count that depends on n in ways the model was
// not calibrated on: their solve is not estimated (Solve 0).
func estimateTime(in timeInputs) PreviewTime {
	n, d := in.records, float64(in.dom.Len())
	k := math.Pow(10, in.dom.Log10Size())
	S, Q := float64(len(in.wl.Marginals())), float64(in.wl.M())
	factored := in.model == solvers.Factored
	t := PreviewTime{Records: n}
	// Each stage's part per record and its fixed part.
	writePer, writeFixed := secPerValueWriteFactored*d, 0.0
	if !factored {
		writePer = secPerValueWriteExplicit * d
		writeFixed = secPerCellWriteExplicit*k + secPerTableRootWrite*S*math.Sqrt(k)
	}
	reportPer, reportFixed := secPerRecordTable*S, secFixed+secPerQuery*Q
	perRecord := secPerValueRead*d + writePer + reportPer
	fixed := writeFixed + reportFixed
	t.PerRecord = perRecord
	solve, method := solveTime(in, n, k, S)
	rest := fmt.Sprintf("the release is not estimated (reading, writing and the report take about %.3g s plus %.3g µs per record)", fixed, perRecord*1e6)
	if n <= 0 {
		// Without n only the solve of a factored plan is estimated.
		t.Method = method + "; n is not known before reading: " + rest
		if solve > 0 && solve <= maxEstimate {
			t.Solve, t.Stages = solve, []StageTime{{Name: "solve", Seconds: solve}}
		}
		return t
	}
	if solve <= 0 {
		t.Method = method + "; " + rest
		return t
	}
	t.Solve = solve
	t.Stages = []StageTime{
		{Name: "read", Seconds: secPerValueRead * d * n},
		{Name: "solve", Seconds: solve},
		{Name: "write rows", Seconds: writeFixed + writePer*n},
		{Name: "report and the rest", Seconds: reportFixed + reportPer*n},
	}
	for _, s := range t.Stages {
		t.Seconds += s.Seconds
	}
	if !(t.Seconds <= maxEstimate) {
		t.Seconds, t.Solve, t.Stages = 0, 0, nil
		t.Method = "the cost model does not cover this shape (over a day); the report states each stage's actual time"
		return t
	}
	t.Low, t.High = t.Seconds/timeSpread, t.Seconds*timeSpread
	t.Method = method + "; " + in.recordsFrom
	t.Method += fmt.Sprintf("; calibrated on 38 releases (the accuracy suite and the width table) on a 2-core machine, where it was within 0.50–2.45× of the whole release's time, and 0.27–1.61× on seven shapes it was not fitted on (how far the rounds grow the model and how many steps a fit takes depend on the data); the machine's load moves it too: the range is ÷%g to ×%g", timeSpread, timeSpread)
	rounds := factored && in.plan.Params["rounds_nominal"] > 0
	if rounds {
		t.High = t.Seconds * roundsSpread
		t.Method += fmt.Sprintf(", raised to ×%g for the adaptive rounds: the estimate counts half their nominal fits, but where more sets are off than the rounds left afford their σ is raised and they run to the nominal count or past it (wide64-2way at ε = 0.5 took 3.5× the estimate)", roundsSpread)
		if bp := roundsModelBound(in.plan.Params); t.Seconds+bp > t.High {
			t.High = t.Seconds + bp
			t.Method += fmt.Sprintf(", and to the estimate plus %.3g s: how large the rounds grow the model depends on the data, and every fit's passes over a model within the cap's schedule (half the cap on average) bound that work (titanic at ε = 0.5 took 8× the estimate)", bp)
		}
	}
	if high := highOrderSets(in.wl); rounds && high > calibratedHighSets {
		t.High = max(t.High, t.Seconds*extrapolatedSpread)
		t.Method += fmt.Sprintf(", widened to ×%g: the rounds score %d marginals of three or more attributes, past the %d of the largest calibration release, against a model that grows with the rounds (on the one such release measured, 64 columns with all 3-way marginals, the estimate was 1.5× the time)", extrapolatedSpread, high, calibratedHighSets)
	}
	return t
}

// roundsModelBound bounds the time the rounds' fits spend in belief
// propagation: every nominal fit and the one-way fit, evalsPerFit passes
// each over a model of half the cap (params max_model_bytes: 8 bytes a
// cell), the cap's schedule on average over the rounds.
func roundsModelBound(params map[string]float64) float64 {
	return (nominalFits(params) + 1) * evalsPerFit * params["max_model_bytes"] / 8 / 2 * secPerModelCellEval
}

// nominalFits is the rounds' nominal number of fits: the nominal rounds in
// batches of the plan's batch size.
func nominalFits(params map[string]float64) float64 {
	return math.Ceil(params["rounds_nominal"] / max(params["batch"], 1))
}

// highOrderSets counts the workload's marginals of three or more
// attributes.
func highOrderSets(wl *query.Workload) int {
	n := 0
	for _, m := range wl.Marginals() {
		if len(m.Attrs) >= 3 {
			n++
		}
	}
	return n
}

// solveTime is the solve stage's estimate and the cost model's description.
func solveTime(in timeInputs, n, k, S float64) (float64, string) {
	if in.solver != "project" {
		return 0, in.solver + "'s number of iterations depends on n in ways the cost model was not calibrated on"
	}
	p := in.plan.Params
	switch {
	case in.model == solvers.Factored && p["rounds_nominal"] > 0:
		c, cells := p["candidates"], p["candidate_cells"]
		fits := fitShare * nominalFits(p)
		perAttr := p["rounds_nominal"] / float64(in.dom.Len())
		perFit := secPerCandidate*c*math.Pow(perAttr/4, roundsPower)*math.Pow(cells/c/candidateRefCells, cellsPower) + secPerCandCell*cells
		return fits * perFit, "cost model: about half the nominal fits, each scoring every candidate set against the model (per candidate, per candidate cell)"
	case in.model == solvers.Factored:
		cells := p["model_bytes"] / 8
		if cells == 0 {
			// The sets chosen from the noisy tables: a model of at most
			// the plan's cap.
			cells = p["max_model_bytes"] / 8
		}
		return factoredSecPerTreeCell * cells * float64(max(len(in.plan.Charges), 1)), "cost model: junction-tree cells × measured tables"
	}
	if n <= 0 {
		return 0, "the explicit solve's steps grow with ε·n, and n is not known"
	}
	steps := explicitStepsScale * math.Pow(in.epsilon*n, explicitStepsPower)
	return steps * (secPerCellStep*k + secPerTableRootStep*S*math.Sqrt(k)), "cost model: steps growing with ε·n, each a pass over the universe's cells and the workload's tables"
}

// compressRatio is the compression the record guess assumes of a
// compressed CSV file.
const compressRatio = 8

// guessRecords guesses a data file's record count from its size without
// opening it (a dry run reads no data): a CSV file's size (times
// compressRatio when compressed) over the bytes a record of the domain's
// typical values takes. It returns 0 for anything else (Parquet, folders
// of parts, standard input and databases), whose size says too little.
//
// Privacy: the file's size is not a differentially private statistic; the
// guess goes to the operator's dry run only, never to a public file.
func guessRecords(path string, format ingest.Format, dom *universe.Domain) (float64, string) {
	if path == "" || path == ingest.Stdin || format == ingest.Parquet {
		return 0, ""
	}
	ratio, how := 1.0, ""
	name := strings.ToLower(path)
	switch ext := filepath.Ext(name); ext {
	case ".gz", ".zst", ".zstd":
		// The stream's size is not known without reading it: CSV
		// compresses about 4:1 to 12:1 (fertility.csv.gz: 11.6:1).
		ratio, how = compressRatio, fmt.Sprintf(", assuming %g:1 compression", float64(compressRatio))
		name = strings.TrimSuffix(name, ext)
	}
	switch filepath.Ext(name) {
	case ".csv", ".tsv", ".txt", "":
	default:
		return 0, ""
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return 0, ""
	}
	width := 0.0
	for a := range dom.Len() {
		width += valueWidth(dom.Attr(a)) + 1
	}
	n := math.Max(1, math.Round(float64(st.Size())*ratio/width))
	return n, fmt.Sprintf("n ≈ %s records, guessed from the file's size (about %.0f bytes per record%s; the dry run reads no data)", universe.FormatCount(big.NewInt(int64(n))), width, how)
}

// valueWidth is the typical number of bytes of one of a's values in a CSV
// file.
func valueWidth(a *universe.Attribute) float64 {
	digits := func(v float64) float64 { return float64(len(strconv.FormatFloat(math.Round(v), 'f', -1, 64))) }
	switch a.Kind {
	case universe.Categorical:
		s := 0
		for _, v := range a.Values {
			s += len(v)
		}
		return float64(s) / float64(max(len(a.Values), 1))
	case universe.Integer:
		return digits((float64(a.Min) + float64(a.Max)) / 2)
	case universe.Numeric:
		return digits((a.Edges[0] + a.Edges[len(a.Edges)-1]) / 2)
	case universe.Boolean:
		return 4
	case universe.Date:
		return 10
	case universe.Timestamp:
		return 20
	}
	return digits(float64(a.Size()) / 2)
}
