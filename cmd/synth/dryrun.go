package main

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/universe"
)

// runDryRun prints the plan of a release (synth release --dry-run): no data
// is read and nothing is written.
func runDryRun(ctx context.Context, e *env, o *releaseOptions, cfg *release.Config) error {
	p, err := release.DryRun(ctx, cfg)
	if err != nil {
		return err
	}
	log, err := o.logger(e)
	if err != nil {
		return err
	}
	for _, wn := range p.Warnings {
		o.warn(e, log, wn)
	}
	if o.JSON {
		return printJSONLine(e.stdout, p)
	}
	printPreview(e.stdout, p)
	return nil
}

// maxNoiseLines caps the measured tables listed one by one.
const maxNoiseLines = 6

func printPreview(w io.Writer, p *release.Preview) {
	fmt.Fprintf(w, "plan (dry run: the data was not read, nothing was written)\n\n")
	fmt.Fprintf(w, "solver: %s (%s)\n", p.Solver, p.Setting)
	fmt.Fprintf(w, "universe: %s cells (10^%.2f); workload: %s, %s queries\n", p.Universe, p.UniverseLog10, p.Workload, fmtInt(int64(p.Queries)))
	fmt.Fprintf(w, "%s", p.Memory.Text)
	fmt.Fprintf(w, "  memory cap: %s (--memory-cap)\n", universe.FormatBytes(new(big.Int).SetUint64(p.Memory.CapBytes)))

	fmt.Fprintf(w, "\nbudget: ε = %g, δ = %g", p.Budget.Epsilon, p.Budget.Delta)
	if p.Budget.Rho > 0 {
		fmt.Fprintf(w, " (ρ = %.6g zCDP, %s conversion)", p.Budget.Rho, p.Budget.Conversion)
	}
	fmt.Fprintf(w, "; neighbours: %s; accounting: %s\n", p.Budget.Neighbours, p.Budget.Accounting)
	fmt.Fprintf(w, "charges (%d):\n", len(p.Charges))
	for i, c := range p.Charges {
		if i == maxNoiseLines && len(p.Charges) > maxNoiseLines+1 {
			fmt.Fprintf(w, "  … %d more (--json lists them all)\n", len(p.Charges)-i)
			break
		}
		fmt.Fprintf(w, "  %s: %s\n", costString(c), c.Label)
	}
	fmt.Fprintf(w, "total: ε = %.6g at δ = %g", p.Total.Epsilon, p.Total.Delta)
	if p.Total.Rho != nil {
		fmt.Fprintf(w, " (ρ = %.6g)", *p.Total.Rho)
	}
	fmt.Fprintf(w, ", within the budget\n")
	if l := p.Ledger; l != nil {
		fmt.Fprintf(w, "lifetime budget: %s has ε = %.6g (ρ = %.6g) left; this release would fit (the dry run reserves nothing)\n", l.Where, l.RemainingEps, l.RemainingRho)
	}

	fmt.Fprintf(w, "\ntime: ")
	if p.Time.Seconds > 0 {
		fmt.Fprintf(w, "release about %s (%s to %s)", fmtSeconds(p.Time.Seconds), fmtSeconds(p.Time.Low), fmtSeconds(p.Time.High))
		var parts []string
		for _, s := range p.Time.Stages {
			if s.Seconds > 0 {
				parts = append(parts, s.Name+" "+fmtSeconds(s.Seconds))
			}
		}
		fmt.Fprintf(w, ": %s\n", strings.Join(parts, ", "))
	} else if p.Time.Solve > 0 {
		fmt.Fprintf(w, "solve about %s; the release is not estimated\n", fmtSeconds(p.Time.Solve))
	} else {
		fmt.Fprintf(w, "not estimated\n")
	}
	fmt.Fprintf(w, "  %s\n", p.Time.Method)

	fmt.Fprintf(w, "\nnoise of the measured tables (a-priori, 95%%: ±1.96σ in counts):\n")
	for i, n := range p.Noise {
		if i == maxNoiseLines && len(p.Noise) > maxNoiseLines+1 {
			fmt.Fprintf(w, "  … %d more (--json lists them all)\n", len(p.Noise)-i)
			break
		}
		cells := ""
		if n.Cells > 1 {
			cells = fmt.Sprintf(", %s cells", fmtInt(n.Cells))
		}
		fmt.Fprintf(w, "  %s%s: σ = %.4g, ±%.4g counts\n", n.Table, cells, n.Sigma, n.HalfWidth95)
	}
	fmt.Fprintf(w, "  %s\n", p.NoiseNote)
	if p.NEstimateSE > 0 {
		fmt.Fprintf(w, "\nrecord count: n will be estimated with a standard error of %.0f records; the release warns when the estimate is below %.0f (the budget does not resolve the table)\n", p.NEstimateSE, 2*p.NEstimateSE)
	}
}

func costString(c release.Charge) string {
	var parts []string
	if c.Rho != nil {
		parts = append(parts, fmt.Sprintf("ρ = %.4g", *c.Rho))
	}
	if c.Epsilon != nil {
		parts = append(parts, fmt.Sprintf("ε = %.4g", *c.Epsilon))
	}
	if c.Delta != nil {
		parts = append(parts, fmt.Sprintf("δ = %.3g", *c.Delta))
	}
	return strings.Join(parts, ", ")
}

func fmtSeconds(s float64) string {
	switch {
	case s < 1:
		return fmt.Sprintf("%.2g s", s)
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 7200:
		return fmt.Sprintf("%.0f min", s/60)
	}
	return fmt.Sprintf("%.1f h", s/3600)
}
