// Package bench is the benchmark harness behind "synth bench": it runs a
// grid of datasets × workloads × solvers × settings × ε × seeds, each point
// one whole release in a child process, and writes the results as a CSV
// file, a markdown summary and SVG plots of error against ε.
//
// A grid is made of protocols (Protocols, LookupProtocol): a shipped dataset
// (package datasets), optionally restricted to some of its attributes or
// sampled to some of its rows (NAME@ROWS), a
// marginal workload, an ε grid, δ and a number of seeds. The universe need
// not fit a dense vector: each release picks its model (--model auto:
// explicit for small universes, the factored junction-tree model beyond), so
// the adult protocol is the full 14-attribute ADULT (6.4e17 cells). Config selects protocols and solvers and may override the grid;
// Grid lists the points and Run executes them one at a time (the timings
// would be distorted by parallel runs on a small machine) with the synth
// binary:
//
//	synth release --data D --domain DOM --marginals K [--sample S --workload-seed W]
//	    --epsilon ε --delta δ --solver NAME --setting SETTING --seed SEED
//	    --out TMP --json --quiet
//
// Each run's wall time covers the whole release (ingest to Parquet, reports
// and manifest), its peak memory is the child's maximum resident set size
// (getrusage), and its errors are the workload errors of the released rows
// that the release reports (internal_errors of the outcome; the distribution
// and population errors and the mean per-marginal L1 come from report.json,
// of which only those fields are decoded). The release folder is removed
// after each run.
//
// Outputs, in Config.Out: results.csv (one row per run; Columns, ReadResults,
// WriteResults), summary.md (WriteSummary) and, per protocol, the plots
// PROTOCOL-max-error.svg, PROTOCOL-mean-error.svg, PROTOCOL-marginal-l1.svg
// and PROTOCOL-seconds.svg (WritePlots). The reference figures of the
// methods users know (AIM, PEP, MWEM+PGM, MWEM on adult-reduced; AIM and MST
// on adult) appear in the summary and the plots, and on adult the summary
// says at each ε whether synth is at or below AIM on both max error and mean
// marginal L1, with AIM's time over synth's and synth's peak memory.
//
// Privacy: the runs are seeded so that they can be reproduced, and a seeded
// release is not private against anyone who knows the seed; the errors are
// computed on the data and are not differentially private either. Both are
// fine for benchmarking on public datasets and are stated in the summary.
package bench
