// Package vec holds the dense-vector kernels the solvers run every
// iteration over the universe: a fast exponential (Exp, ExpShiftSum),
// log-sum-exp normalisation (Softmax) and the fused trial step of entropic
// mirror descent (Step), parallel on a par.Team and allocation-free.
//
// On amd64 with AVX2 and FMA the slice kernels run in assembly (4 float64
// per instruction; the exponential uses AVX-512, 8 per instruction, where
// the CPU has it), chosen at run time with golang.org/x/sys/cpu; the
// portable Go versions run elsewhere or with the purego build tag, and the
// tests check both.
package vec
