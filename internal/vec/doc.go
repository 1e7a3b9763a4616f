// Package vec holds the dense-vector kernels the solvers run every
// iteration over the universe: a fast exponential, log-sum-exp
// normalisation (softmax) and reductions, parallel on a par.Team and
// allocation-free.
package vec
