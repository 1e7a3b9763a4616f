// Package query turns a workload of linear queries into fast operators over
// the universe of a domain.
//
// A Workload is read from a JSON file (Parse, Load; see Spec for the
// format) or built with the shorthands KWay (all k-way marginals) and
// SampleKWay (N random k-way marginals with a seed, the GEM/RAP protocol).
// Its families are marginals (each cell one counting query), ranges and
// prefixes on ordered attributes, and predicates (conjunctions of
// "attribute ∈ {values}" and "attribute in [lo, hi]" over declared values);
// each family has a weight in (0, 1]. Queries are numbered 0..M()-1 in file
// order; a marginal's cells follow the universe's mixed radix (the last
// attribute varies fastest). The workload knows each query's label, range,
// weight and marginal set; the negation closure [A; -A] used for absolute
// error indexes 2m signed rows, s < m is +q_s and s >= m is -q_{s-m}
// (Signed).
//
// Exact answers on data come from the sparse counts (Workload.AnswerCounts),
// without a vector over the universe.
//
// Compile returns an Operator over an explicit distribution D (a []float64
// of length K): Answer (A·D), Adjoint (Aᵀ·y), AddQuery (x += s·q_j on q_j's
// support only) and Range. Every query reads the marginal table of its
// attribute set (its target). D is read once, sequentially, in tiles that
// stay in the cache: a tile is D with the codes of the leading attributes
// fixed. Per tile, a lattice of local tables, each its parent with a run of
// attributes summed out (planned from the public workload by dynamic
// programming under a cost model of the kernels), gives the tile's
// marginal on every target's remaining attributes, which is added into the
// target's table at the row of the tile's leading codes. Workers claim
// tiles and keep their own target tables, summed at the end. Adjoint runs
// the plan backwards and writes each tile of its output once. The
// reductions and broadcasts are AVX2 assembly on amd64 (the purego build
// tag selects the portable Go). The hot loops allocate nothing.
//
// Privacy: the package computes; it does not protect. Workloads are public
// input (the random sample of marginals uses a public, reproducible seed and
// is not a privacy mechanism), and AnswerCounts returns the exact, private
// statistics that a mechanism must noise before release. The sensitivity of
// one answer, as a fraction of n under replace-one neighbours, is
// (hi - lo)/n with lo, hi from Range.
package query
