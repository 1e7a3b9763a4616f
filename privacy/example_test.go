package privacy_test

import (
	"fmt"
	"math"

	"github.com/dpsynth/synth/privacy"
)

// A release plans its whole budget from public settings, checks it, and
// charges it before reading any data.
func Example() {
	budget := privacy.Budget{Eps: 1, Delta: 1e-9}
	ledger, err := privacy.NewLedger(budget, nil)
	if err != nil {
		panic(err)
	}
	rho, _ := budget.Rho(privacy.Tight)
	fmt.Printf("ρ for %v: %.5f (tight), %.5f (standard)\n", budget, rho, privacy.EpsToRho(1, 1e-9, privacy.Standard))

	// Half the ρ for 1,000 exponential-mechanism selections, half for one
	// Gaussian measurement of a histogram (ℓ2 sensitivity √2/n, n public).
	const n, steps = 48842, 1000
	eps0 := privacy.CalibrateExponential(rho/2, steps)
	sigma := privacy.CalibrateGaussian(rho/2, 1, math.Sqrt2/n)
	plan := []privacy.Charge{
		{Label: "selections ×1000", Cost: privacy.ExponentialMechanismCost(eps0).Times(steps)},
		{Label: "noisy histogram", Cost: privacy.GaussianCost(math.Sqrt2/n, sigma)},
	}
	if err := ledger.Charge(plan...); err != nil {
		panic(err)
	}
	fmt.Printf("per-step ε0 = %.5f, σ = %.3g\n", eps0, sigma)
	fmt.Printf("spent ε = %.4f at δ = %g\n", ledger.Spent().Eps, ledger.Spent().Delta)

	// Anything more is refused, and the ledger is unchanged.
	err = ledger.Charge(privacy.Charge{Label: "one more", Cost: privacy.ExponentialMechanismCost(eps0)})
	fmt.Println(err != nil, len(ledger.Charges()))
	// Output:
	// ρ for (ε = 1, δ = 1e-09): 0.01497 (tight), 0.01178 (standard)
	// per-step ε0 = 0.00774, σ = 0.000237
	// spent ε = 1.0000 at δ = 1e-09
	// true 2
}

func ExampleExponentialMechanism() {
	r := privacy.NewSeeded(1) // tests and demos only
	fmt.Println(r.Describe())
	// Scores of 4 candidates (e.g. signed query errors); sensitivity 1/n.
	scores := []float64{0.01, 0.30, 0.02, -0.30}
	i := privacy.ExponentialMechanism(r, scores, 1, 1.0/1000)
	fmt.Println("selected", i)
	// Output:
	// seeded: not private against anyone who knows the seed
	// selected 1
}

func ExampleDiscreteGaussian() {
	g, err := privacy.NewDiscreteGaussian(3.5)
	if err != nil {
		panic(err)
	}
	// A noisy count with sensitivity 1 (replace one record).
	fmt.Println(g.Cost(1))
	r := privacy.NewSeeded(2)
	noisy := 1234 + g.Sample(r)
	fmt.Println(noisy > 1200 && noisy < 1270)
	// Output:
	// ρ = 0.0408163
	// true
}

func ExampleSnappedLaplace() {
	// Release a mean of values in [0, 1] over n = 1000 records (sensitivity
	// 1/n under replace-one) with ε = 0.5, on the grid GridFor picks.
	const sens = 1.0 / 1000
	m, err := privacy.NewSnappedLaplace(sens, 1, 0.5, privacy.GridFor(sens))
	if err != nil {
		panic(err)
	}
	v, err := m.Release(privacy.NewSeeded(3), 0.4217)
	if err != nil {
		panic(err)
	}
	fmt.Printf("granularity 2^%d, %v\n", privacy.GridFor(sens), m.Cost())
	fmt.Println(math.Abs(v-0.4217) < 0.05)
	// Output:
	// granularity 2^-20, ε = 0.5 (pure; ρ = 0.125)
	// true
}
