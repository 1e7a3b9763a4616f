//go:build !amd64 || purego

package vec

// useAVX2 is false: the Go bodies of the kernels run.
var useAVX2 = false

// useAVX512 is false: the Go bodies of the kernels run.
var useAVX512 = false

func expShiftSumAVX512(dst, src []float64, shift float64) (int, float64) { panic(noAsm) }

func expShiftSumAVX2(dst, src []float64, shift float64) (int, float64) { panic(noAsm) }
func subScaledMaxAVX2(dst, x, y []float64, s float64) float64          { panic(noAsm) }
func maxAVX2(x []float64) float64                                      { panic(noAsm) }
func scaleAVX2(x []float64, a float64)                                 { panic(noAsm) }

const noAsm = "vec: no assembly kernels in this build"
