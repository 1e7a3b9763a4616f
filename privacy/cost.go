package privacy

import (
	"fmt"
	"math"
)

// Kind says which guarantee a Cost states.
type Kind int

const (
	// ZCDP: ρ-zCDP (Bun and Steinke 2016); Rho is set.
	ZCDP Kind = iota
	// Pure: ε-DP with δ = 0; Eps is set, and Rho holds the zCDP cost the
	// same mechanism also satisfies (ε²/2 in general, ε²/8 for the
	// exponential mechanism).
	Pure
	// Approx: (ε, δ)-DP with δ > 0, as in the seeds' "paper" accounting
	// (advanced composition); Eps and Delta are set.
	Approx
)

// String returns "zcdp", "pure" or "approx".
func (k Kind) String() string {
	switch k {
	case ZCDP:
		return "zcdp"
	case Pure:
		return "pure"
	case Approx:
		return "approx"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// MarshalText encodes the kind as its name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText decodes a kind name.
func (k *Kind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "zcdp":
		*k = ZCDP
	case "pure":
		*k = Pure
	case "approx":
		*k = Approx
	default:
		return fmt.Errorf("privacy: unknown cost kind %q", b)
	}
	return nil
}

// Cost is the privacy cost of one run of a mechanism (or of a fixed
// composition of runs, see Times). Build it with the constructors, which
// validate their arguments; all fields are finite and non-negative.
type Cost struct {
	Kind  Kind    `json:"kind"`
	Rho   float64 `json:"rho,omitempty"`   // zCDP ρ (ZCDP and Pure)
	Eps   float64 `json:"eps,omitempty"`   // ε (Pure and Approx)
	Delta float64 `json:"delta,omitempty"` // δ (Approx)
}

func checkParam(name string, v float64) {
	if !(v >= 0) || math.IsInf(v, 0) {
		panic(fmt.Sprintf("privacy: %s = %v: must be finite and non-negative", name, v))
	}
}

// ZCDPCost is a ρ-zCDP cost.
func ZCDPCost(rho float64) Cost {
	checkParam("rho", rho)
	return Cost{Kind: ZCDP, Rho: rho}
}

// PureCost is the cost of an ε-DP mechanism; it also counts as ε²/2-zCDP
// (Bun and Steinke 2016, Proposition 1.4).
func PureCost(eps float64) Cost {
	checkParam("eps", eps)
	return Cost{Kind: Pure, Eps: eps, Rho: up(eps * eps / 2)}
}

// BoundedRangeCost is the cost of an ε-DP mechanism with ε-bounded range,
// such as the exponential mechanism: ε-DP and ε²/8-zCDP (Durfee and Rogers
// 2019 define bounded range; Cesar and Rogers 2021, "Bounding,
// Concentrating, and Truncating: Unifying Privacy Loss Composition for Data
// Analytics", prove the ε²/8 bound).
func BoundedRangeCost(eps float64) Cost {
	checkParam("eps", eps)
	return Cost{Kind: Pure, Eps: eps, Rho: up(eps * eps / 8)}
}

// ApproxCost is an (ε, δ)-DP cost, used for the seeds' "paper" accounting.
func ApproxCost(eps, delta float64) Cost {
	checkParam("eps", eps)
	if !(delta >= 0 && delta < 1) {
		panic(fmt.Sprintf("privacy: delta = %v: must be in [0, 1)", delta))
	}
	return Cost{Kind: Approx, Eps: eps, Delta: delta}
}

// GaussianCost is the cost of the Gaussian mechanism with ℓ2 sensitivity Δ
// and noise N(0, σ²) per coordinate: ρ = Δ²/(2σ²) (Bun and Steinke 2016,
// Proposition 1.6). It holds for the exact discrete Gaussian too (CKS 2020).
func GaussianCost(l2Sensitivity, sigma float64) Cost {
	checkParam("sensitivity", l2Sensitivity)
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		panic(fmt.Sprintf("privacy: sigma = %v: must be finite and positive", sigma))
	}
	rho := l2Sensitivity / sigma
	return ZCDPCost(up(rho * rho / 2))
}

// Times returns the cost of k runs composed: ρ adds up (zCDP composition),
// ε adds up for pure costs, and (ε, δ) add up for approximate ones (basic
// composition; see AdvancedComposition for the tighter "paper" bound).
func (c Cost) Times(k int) Cost {
	if k < 0 {
		panic(fmt.Sprintf("privacy: Cost.Times(%d)", k))
	}
	f := float64(k)
	return Cost{Kind: c.Kind, Rho: up(c.Rho * f), Eps: up(c.Eps * f), Delta: up(c.Delta * f)}
}

// String formats the cost for logs and the manifest.
func (c Cost) String() string {
	switch c.Kind {
	case Pure:
		return fmt.Sprintf("ε = %.6g (pure; ρ = %.6g)", c.Eps, c.Rho)
	case Approx:
		return fmt.Sprintf("(ε, δ) = (%.6g, %.3g)", c.Eps, c.Delta)
	}
	return fmt.Sprintf("ρ = %.6g", c.Rho)
}

// up raises a computed cost by a relative 2^-50 (a few ulps, more than the
// rounding error of the few operations that computed it), so that rounding
// never understates a cost; zero stays zero.
func up(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Nextafter(x*(1+0x1p-50), math.Inf(1))
}
