// Package eval measures how well synthetic data answers a workload and
// writes the error reports of a release: report.json and a self-contained
// report.html.
//
// Evaluate takes the workload and two answer vectors (fractions, one per
// query, in workload order): the answers on the data and on the synthetic
// rows. Optionally it also takes the answers on the solver's distribution
// D before sampling (the error then splits into the solver's part and the
// sampling part) and on held-out records (the population-error estimate:
// records the release never saw stand for fresh draws from the
// data-generating distribution, so the error against them estimates the
// error against that distribution rather than against the sample). The
// pipeline computes the answers with query.Workload.AnswerCounts on counts
// or query.Operator.Answer on a vector over the universe.
//
// Privacy: the report compares the output with the private data, so it is
// NOT differentially private. Both forms carry the stamp InternalStamp
// ("internal: computed on the private data, not differentially private"),
// JSON in the "privacy" field and HTML in a banner; release.OutDir writes
// them with owner-only permissions when the pipeline asks. The public
// variant is Public: it shows only a-priori error bounds supplied by the
// caller (functions of the noise scales, the budget and the public shape
// of the problem) and has no input through which an answer could reach it.
//
// # report.json, schema synth.report/v1
//
// One JSON object; fields always appear in this order. Optional fields are
// absent (not null) when their input was not given. Answers and errors are
// fractions of the rows (a query of weight w answers w·count/n); times are
// seconds.
//
//	schema            "synth.report/v1"; the version changes when a field
//	                  is removed, renamed or changes meaning
//	privacy           "internal: computed on the private data, not
//	                  differentially private"
//	title             report title
//	note              optional free text (e.g. "illustration: …")
//	solver            optional solver and setting, e.g. "dpfw (tuned)"
//	solver_params     optional [{name, value}]: the solver's setting and
//	                  parameters (T, α, σ, ρ, ...; values as text)
//	budget            optional privacy of the release: {epsilon, delta,
//	                  rho? (zCDP ρ of the budget), neighbours (the
//	                  neighbouring relation), accounting}
//	workload          {queries m, marginals (number of marginal sets),
//	                  families: [{kind, description, weight, queries}]}
//	rows              {data, synthetic, holdout}: record counts, 0 if not given
//	errors            workload metrics {max, mean, rmse, p95} of:
//	  .synthetic        |synthetic − true|, always present
//	  .distribution     |D − true| (D before sampling), optional
//	  .sampling         |synthetic − D|, the error sampling added, optional
//	  .population       |synthetic − holdout|, optional
//	baseline          optional (with one-way tables): {description, errors
//	                  {max, mean, rmse, p95}}: the error of the
//	                  "independent attributes" synthetic, the product of
//	                  the data's one-way tables, answered by
//	                  query.Workload.AnswerProduct; internal like the rest
//	one_way           optional, per attribute in domain order: {attribute,
//	                  labels (one per code; the null code "<null>"), true,
//	                  synthetic (fractions), tv}
//	drilldown         the 6 marginals with the largest l1, worst first:
//	                  {attributes, l1, cells (in the marginal), shown: up
//	                  to 15 of {label, true, synthetic, abs_error}}: every
//	                  cell in cell order when it has at most 15, else the
//	                  15 worst by abs_error
//	marginals         one entry per marginal set, in workload order:
//	                  {attributes [names], offset (index of its first
//	                  query), cells, weight, l1, tv, max, sampling_tv?,
//	                  population_tv?}; l1 = Σ|synthetic − true|/weight over
//	                  its cells (the L1 distance of the two tables), tv =
//	                  l1/2, max = largest cell error, baseline_l1? = the
//	                  baseline's l1
//	queries           one entry per query, in workload order: {label (e.g.
//	                  "sex=F,occupation=<null>"; query.Workload.Label), true,
//	                  synthetic, abs_error, distribution?, holdout?}
//	trace             {points, iterations (last iteration), first_objective,
//	                  last_objective, best_objective (lowest),
//	                  elapsed_seconds (at the last point), samples: up to
//	                  200 of {iteration, objective, elapsed_seconds},
//	                  evenly spread, first and last included}
//	run_time_seconds  wall time of the whole run
//	stages?           the stages done before the report, in order:
//	                  {name, seconds}
//	time_estimate?    the dry run's estimate of the solve stage:
//	                  {solve_seconds, solve_seconds_low,
//	                  solve_seconds_high, method}
//
// p95 is the nearest-rank 95th percentile (the ⌈0.95·m⌉-th smallest
// error); rmse is √(mean of squared errors).
//
// Fields are only ever added to synth.report/v1 (solver_params, budget,
// baseline, one_way, drilldown and baseline_l1 were); a reader ignores
// fields it does not know.
//
// The public report (schema synth.public-report/v1) has: schema, privacy
// (PublicStamp), title, note?, solver?, solver_params? (as above: public
// functions of the settings and the public shape, planned before the data
// is read), budget {epsilon, delta, rho?, neighbours?, accounting?}, rows,
// workload (as above) and bounds: [{scope ("workload", "family" or
// "marginal"), name, queries, error, confidence, method}].
//
// # report.html
//
// One page with inline CSS and inline SVG plots made with gonum/plot
// (vgsvg): the privacy statement (ε, δ, ρ, neighbours, accounting), the
// headline numbers with the baseline's beside them, the run's facts and
// the solver's parameters; the distribution of the queries' absolute
// errors (log scale), synthetic against true answers, the worst marginals
// by TV distance and, when a trace is given, the solver's objective
// estimate by iteration; a legend of every column (true, synthetic, abs
// error, L1, TV, max, D, baseline, <null>); each attribute's one-way bars
// (true vs synthetic); then the tables of the worst marginals, the
// drill-downs and the worst queries. The public page states the privacy
// and the solver's parameters and shows only the bounds. It has no scripts, no external fonts, images or style sheets,
// and no links, so it renders the same offline and leaks nothing to a
// server when opened.
package eval
