package vec_test

import (
	"fmt"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/internal/vec"
)

// One trial step of entropic mirror descent from the uniform distribution
// over 4 cells, with the Armijo term the line search compares with the
// decrease of the loss.
func ExampleStep() {
	team := par.NewTeam(1)
	defer team.Close()
	theta := make([]float64, 4) // log-weights of the uniform distribution
	d := []float64{0.25, 0.25, 0.25, 0.25}
	grad := []float64{1, 0, 0, -1}
	theta2, d2 := make([]float64, 4), make([]float64, 4)
	logZ, dot := vec.NewStep(team).Apply(theta2, theta, grad, 0.5, d, d2)
	fmt.Printf("theta2 = %.2f\nd2 = %.4f\nlogZ = %.4f, dot = %.4f\n", theta2, d2, logZ, dot)
	// Output:
	// theta2 = [-0.50 0.00 0.00 0.50]
	// d2 = [0.1425 0.2350 0.2350 0.3875]
	// logZ = 1.4482, dot = 0.2449
}

func ExampleExpShiftSum() {
	src := []float64{0, 1, 2}
	dst := make([]float64, 3)
	sum := vec.ExpShiftSum(dst, src, 2) // e^(x − 2), so that the largest is 1
	fmt.Printf("%.4f %.4f\n", dst, sum)
	// Output:
	// [0.1353 0.3679 1.0000] 1.5032
}
