//go:build !amd64 || purego

package query

const useAVX2 = false

func addToAVX2(dst, src []float64) { panic("query: no AVX2 kernel on this platform") }
