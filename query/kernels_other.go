//go:build !amd64 || purego

package query

const useAVX2 = false

func addToAVX2(dst, src []float64) { panic("query: no AVX2 kernel on this platform") }

func reduceSetAVX2(dst, src []float64, O, n, s int) { panic("query: no AVX2 kernel on this platform") }
