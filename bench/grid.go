package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/solvers"
)

// Config selects and runs a grid. The zero value of every field but Out
// means the documented default.
type Config struct {
	// Exe is the synth binary that runs each release (default: the running
	// executable, os.Executable).
	Exe string
	// Protocols names the protocols to run (default DefaultProtocols).
	Protocols []string
	// Solvers names the solvers (default: every registered solver,
	// solvers.Names()); Settings their settings (default: tuned).
	Solvers  []string
	Settings []string
	// Epsilons, when set, replaces every protocol's ε grid.
	Epsilons []float64
	// Seeds, when positive, replaces every protocol's number of seeds; the
	// runs use seeds 1..Seeds.
	Seeds int
	// Delta, when positive, replaces every protocol's δ.
	Delta float64
	// Holdout, when positive, holds out this fraction of the records of each
	// release to estimate the population error.
	Holdout float64
	// Neighbours is the neighbouring relation of every release:
	// "add-remove" (default, the relation of AIM and MST) or "replace-one".
	Neighbours string
	// Model is every release's --model: "auto" (default), "explicit" or
	// "factored". The results' model column says which model each run used.
	Model string
	// Accounting is every release's --accounting: "auto" (default),
	// "exact" or "zcdp". The results' accounting column records it.
	Accounting string
	// Timeout limits each run (default 30 minutes).
	Timeout time.Duration
	// Out is the output folder (required).
	Out string
	// Resume keeps the successful rows of an existing results.csv and runs
	// only the missing points (failed points are run again). Force starts
	// over, replacing an existing results.csv. Without either, an existing
	// results.csv is an error.
	Resume, Force bool
	// Log receives one line per run (nil: discarded).
	Log io.Writer
	// Command, if set, is quoted in the summary as the command that made it.
	Command string
}

// DefaultTimeout is the per-run limit when Config.Timeout is zero.
const DefaultTimeout = 30 * time.Minute

// ConfigError is a problem with the benchmark's settings (a usage error).
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Msg: fmt.Sprintf(format, args...)}
}

// Point is one run of the grid.
type Point struct {
	Protocol   *Protocol
	Solver     string
	Setting    string
	Neighbours string
	// Model is the release's --model (auto, explicit or factored).
	Model string
	// Accounting is the release's --accounting (auto, exact or zcdp).
	Accounting string
	Epsilon    float64
	Delta      float64
	Seed       uint64
	Holdout    float64
}

// Key identifies the point in results.csv (for --resume).
func (p *Point) Key() string {
	return strings.Join([]string{p.Protocol.Name, p.Protocol.WorkloadName(), p.Solver, p.Setting, p.Neighbours,
		formatFloat(p.Epsilon), formatFloat(p.Delta), strconv.FormatUint(p.Seed, 10), formatFloat(p.Holdout)}, "|")
}

// String describes the point on one line.
func (p *Point) String() string {
	s := fmt.Sprintf("%s %s %s/%s ε=%s δ=%s seed=%d", p.Protocol.Name, p.Protocol.WorkloadName(), p.Solver, p.Setting,
		display(p.Epsilon), display(p.Delta), p.Seed)
	if p.Neighbours != "add-remove" {
		s += " " + p.Neighbours
	}
	if p.Holdout > 0 {
		s += " holdout=" + display(p.Holdout)
	}
	return s
}

