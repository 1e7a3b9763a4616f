// Package continual releases a growing table every period under one budget
// for a fixed horizon of T periods, with the binary-tree mechanism of
// continual counting: each period's count tables enter one node per level
// of a binary tree over the periods, every node is released once with
// exact discrete Gaussian noise when its last period is added, and the
// tables of the first t periods are estimated from at most one node per
// level (Prefix), optionally re-weighted bottom-up (Estimator). The error
// of the period-t tables grows with log T, where re-releasing everything
// each period with ε/T grows with T (or √T under zCDP), and a period reads
// only its own rows.
//
// The plan (NewPlan) fixes from public inputs the horizon, the sets counted
// every period and the noise of every node, and costs the whole horizon at
// once; the state folder (Create, Load, Add) holds the plan and the noisy
// nodes (public) and the exact partial sums of the open nodes (private, see
// state.go). Privacy: NewPlan states the sensitivity under add/remove of
// one record of one period; a person whose rows span periods is not a unit
// of this accounting (the CLI refuses --privacy-unit).
package continual
