// Package solvers holds the private optimisation methods that turn a
// workload and the data into a synthetic distribution over the universe:
// min over distributions D of the maximum workload error (problem (P) of
// seed 001), solved privately.
//
//   - dpfw: DP Frank-Wolfe on the entropy-regularised dual (seed 001,
//     Algorithm 1).
//   - dpam: DP accelerated mirror descent on the Gaussian-smoothed primal
//     (seed 001, Algorithm 2).
//   - smd: entropic stochastic mirror descent for both players, the query
//     player sampled by the exponential mechanism (seed 000, Algorithm 1).
//   - mwem: the classic baseline (Hardt, Ligett and McSherry 2012).
//   - project: measure-and-project: Gaussian noise on marginals once, then a
//     non-private fit of D.
//
// Every solver implements Solver: Plan computes the privacy charges from the
// public Shape (before any record is read), Solve charges them to the ledger
// and runs. Each solver has a Tuned (default) and, where the seeds print
// one, a Paper setting. Solvers see the workload through the small Operator
// interface, declared here, which *query.Operator implements.
//
// Privacy: every solver's doc comment derives its per-step sensitivity under
// both relations, replace-one with n public and add/remove of a unit of up
// to K records (the default; n private: project estimates it from its noisy
// tables, the seed solvers spend CountShare of their budget on a noisy
// count, noisycount.go), and names the composition it uses.
package solvers