// withDefaults returns a copy of cfg with the defaults filled in, checked.
func (cfg *Config) withDefaults() (*Config, error) {
	c := *cfg
	if len(c.Protocols) == 0 {
		c.Protocols = DefaultProtocols
	}
	c.Protocols = expandSuite(c.Protocols)
	if len(c.Solvers) == 0 {
		c.Solvers = solvers.Names()
	}
	if len(c.Settings) == 0 {
		c.Settings = []string{"tuned"}
	}
	if c.Neighbours == "" {
		c.Neighbours = "add-remove"
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Model == "" {
		c.Model = "auto"
	}
	if c.Accounting == "" {
		c.Accounting = "auto"
	}
	switch {
	case c.Neighbours != "replace-one" && c.Neighbours != "add-remove":
		return nil, configErrorf("--neighbours must be replace-one or add-remove, got %q", c.Neighbours)
	case c.Model != "auto" && c.Model != "explicit" && c.Model != "factored":
		return nil, configErrorf("--model must be auto, explicit or factored, got %q", c.Model)
	case release.CheckAccounting(c.Accounting) != nil:
		return nil, configErrorf("%v", release.CheckAccounting(c.Accounting))
	case c.Seeds < 0:
		return nil, configErrorf("--seeds must be positive, got %d", c.Seeds)
	case c.Delta < 0 || c.Delta >= 1 || math.IsNaN(c.Delta):
		return nil, configErrorf("--delta must be in [0, 1), got %v", c.Delta)
	case !(c.Holdout >= 0 && c.Holdout < 1):
		return nil, configErrorf("--holdout must be in [0, 1), got %v", c.Holdout)
	case c.Timeout < 0:
		return nil, configErrorf("--timeout must be positive, got %v", c.Timeout)
	}
	for _, e := range c.Epsilons {
		if !(e > 0) || math.IsInf(e, 0) {
			return nil, configErrorf("--eps: every ε must be positive and finite, got %v", e)
		}
	}
	known := solvers.Names()
	for _, s := range c.Solvers {
		if !slices.Contains(known, s) {
			return nil, configErrorf("--solvers: unknown solver %q (registered: %s)", s, strings.Join(known, ", "))
		}
	}
	for _, s := range c.Settings {
		if _, err := solvers.ParseSetting(s); err != nil || s == "" {
			return nil, configErrorf("--settings: unknown setting %q (want tuned or paper)", s)
		}
	}
	eps := make([]string, len(c.Epsilons))
	for i, e := range c.Epsilons {
		eps[i] = formatFloat(e)
	}
	for _, lists := range [][]string{c.Protocols, c.Solvers, c.Settings, eps} {
		if dup := duplicate(lists); dup != "" {
			return nil, configErrorf("%q is listed twice", dup)
		}
	}
	return &c, nil
}

func duplicate(xs []string) string {
	seen := make(map[string]bool, len(xs))
	for _, x := range xs {
		if seen[x] {
			return x
		}
		seen[x] = true
	}
	return ""
}

// Grid lists the points cfg asks for, in run order: by protocol, then ε,
// then solver and setting, then seed.
func Grid(cfg *Config) ([]Point, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var pts []Point
	for _, name := range c.Protocols {
		p, err := LookupProtocol(name)
		if err != nil {
			return nil, err
		}
		if p.UnitRows > 0 && (c.Neighbours != "add-remove" || c.Holdout > 0) {
			return nil, configErrorf("protocol %s bounds a privacy unit (each user at most %d rows): it needs --neighbours add-remove and no --holdout", p.Name, p.UnitRows)
		}
		eps, seeds, delta := p.Epsilons, p.Seeds, p.Delta
		if len(c.Epsilons) > 0 {
			eps = c.Epsilons
		}
		if c.Seeds > 0 {
			seeds = c.Seeds
		}
		if c.Delta > 0 {
			delta = c.Delta
		}
		for _, e := range eps {
			for _, s := range c.Solvers {
				for _, st := range c.Settings {
					for seed := 1; seed <= seeds; seed++ {
						pts = append(pts, Point{Protocol: p, Solver: s, Setting: st, Neighbours: c.Neighbours, Model: c.Model,
							Accounting: c.Accounting, Epsilon: e, Delta: delta, Seed: uint64(seed), Holdout: c.Holdout})
					}
				}
			}
		}
	}
	return pts, nil
}

// WriteGrid prints the grid for --dry-run: each protocol's shape, then one
// line per point; points already in done (keys) are marked "done".
func WriteGrid(w io.Writer, pts []Point, done map[string]bool) error {
	var last *Protocol
	todo := 0
	for i := range pts {
		pt := &pts[i]
		if pt.Protocol != last {
			last = pt.Protocol
			sh, err := last.Shape()
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s: dataset %s, %d attributes, %s cells, n = %s, workload %s (%d marginals, %s queries)\n",
				last.Name, last.Dataset, len(sh.Attributes), cellsText(sh.Cells), count(uint64(sh.N)), last.WorkloadName(), sh.Marginals, count(uint64(sh.M)))
		}
		mark := ""
		if done[pt.Key()] {
			mark = " (done)"
		} else {
			todo++
		}
		fmt.Fprintf(w, "  %s%s\n", pt, mark)
	}
	_, err := fmt.Fprintf(w, "%d runs, %d to do\n", len(pts), todo)
	return err
}

// formatFloat renders v in the shortest form that parses back to v.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// display renders v like formatFloat, without the exponent's padding zero
// (1e-9, not 1e-09), for people.
func display(v float64) string {
	return strings.NewReplacer("e-0", "e-", "e+0", "e+").Replace(formatFloat(v))
}

// expandSuite replaces the name "suite" in names by SuiteProtocols and
// "suite-2way" by Suite2WayProtocols.
func expandSuite(names []string) []string {
	var out []string
	for _, n := range names {
		switch n {
		case "suite":
			out = append(out, SuiteProtocols...)
		case "suite-2way":
			out = append(out, Suite2WayProtocols...)
		default:
			out = append(out, n)
		}
	}
	return out
}
