// Package model holds a factored distribution over a product domain: the
// log-linear model D(x) ∝ exp(Σ_c θ_c(x_c)) that the entropic solvers
// produce, kept as a junction tree instead of a dense vector over the
// universe.
//
// A Tree is the public plan: from the attribute sizes and the attribute
// sets that carry log-potentials it triangulates the interaction graph by a
// deterministic greedy elimination order, keeps the maximal cliques and
// joins them into a clique tree (a maximum-weight spanning tree on the
// separators). Its cost (cells, bytes) is known before any table exists, so
// a caller can refuse a model that would not fit a memory cap.
//
// A Model holds one log-potential table θ_c per clique. Calibrate runs
// sum-product belief propagation on the clique tree in log space (two
// passes, exact per-separator log-sum-exp where linear sums would
// underflow) and gives log Z and the clique beliefs; Marginal reads any
// marginal of D from a covering clique's belief, by carrying one
// attribute (then a pair) through the tree for a pair or triple that no
// clique covers when that costs less (pairs.go), or else by exact variable
// elimination over the tree; AddTheta is the
// mirror-descent update θ_c += s·g. Marginals and AddThetas do the same for
// a list of sets at once: each list's plans (covering cliques, elimination
// orders) are compiled once and cached, the conditionals that cross-clique
// sets read are computed once per call, and the sets or cliques are split
// over the workers; they give the same bits as the one-set calls. Drift
// bounds how far any marginal moved between two calibrations on one tree
// from the cliques' beliefs alone, so that a caller can skip recomputing the
// marginals that cannot have moved enough to matter. Sample
// draws rows along the tree with controlled (systematic) rounding or
// independently, streaming in batches.
//
// Tables over an attribute set are in the set's mixed radix: the last
// attribute of the set varies fastest, as in universe.Domain and the query
// package's marginals. Calibrate, Marginal (inside a clique), AddTheta,
// and Marginals and AddThetas (after the first call with a list of sets)
// run on a par.Team and allocate nothing.
package model
