package continual

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/universe"
)

// Mechanisms of the continual release.
const (
	// Tree releases every node of the binary tree with the same discrete
	// Gaussian noise and estimates a prefix by the sum of its nodes.
	Tree = "tree"
	// Reweighted is Tree with the bottom-up re-weighting of the node
	// estimates (Estimator.Reweight): the same noise, the same cost, a
	// smaller variance on every prefix that uses a node above level 0.
	Reweighted = "tree-reweighted"
)

// Plan is what "synth continual init" fixes from public inputs only: the
// horizon, the measured attribute sets, the budget over the whole horizon
// and the noise of every node. It is public (it is written into the state
// and every manifest).
type Plan struct {
	Version int `json:"version"`
	// Horizon is T, the number of periods; Levels the tree's levels.
	Horizon int `json:"horizon"`
	Levels  int `json:"levels"`
	// Mechanism is Tree or Reweighted.
	Mechanism string `json:"mechanism"`
	// Domain is the domain file's content, DomainSHA256 its hash.
	Domain       json.RawMessage `json:"domain"`
	DomainSHA256 string          `json:"domain_sha256"`
	// Sets are the attribute sets counted every period, by name.
	Sets [][]string `json:"sets"`
	// Cells is the number of cells of each set's table.
	Cells []int `json:"cells"`
	// The budget for the whole horizon, its zCDP ρ, and the node noise σ
	// (counts) that spends it.
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Conversion string  `json:"conversion"`
	Rho        float64 `json:"rho"`
	Sigma      float64 `json:"sigma"`
	// Relation states the neighbouring relation.
	Relation string `json:"relation"`
	// MaxModelBytes caps the fitted model (0: the solver's default).
	MaxModelBytes uint64 `json:"max_model_bytes,omitempty"`
}

// Relation is the neighbouring relation of a continual release.
const Relation = "add/remove one record (row) of one period"

// NewPlan plans a continual release of T periods of the domain's table,
// measuring the count tables of sets every period, for (ε, δ) over the
// whole horizon.
//
// Privacy: a record of period s enters exactly one node per level (Levels
// nodes), and in each node one cell of each of the M tables, with weight 1
// (add/remove of one record): the vector of every released node value has
// ℓ2 sensitivity √(Levels·M). Every node gets exact discrete Gaussian
// noise of the same σ, chosen so that the Gaussian mechanism's cost
// Levels·M/(2σ²) is the ρ that (ε, δ) allows under the tight conversion.
// Nodes released at different periods compose: the whole horizon is this
// one mechanism, charged once, up front. Prefix estimates, the re-weighting
// and everything fitted from them are post-processing.
func NewPlan(domainJSON []byte, dom *universe.Domain, sets [][]int, T int, eps, delta float64, mechanism string) (*Plan, error) {
	switch {
	case T < 1:
		return nil, fmt.Errorf("continual: the horizon must be at least 1 period, got %d", T)
	case T > 1<<20:
		return nil, fmt.Errorf("continual: a horizon of %d periods is over the limit of %d", T, 1<<20)
	case len(sets) == 0:
		return nil, errors.New("continual: no attribute set to measure")
	case mechanism != Tree && mechanism != Reweighted:
		return nil, fmt.Errorf("continual: unknown mechanism %q (want %s or %s)", mechanism, Tree, Reweighted)
	}
	b := privacy.Budget{Eps: eps, Delta: delta}
	rho, err := b.Rho(privacy.Tight)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(domainJSON)
	p := &Plan{Version: 1, Horizon: T, Levels: Levels(T), Mechanism: mechanism, Domain: json.RawMessage(domainJSON),
		DomainSHA256: hex.EncodeToString(sum[:]), Epsilon: eps, Delta: delta, Conversion: privacy.Tight.String(), Rho: rho, Relation: Relation}
	for _, s := range sets {
		names := make([]string, len(s))
		cells := 1
		for i, a := range s {
			names[i] = dom.Attr(a).Name
			cells *= dom.Attr(a).Size()
			if cells > 1<<24 {
				return nil, fmt.Errorf("continual: the table of %v has more than 2^24 cells", names)
			}
		}
		p.Sets = append(p.Sets, names)
		p.Cells = append(p.Cells, cells)
	}
	// σ from ρ = L·M/(2σ²), raised a hair so that rounding never overspends.
	p.Sigma = math.Sqrt(p.sens2()/(2*rho)) * (1 + 1e-9)
	if _, err := p.Noise(); err != nil {
		return nil, err
	}
	l, err := privacy.NewLedger(b, &privacy.LedgerSettings{Conversion: privacy.Tight, Neighbours: Relation})
	if err != nil {
		return nil, err
	}
	if err := l.Charge(p.Charges()...); err != nil {
		return nil, fmt.Errorf("continual: internal error: the plan does not fit its own budget: %w", err)
	}
	return p, nil
}

// sens2 is the squared ℓ2 sensitivity of all the nodes' values together.
func (p *Plan) sens2() float64 { return float64(p.Levels * len(p.Sets)) }

// Noise returns the nodes' discrete Gaussian sampler.
func (p *Plan) Noise() (*privacy.DiscreteGaussian, error) {
	return privacy.NewDiscreteGaussian(p.Sigma)
}

// Charges is the plan's cost: one Gaussian mechanism over every node of
// the horizon.
func (p *Plan) Charges() []privacy.Charge {
	return []privacy.Charge{{
		Label: fmt.Sprintf("continual release: %d periods, binary tree of %d levels × %d tables, discrete Gaussian σ = %.4g per cell",
			p.Horizon, p.Levels, len(p.Sets), p.Sigma),
		Cost: privacy.GaussianCost(math.Sqrt(p.sens2()), p.Sigma),
	}}
}

// TotalCells is the length of one node's vector: the sets' tables one
// after the other.
func (p *Plan) TotalCells() int {
	n := 0
	for _, c := range p.Cells {
		n += c
	}
	return n
}

// Resolve returns the domain and the measured sets as attribute positions.
func (p *Plan) Resolve() (*universe.Domain, [][]int, error) {
	dom, err := universe.ParseDomain(p.Domain)
	if err != nil {
		return nil, nil, fmt.Errorf("continual: the state's domain: %w", err)
	}
	sets := make([][]int, len(p.Sets))
	for i, names := range p.Sets {
		for _, n := range names {
			a, ok := dom.Index(n)
			if !ok {
				return nil, nil, fmt.Errorf("continual: the state's set %v names %q, not in its domain", names, n)
			}
			sets[i] = append(sets[i], a)
		}
	}
	return dom, sets, nil
}
