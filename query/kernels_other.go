//go:build !amd64 || purego

package query

// useAVX2 is false: the Go bodies of the kernels run.
var useAVX2 = false

func addToAVX2(dst, src []float64) { panic("query: no AVX2 kernel on this platform") }

func reduceSetAVX2(dst, src []float64, O, n, s int) { panic("query: no AVX2 kernel on this platform") }

func reduceLastAVX2(dst, src []float64, n int) { panic("query: no AVX2 kernel on this platform") }

func broadcastAVX2(dst, src []float64, O, n, s int, add bool) {
	panic("query: no AVX2 kernel on this platform")
}

func broadcastLastAVX2(dst, src []float64, n int, add bool) {
	panic("query: no AVX2 kernel on this platform")
}

func ntCopyAVX2(dst, src []float64) { panic("query: no AVX2 kernel on this platform") }
