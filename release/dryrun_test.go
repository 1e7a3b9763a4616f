package release

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// rawDomain is ingest's raw test domain (7 attributes of mixed kinds).
var rawDomain = filepath.Join("..", "ingest", "testdata", "raw", "adult-raw-domain.json")

// dryCfg is a release whose data file is a named pipe that no one writes
// to: opening it would block, so a DryRun that returns never opened it.
func dryCfg(t *testing.T) *Config {
	t.Helper()
	data := filepath.Join(t.TempDir(), "private.csv")
	if err := syscall.Mkfifo(data, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	return &Config{Neighbours: solvers.ReplaceOne, Data: data, Domain: rawDomain, Marginals: 2,
		Epsilon: 1, Delta: 1e-9, Accounting: "zcdp", Out: filepath.Join(t.TempDir(), "out")}
}

// TestDryRunNoise: the noise scales the preview reads from the charge
// labels agree with the charges' own ρ (σ = Δ/√(2ρ), Δ = √2 for a marginal
// under replace-one); this pins the labels' wording. Add/remove, whose plan
// is staged, is TestDryRunNoiseStaged.
func TestDryRunNoise(t *testing.T) {
	for _, tt := range []struct {
		name  string
		set   func(*Config)
		sens2 float64
	}{
		{"replace-one", func(*Config) {}, 2},
		{"paper", func(c *Config) { c.Setting = "paper" }, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := dryCfg(t)
			tt.set(cfg)
			p, err := DryRun(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if p.Model != "explicit" || p.Solver != "project" {
				t.Fatalf("DryRun: model %s, solver %s; want explicit, project", p.Model, p.Solver)
			}
			if len(p.Noise) != len(p.Charges) || len(p.Noise) == 0 {
				t.Fatalf("DryRun: %d noise lines for %d charges", len(p.Noise), len(p.Charges))
			}
			for i, n := range p.Noise {
				c := p.Charges[i]
				if c.Rho == nil {
					t.Fatalf("charge %q has no ρ", c.Label)
				}
				want := math.Sqrt(tt.sens2 / (2 * *c.Rho))
				if tt.name == "paper" {
					want = n.Sigma // one σ for all families; the sensitivity is the family's
				}
				if math.Abs(n.Sigma-want) > 1e-3*want || math.Abs(n.HalfWidth95-1.959963984540054*n.Sigma) > 1e-9*n.Sigma {
					t.Errorf("noise of %s = σ %v, ±%v; want σ %v (ρ %v)", n.Table, n.Sigma, n.HalfWidth95, want, *c.Rho)
				}
				if tt.name != "paper" && (n.Cells < 2 || !strings.HasPrefix(n.Table, "marginal {")) {
					t.Errorf("noise line %+v: want a marginal with its cells", n)
				}
			}
			if p.NEstimateSE != 0 { // n is public
				t.Errorf("NEstimateSE = %v, want 0", p.NEstimateSE)
			}
		})
	}
}

// TestDryRunNoiseStaged: under add/remove, with zCDP accounting, the
// explicit plan draws a noisy
// record count, then measures its tables in one charge (solvers/stage.go).
// The preview lists the count's σ and the tables' σ as the plan states
// them, each agreeing with its charge's ρ (σ = Δ/√(2ρ), Δ = 1, the tables'
// charge split over the 7 one-way and 21 two-way tables, over the 21
// two-way tables alone when the count shows many records, or over the 7
// one-way tables alone when it shows too few), and n̂'s standard
// error: that of the inverse-variance mean of the count and the tables'
// totals (each of variance cells·σ²).
func TestDryRunNoiseStaged(t *testing.T) {
	cfg := dryCfg(t)
	cfg.Neighbours = solvers.AddRemove
	cfg.Accounting = "zcdp"
	p, err := DryRun(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Noise) != 4 || len(p.Charges) != 2 {
		t.Fatalf("DryRun: %d noise lines for %d charges, want 4 and 2", len(p.Noise), len(p.Charges))
	}
	count, upper, tabs, alone := p.Noise[0], p.Noise[1], p.Noise[2], p.Noise[3]
	if want := math.Sqrt(21 / (2 * *p.Charges[1].Rho)); !strings.HasPrefix(upper.Table, "each of the 21 order-2 marginals alone") ||
		math.Abs(upper.Sigma-want) > 1e-3*want {
		t.Errorf("noise line %+v: want the two-way tables alone at σ %v", upper, want)
	}
	if want := math.Sqrt(1 / (2 * *p.Charges[0].Rho)); count.Table != "the record count" || math.Abs(count.Sigma-want) > 1e-3*want {
		t.Errorf("noise line %+v: want the record count at σ %v", count, want)
	}
	const tables = 7 + 21
	if want := math.Sqrt(tables / (2 * *p.Charges[1].Rho)); !strings.HasPrefix(tabs.Table, "each of the 7 order-1 and 21 order-2 marginals") ||
		math.Abs(tabs.Sigma-want) > 1e-3*want || math.Abs(tabs.HalfWidth95-1.959963984540054*tabs.Sigma) > 1e-9*tabs.Sigma {
		t.Errorf("noise line %+v: want each of the tables at σ %v", tabs, want)
	}
	if want := math.Sqrt(7 / (2 * *p.Charges[1].Rho)); !strings.HasPrefix(alone.Table, "each of the 7 order-1 marginals alone") ||
		math.Abs(alone.Sigma-want) > 1e-3*want {
		t.Errorf("noise line %+v: want the one-way tables alone at σ %v", alone, want)
	}
	dom, err := universe.LoadDomain(rawDomain)
	if err != nil {
		t.Fatal(err)
	}
	den := 1 / (count.Sigma * count.Sigma)
	sizes := dom.Sizes()
	for a := range sizes {
		den += 1 / (float64(sizes[a]) * tabs.Sigma * tabs.Sigma)
		for b := a + 1; b < len(sizes); b++ {
			den += 1 / (float64(sizes[a]*sizes[b]) * tabs.Sigma * tabs.Sigma)
		}
	}
	if want := 1 / math.Sqrt(den); math.Abs(p.NEstimateSE-want) > 1e-3*want {
		t.Errorf("NEstimateSE = %v, want %v", p.NEstimateSE, want)
	}
}

// TestDryRunExactAccounting: by default (auto, no lifetime ledger) the
// staged plan is charged once, at the budget's (ε, δ), by the exact
// accountant; its σ are those of the zCDP plan
// shrunk by √gain, the gain the label states, 1.05–1.15 at δ = 10⁻⁹ and
// ε = 1 (continuous noise would give 1.106). With a lifetime ledger, auto
// is zCDP.
func TestDryRunExactAccounting(t *testing.T) {
	cfg := dryCfg(t)
	cfg.Neighbours = solvers.AddRemove
	cfg.Accounting = ""
	zc := *cfg
	zc.Accounting = "zcdp"
	exact, err := DryRun(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	zcdp, err := DryRun(context.Background(), &zc)
	if err != nil {
		t.Fatal(err)
	}
	if len(exact.Charges) != 1 {
		t.Fatalf("exact: %d charges, want 1", len(exact.Charges))
	}
	c := exact.Charges[0]
	if c.Rho != nil || c.Epsilon == nil || *c.Epsilon != 1 || c.Delta == nil || *c.Delta != 1e-9 {
		t.Errorf("exact charge %+v: want (ε, δ) = (1, 1e-9), the budget", c)
	}
	if !strings.Contains(c.Label, solvers.ExactChargePrefix) || !strings.Contains(exact.Budget.Accounting, "exact") {
		t.Errorf("exact charge %q, accounting %q: want the exact accountant named", c.Label, exact.Budget.Accounting)
	}
	if exact.Budget.Rho != 0 || exact.Total.Rho != nil || zcdp.Budget.Rho == 0 {
		t.Errorf("budget ρ %v, total ρ %v (zCDP's budget ρ %v): the exact plan is not ρ-zCDP at the budget's ρ, so none is stated",
			exact.Budget.Rho, exact.Total.Rho, zcdp.Budget.Rho)
	}
	if len(exact.Noise) != len(zcdp.Noise) {
		t.Fatalf("noise lines: %d exact, %d zCDP", len(exact.Noise), len(zcdp.Noise))
	}
	gain := zcdp.Noise[0].Sigma * zcdp.Noise[0].Sigma / (exact.Noise[0].Sigma * exact.Noise[0].Sigma)
	if gain < 1.05 || gain > 1.15 || !strings.Contains(c.Label, fmt.Sprintf("%.4g times the zCDP conversion's", gain)) {
		t.Errorf("gain %v (label %q): want 1.05–1.15, stated", gain, c.Label)
	}
	for i := range exact.Noise {
		if g := zcdp.Noise[i].Sigma * zcdp.Noise[i].Sigma / (exact.Noise[i].Sigma * exact.Noise[i].Sigma); math.Abs(g-gain) > 1e-3*gain {
			t.Errorf("noise line %d: σ² ratio %v, want the count's %v", i, g, gain)
		}
	}
	ledger := *cfg
	ledger.Ledger = "budget.json"
	if a, err := ledger.accounting(); err != nil || a != solvers.AccountZCDP {
		t.Errorf("auto with a ledger: accounting() = %v, %v; want zcdp", a, err)
	}
	bad := *cfg
	bad.Accounting = "pld"
	if _, err := bad.accounting(); err == nil {
		t.Error("accounting \"pld\": no error")
	}
}

// TestDryRunTotals: the preview's total is what the charges compose to, at
// most the budget; the memory and time estimates are filled in.
func TestDryRunTotals(t *testing.T) {
	cfg := dryCfg(t)
	p, err := DryRun(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Total.Epsilon > cfg.Epsilon || p.Total.Epsilon < 0.999*cfg.Epsilon || p.Total.Delta != cfg.Delta {
		t.Errorf("total (ε %v, δ %v), want just under (%v, %v)", p.Total.Epsilon, p.Total.Delta, cfg.Epsilon, cfg.Delta)
	}
	rho := 0.0
	for _, c := range p.Charges {
		rho += *c.Rho
	}
	if p.Total.Rho == nil || math.Abs(*p.Total.Rho-rho) > 1e-12 || rho > p.Budget.Rho {
		t.Errorf("total ρ %v, sum of charges %v, budget ρ %v", p.Total.Rho, rho, p.Budget.Rho)
	}
	if p.Memory.PeakBytes == 0 || !strings.Contains(p.Memory.Text, "estimated peak memory") {
		t.Errorf("memory %+v", p.Memory)
	}
	// The data is a FIFO: n is not known, and the explicit solve's steps
	// grow with it.
	if p.Time.Seconds != 0 || p.Time.Solve != 0 || !(p.Time.PerRecord > 0) || !strings.Contains(p.Time.Method, "n is not known") {
		t.Errorf("time %+v, want no estimate without n and the cost per record", p.Time)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings %q at ε = 1", p.Warnings)
	}
}

// TestDryRunSolvers: a factored plan that fits one model lists its
// marginals, an adaptive one its one-way measurement; a solver whose noise
// is in its selections lists none and says so.
func TestDryRunSolvers(t *testing.T) {
	cfg := dryCfg(t)
	cfg.Model = ModelFactored
	p, err := DryRun(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Model != "factored" || len(p.Noise) != len(p.Charges) || len(p.Noise) < 2 || !(p.Time.Solve > 0) || !strings.Contains(p.Time.Method, "junction-tree cells") {
		t.Errorf("factored, one model: model %s, %d noise lines, %d charges, time %+v", p.Model, len(p.Noise), len(p.Charges), p.Time)
	}
	cfg.Marginals, cfg.MaxModelBytes = 3, 16<<10 // the 3-way sets do not fit one model of 16 KiB
	if p, err = DryRun(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !(p.Time.Solve > 0) || !strings.Contains(p.Time.Method, "nominal fits") {
		t.Errorf("factored, rounds: time %+v", p.Time)
	}
	// One line per one-way table, the larger tables with the smaller σ.
	if p.Model != "factored" || len(p.Noise) != 7 {
		t.Errorf("factored: model %s, noise %+v, want the 7 one-way tables", p.Model, p.Noise)
	}
	for _, a := range p.Noise {
		for _, b := range p.Noise {
			if !strings.HasPrefix(a.Table, "marginal {") || a.Cells == 0 || (a.Cells > b.Cells && !(a.Sigma < b.Sigma)) {
				t.Errorf("factored: one-way noise %+v against %+v: want every table named, its cells, and a smaller σ for a larger table", a, b)
			}
		}
	}
	if !strings.Contains(p.NoiseNote, "adaptive rounds") {
		t.Errorf("factored: note %q does not mention the adaptive rounds", p.NoiseNote)
	}
	for _, s := range []string{"dpfw", "smd"} {
		cfg := dryCfg(t)
		cfg.Solver = s
		p, err := DryRun(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Noise) != 0 || !strings.Contains(p.NoiseNote, "no noise scale") || p.Time.Seconds != 0 || p.Time.Solve != 0 {
			t.Errorf("%s: noise %+v, note %q, time %+v", s, p.Noise, p.NoiseNote, p.Time)
		}
	}
}

// TestDryRunRefusals: the same refusals as a release, before any data.
func TestDryRunRefusals(t *testing.T) {
	var be *privacy.BudgetError
	var me *MemoryError
	var ce *ConfigError
	for _, tt := range []struct {
		name string
		set  func(*Config)
		is   func(error) bool
	}{
		{"pure budget", func(c *Config) { c.Delta = 0 }, func(err error) bool { return errors.As(err, &be) && errors.Is(err, privacy.ErrBudgetExceeded) }},
		{"memory", func(c *Config) { c.MemoryCap = 1 << 10 }, func(err error) bool { return errors.As(err, &me) }},
		{"solver", func(c *Config) { c.Solver = "nope" }, func(err error) bool { return errors.As(err, &ce) }},
		{"no out", func(c *Config) { c.Out = "" }, func(err error) bool { return errors.As(err, &ce) }},
		{"no data file", func(c *Config) { c.Data += ".missing" }, func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := dryCfg(t)
			tt.set(cfg)
			p, err := DryRun(context.Background(), cfg)
			if err == nil || !tt.is(err) {
				t.Errorf("DryRun = %+v, %v; want the refusal", p, err)
			}
			if _, err := os.Stat(cfg.Out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("DryRun made the output folder (%v)", err)
			}
		})
	}
}

// TestPlanOnly: the plan without a data file or output folder (synth
// inspect) is the dry run's.
func TestPlanOnly(t *testing.T) {
	cfg := dryCfg(t)
	want, err := DryRun(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Data, cfg.Out = "", ""
	got, err := PlanOnly(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Memory.Text != want.Memory.Text || got.Model != want.Model || len(got.Charges) != len(want.Charges) {
		t.Errorf("PlanOnly: model %s, %d charges, memory %q; DryRun: %s, %d, %q", got.Model, len(got.Charges), got.Memory.Text, want.Model, len(want.Charges), want.Memory.Text)
	}
	if cfg.Data != "" || cfg.Out != "" {
		t.Errorf("PlanOnly changed its config: %q, %q", cfg.Data, cfg.Out)
	}
}

func TestBudgetWarnings(t *testing.T) {
	for _, tt := range []struct {
		eps  float64
		want int
	}{{1, 0}, {10, 0}, {10.5, 1}, {100, 1}} {
		if got := BudgetWarnings(tt.eps, 1e-9); len(got) != tt.want {
			t.Errorf("BudgetWarnings(%v) = %q, want %d warnings", tt.eps, got, tt.want)
		}
	}
	for _, tt := range []struct {
		delta, n float64
		want     bool
	}{{1e-9, 1000, false}, {1e-3, 1000, true}, {1e-3, 999, false}, {0.01, 1000, true}, {0, 10, false}, {1e-3, 0, false}} {
		if got := DeltaWarning(tt.delta, tt.n, "n") != ""; got != tt.want {
			t.Errorf("DeltaWarning(%v, %v) = %v, want %v", tt.delta, tt.n, got, tt.want)
		}
	}
}

// TestEstimateWide: on 96 columns of 12 values with all 2-way marginals
// the earlier time model's universe term gave about 10^10 hours for a
// release of minutes; the model that follows the candidates and the rounds
// gives minutes.
func TestEstimateWide(t *testing.T) {
	cfg := dryCfg(t)
	cfg.Domain = wideDomain(t, 96, 12)
	p, err := DryRun(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !(p.Time.Solve > 10 && p.Time.Solve < 3600) {
		t.Errorf("DryRun on 96 columns, all 2-way: solve estimate %v s, want minutes (%+v)", p.Time.Solve, p.Time)
	}
}

// TestEstimateRange: the estimate's range is ÷3 to ×3 without adaptive
// rounds (all 2-way on 6 columns, an explicit solve), ÷3 to ×6 with them
// where they score no more marginals of three or more attributes than the
// calibration releases did (all 2-way on 64 columns; all 3-way on 24), and
// reaches ×10 past them (all 3-way on 64 columns: 41,664 sets), saying
// why. On a small table with rounds (16 columns, all 2-way, 200 rows) the
// top is the estimate plus the bound on the fits' passes over the model
// (roundsModelBound: 4 nominal rounds per attribute at ε = 1, one
// selection a fit, the default 32 MiB cap), above ×6.
func TestEstimateRange(t *testing.T) {
	for _, tt := range []struct {
		cols, order, rows int
		high              float64 // 0: the bound's
	}{
		{6, 2, 20000, 3},
		{64, 2, 20000, 6},
		{24, 3, 20000, 6},
		{64, 3, 20000, 10},
		{16, 2, 200, 0},
	} {
		cfg := dryCfg(t)
		cfg.Neighbours = solvers.AddRemove
		cfg.Domain = wideDomain(t, tt.cols, 4)
		cfg.Marginals = tt.order
		// Rows of codes: the dry run guesses n from the size only.
		cfg.Data = filepath.Join(t.TempDir(), "wide.csv")
		row := strings.Repeat("1,", tt.cols-1) + "1\n"
		if err := os.WriteFile(cfg.Data, []byte(strings.Repeat(row, tt.rows)), 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := DryRun(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		tm := p.Time
		if !(tm.Seconds > 0) {
			t.Fatalf("DryRun(%d columns, %d-way) = no estimate (%+v)", tt.cols, tt.order, tm)
		}
		high := tt.high
		if high == 0 {
			bound := roundsModelBound(map[string]float64{"rounds_nominal": float64(4 * tt.cols), "batch": 1, "max_model_bytes": 32 << 20})
			high = 1 + bound/tm.Seconds
			if high <= roundsSpread {
				t.Fatalf("DryRun(%d columns, %d rows): bound %g s within ×%g of the estimate %g s: the case tests nothing", tt.cols, tt.rows, bound, roundsSpread, tm.Seconds)
			}
		}
		if hi, lo := tm.High/tm.Seconds, tm.Seconds/tm.Low; math.Abs(hi-high) > 1e-9 || math.Abs(lo-3) > 1e-9 {
			t.Errorf("DryRun(%d columns, %d-way) range = ÷%g to ×%g, want ÷3 to ×%g", tt.cols, tt.order, lo, hi, high)
		}
		if widened := strings.Contains(tm.Method, "widened"); widened != (tt.high == extrapolatedSpread) {
			t.Errorf("DryRun(%d columns, %d-way) method = %q, want widened %v", tt.cols, tt.order, tm.Method, tt.high == extrapolatedSpread)
		}
		if raised := strings.Contains(tm.Method, "raised to"); raised != (high > timeSpread) {
			t.Errorf("DryRun(%d columns, %d-way) method = %q, want the rounds' range raised: %v", tt.cols, tt.order, tm.Method, high > timeSpread)
		}
		if bounded := strings.Contains(tm.Method, "and to the estimate plus"); bounded != (tt.high == 0) {
			t.Errorf("DryRun(%d columns, %d-way) method = %q, want the model's bound stated: %v", tt.cols, tt.order, tm.Method, tt.high == 0)
		}
	}
}

// TestRoundsModelBound: every nominal fit and the one-way fit, 130 passes
// each over half the cap at 1.2 ns a cell.
func TestRoundsModelBound(t *testing.T) {
	for _, tt := range []struct {
		nominal, batch, capBytes float64
		want                     float64
	}{
		{36, 1, 32 << 20, 37 * 130 * (32 << 20) / 16 * 1.2e-9},
		{128, 2, 32 << 20, 65 * 130 * (32 << 20) / 16 * 1.2e-9},
		{129, 0, 16 << 20, 130 * 130 * (16 << 20) / 16 * 1.2e-9}, // batch 0 reads as 1
		{800, 13, 8 << 20, 63 * 130 * (8 << 20) / 16 * 1.2e-9},   // ⌈800/13⌉ = 62 fits
	} {
		p := map[string]float64{"rounds_nominal": tt.nominal, "batch": tt.batch, "max_model_bytes": tt.capBytes}
		if got := roundsModelBound(p); math.Abs(got-tt.want) > 1e-9*tt.want {
			t.Errorf("roundsModelBound(%v) = %g, want %g", p, got, tt.want)
		}
	}
}

// wideDomain writes a domain of cols attributes of size values each.
func wideDomain(t *testing.T, cols, size int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("{")
	for i := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %d", fmt.Sprintf("c%02d", i), size)
	}
	b.WriteString("}")
	dom := filepath.Join(t.TempDir(), "wide-domain.json")
	if err := os.WriteFile(dom, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dom
}
