package vec_test

import (
	"fmt"
	"math"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/internal/vec"
)

// One trial step of entropic mirror descent from the uniform distribution
// over 4 cells, shifted by its log-partition function log 4: the new
// distribution is z·e.
func ExampleStep() {
	team := par.NewTeam(1)
	defer team.Close()
	theta := make([]float64, 4) // log-weights of the uniform distribution
	grad := []float64{1, 0, 0, -1}
	theta2, e := make([]float64, 4), make([]float64, 4)
	logZ, z := vec.NewStep(team).Apply(theta2, theta, grad, 0.5, math.Log(4), e)
	for i := range e {
		e[i] *= z
	}
	fmt.Printf("theta2 = %.2f\nd2 = %.4f\nlogZ = %.4f\n", theta2, e, logZ)
	// Output:
	// theta2 = [-0.50 0.00 0.00 0.50]
	// d2 = [0.1425 0.2350 0.2350 0.3875]
	// logZ = 1.4482
}

func ExampleExpShiftSum() {
	src := []float64{0, 1, 2}
	dst := make([]float64, 3)
	sum := vec.ExpShiftSum(dst, src, 2) // e^(x − 2), so that the largest is 1
	fmt.Printf("%.4f %.4f\n", dst, sum)
	// Output:
	// [0.1353 0.3679 1.0000] 1.5032
}
