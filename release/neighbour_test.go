package release

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// The whole-pipeline neighbour test: releases on neighbouring datasets with
// the same seed must write public files (manifest, Parquet metadata, public
// report, file names, charge labels) that are identical except for the
// fields documented as noisy outputs (docs/PRIVACY.md, "Public files, field
// by field") and the timestamps. Anything else that differs is a function
// of the private data that escaped without noise.
//
// The pairs include ones that straddle every data-dependent threshold a rule
// could use: sizes on either side of the project rule's order threshold
// under add/remove (246/247 rows on this domain at ε = 1 with 3-way
// marginals), and one versus two repaired values.

const nbDomain = `{"attributes": [
  {"name": "a", "type": "categorical", "values": ["p", "q", "r", "o"], "other": "o"},
  {"name": "b", "type": "categorical", "values": ["s", "t", "u", "v"]},
  {"name": "c", "type": "integer", "min": 0, "max": 3},
  {"name": "d", "type": "numeric", "edges": [0, 1, 2, 3, 4]}
]}`

type nbRow [4]string

func nbRows(n int, seed uint64) []nbRow {
	r := rand.New(rand.NewPCG(seed, 7))
	as, bs := []string{"p", "q", "r", "o"}, []string{"s", "t", "u", "v"}
	rows := make([]nbRow, n)
	for i := range rows {
		rows[i] = nbRow{as[r.IntN(4)], bs[r.IntN(4)], fmt.Sprint(r.IntN(4)), fmt.Sprintf("%.2f", 4*r.Float64())}
	}
	return rows
}

func writeNbCSV(t *testing.T, path string, rows []nbRow) {
	t.Helper()
	var b strings.Builder
	b.WriteString("a,b,c,d\n")
	for _, r := range rows {
		b.WriteString(strings.Join(r[:], ",") + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeNbFiles writes rows to dir/data.csv and nbDomain to dir/domain.json
// and returns both paths.
func writeNbFiles(t *testing.T, dir string, rows []nbRow) (data, dom string) {
	t.Helper()
	data = filepath.Join(dir, "data.csv")
	writeNbCSV(t, data, rows)
	dom = filepath.Join(dir, "domain.json")
	if err := os.WriteFile(dom, []byte(nbDomain), 0o644); err != nil {
		t.Fatal(err)
	}
	return data, dom
}

// nbCase is one pair of neighbouring datasets and the release settings.
type nbCase struct {
	name string
	a, b []nbRow
	cfg  func(*Config)
}

func replaceLast(rows []nbRow, r nbRow) []nbRow {
	out := append([]nbRow(nil), rows...)
	out[len(out)-1] = r
	return out
}

func nbCases() []nbCase {
	base := nbRows(246, 1)
	plus := append(append([]nbRow(nil), base...), nbRow{"q", "t", "2", "1.5"})
	changed := replaceLast(base, nbRow{"r", "v", "0", "3.9"})
	twoMarg := func(c *Config) { c.Marginals = 2 }
	threeMarg := func(c *Config) { c.Marginals = 3 }
	addRemove := func(c *Config) { c.Neighbours = solvers.AddRemove }
	solver := func(name string) func(*Config) { return func(c *Config) { c.Solver = name } }
	all := func(fs ...func(*Config)) func(*Config) {
		return func(c *Config) {
			for _, f := range fs {
				f(c)
			}
		}
	}
	// One clamped value against two (replace-one: the last record changes
	// from in-range to out-of-range); likewise for an unknown category.
	oneClamp := replaceLast(base, nbRow{"p", "s", "9", "1.0"})
	oneClamp[0] = nbRow{"p", "s", "7", "1.0"}
	twoClampB := append([]nbRow(nil), oneClamp...)
	twoClampB[len(twoClampB)-1] = nbRow{"p", "s", "1", "1.0"}
	oneOther := replaceLast(base, nbRow{"zz", "s", "1", "1.0"})
	oneOther[1] = nbRow{"yy", "s", "1", "1.0"}
	twoOtherB := append([]nbRow(nil), oneOther...)
	twoOtherB[len(twoOtherB)-1] = nbRow{"p", "s", "1", "1.0"}
	clamp := func(c *Config) { c.Policy.Clamp = true }
	other := func(c *Config) { c.Policy.UnknownToOther = true }

	cases := []nbCase{
		{"project/add-remove/threshold", base, plus, all(threeMarg, addRemove)},
		{"project/add-remove/public-report", base, plus, all(threeMarg, addRemove, func(c *Config) { c.PublicReport = true })},
		{"project/add-remove/holdout", base, plus, all(twoMarg, addRemove, func(c *Config) { c.Holdout = 0.2 })},
		{"project/add-remove/small", base[:40], base[:41], all(twoMarg, addRemove)},
		{"project/replace-one/clamp", oneClamp, twoClampB, all(twoMarg, clamp)},
		{"project/replace-one/other", oneOther, twoOtherB, all(twoMarg, other)},
		{"project/add-remove/clamp", oneClamp, append(append([]nbRow(nil), oneClamp...), nbRow{"p", "s", "8", "1.0"}), all(twoMarg, clamp, addRemove)},
		{"project/replace-one/public-report", base, changed, all(threeMarg, func(c *Config) { c.PublicReport = true })},
		{"project/replace-one/holdout", base, changed, all(twoMarg, func(c *Config) { c.Holdout = 0.25 })},
		{"project/replace-one/paper", base, changed, all(twoMarg, func(c *Config) { c.Setting = "paper" })},
		{"project/add-remove/paper", base, plus, all(twoMarg, addRemove, func(c *Config) { c.Setting = "paper" })},
	}
	factored := func(c *Config) { c.Model = ModelFactored }
	cases = append(cases,
		nbCase{"project/replace-one/factored", base, changed, all(threeMarg, factored)},
		nbCase{"project/add-remove/factored", base, plus, all(threeMarg, factored, addRemove)},
		nbCase{"project/replace-one/factored-clamp", oneClamp, twoClampB, all(twoMarg, factored, clamp)},
	)
	for _, s := range []string{"dpfw", "smd", "dpam", "mwem"} {
		cases = append(cases,
			nbCase{s + "/replace-one", base, changed, all(twoMarg, solver(s))},
			nbCase{s + "/add-remove", base, plus, all(twoMarg, solver(s), addRemove)},
			// dpam is refused on the factored model (before reading).
			nbCase{s + "/replace-one/factored", base, changed, all(twoMarg, solver(s), factored)},
		)
	}
	cases = append(cases,
		nbCase{"mwem/replace-one/pure", base, changed, all(twoMarg, solver("mwem"), func(c *Config) { c.Setting = "paper"; c.Delta = 0 })},
		nbCase{"dpfw/replace-one/public-report", base, changed, all(twoMarg, solver("dpfw"), func(c *Config) { c.PublicReport = true })},
	)
	// Add/remove is the zero value: the replace-one cases say so.
	for i := range cases {
		if strings.Contains(cases[i].name, "/replace-one") {
			cases[i].cfg = all(cases[i].cfg, func(c *Config) { c.Neighbours = solvers.ReplaceOne })
		}
	}
	return cases
}

// nbRun releases rows and returns the public artefacts, or the error.
func nbRun(t *testing.T, dir string, rows []nbRow, set func(*Config)) (map[string]string, error) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data.csv")
	writeNbCSV(t, data, rows)
	// The public inputs are the same files for both neighbours.
	dom := filepath.Join(filepath.Dir(dir), "domain.json")
	if err := os.WriteFile(dom, []byte(nbDomain), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(filepath.Dir(dir), "release.json")
	if err := os.WriteFile(conf, []byte(`{"epsilon": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := uint64(11)
	cfg := &Config{
		Data: data, Domain: dom, Epsilon: 1, Delta: 1e-9, Out: filepath.Join(dir, "out"),
		Seed: &seed, Sampling: Balanced, ConfigFile: conf,
		// The manifest names inputs by path: give both runs the same names.
		DataName: "data.csv", DomainName: "domain.json", Version: "test",
	}
	set(cfg)
	_, err := Run(context.Background(), cfg, nil)
	if err != nil {
		return nil, err
	}
	return publicArtefacts(t, cfg), nil
}

// publicArtefacts is PublicFiles of a release, failing the test on error.
func publicArtefacts(t *testing.T, cfg *Config) map[string]string {
	t.Helper()
	out, err := PublicFiles(cfg.Out, cfg.Neighbours == solvers.AddRemove)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNeighbourPublicFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs about 50 releases")
	}
	for _, c := range nbCases() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ga, errA := nbRun(t, filepath.Join(dir, "a"), c.a, c.cfg)
			gb, errB := nbRun(t, filepath.Join(dir, "b"), c.b, c.cfg)
			if (errA == nil) != (errB == nil) {
				t.Fatalf("one neighbour released and the other did not: %v / %v", errA, errB)
			}
			if errA != nil {
				// A refusal must not depend on the data either, and must come
				// before anything is written.
				if errA.Error() != errB.Error() {
					t.Fatalf("refusals differ:\n%v\n%v", errA, errB)
				}
				var ce *ConfigError
				if !errors.As(errA, &ce) && !strings.Contains(errA.Error(), "budget") {
					t.Fatalf("refused after reading the data? %v", errA)
				}
				return
			}
			keys := map[string]bool{}
			for k := range ga {
				keys[k] = true
			}
			for k := range gb {
				keys[k] = true
			}
			for k := range keys {
				if ga[k] != gb[k] {
					t.Errorf("%s differs between neighbouring datasets:\n--- %d rows\n%s\n--- %d rows\n%s", k, len(c.a), ga[k], len(c.b), gb[k])
				}
			}
		})
	}
}

// TestNeighbourRepairsNotPublished: the repair counts reach the operator
// through Hooks.Internal and never the manifest.
func TestNeighbourRepairsNotPublished(t *testing.T) {
	dir := t.TempDir()
	rows := nbRows(60, 3)
	rows[0][2], rows[1][2] = "9", "-4"
	data, dom := writeNbFiles(t, dir, rows)
	seed := uint64(1)
	var got []string
	cfg := &Config{Data: data, Domain: dom, Epsilon: 1, Delta: 1e-9, Marginals: 2, Out: filepath.Join(dir, "out"),
		Seed: &seed, Policy: universe.Policy{Clamp: true}}
	out, err := Run(context.Background(), cfg, &Hooks{Internal: func(m string) { got = append(got, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], `2 values of "c" clamped`) {
		t.Errorf("internal messages = %q, want one about 2 clamped values of c", got)
	}
	man, err := os.ReadFile(filepath.Join(out.Dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(man), "clamp") {
		t.Errorf("manifest mentions the repairs:\n%s", man)
	}
	for _, w := range out.Warnings {
		if strings.Contains(w, "clamp") {
			t.Errorf("outcome warning %q carries a repair count", w)
		}
	}
	rep, err := os.ReadFile(filepath.Join(out.Dir, ReportJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rep), `2 values of \"c\" clamped`) {
		t.Errorf("the internal report does not state the repairs")
	}
}

// TestSpentNeverAboveBudget: the manifest's spent ε never exceeds the
// budget's, however small the budget.
func TestSpentNeverAboveBudget(t *testing.T) {
	for _, eps := range []float64{1e-300, 1e-30, 0.5} {
		dir := t.TempDir()
		data, dom := writeNbFiles(t, dir, nbRows(50, 2))
		seed := uint64(1)
		// Rows fixed: at these budgets the noisy record count n̂, the default
		// number of rows, can be in the billions.
		out, err := Run(context.Background(), &Config{Data: data, Domain: dom, Epsilon: eps, Delta: 1e-9, Marginals: 2,
			Rows: 50, Out: filepath.Join(dir, "out"), Seed: &seed}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out.Dir, ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseManifest(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Privacy.Total.Epsilon; !(got <= eps) || out.Spent > eps {
			t.Errorf("--epsilon %g: manifest total ε = %g, outcome %g, want at most the budget", eps, got, out.Spent)
		}
	}
}

// TestRowsMemoryRefused: the explicit model holds its rows while it draws
// them, so rows that would take the release over its memory cap are
// refused: --rows before anything is read, and the default, the noisy
// record count n̂ (far above n at a tiny budget when its noise is
// positive), after the solve and before any row is written. Of ten seeds
// at ε = 1e-30 (n̂'s standard error is in the billions) about half draw a
// positive noise; the test needs one, and a seed that draws a negative one
// (n̂ = 1) to release normally.
func TestRowsMemoryRefused(t *testing.T) {
	dir := t.TempDir()
	data, dom := writeNbFiles(t, dir, nbRows(50, 2))
	const capB = 64 << 20
	var me *MemoryError
	_, err := Run(context.Background(), &Config{Data: data, Domain: dom, Epsilon: 1, Delta: 1e-9, Marginals: 2,
		Rows: 1 << 30, MemoryCap: capB, Out: filepath.Join(dir, "out-rows")}, nil)
	if !errors.As(err, &me) || me.Spent || !strings.Contains(err.Error(), "nothing was read") {
		t.Errorf("--rows 2^30 under a 64 MiB cap: %v, want a memory refusal before reading", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out-rows")); err == nil {
		t.Error("--rows refused, but the output folder exists")
	}
	refused, released := 0, 0
	for seed := uint64(1); seed <= 10; seed++ {
		out := filepath.Join(dir, fmt.Sprintf("out-%d", seed))
		_, err := Run(context.Background(), &Config{Data: data, Domain: dom, Epsilon: 1e-30, Delta: 1e-9, Marginals: 2,
			MemoryCap: capB, Out: out, Seed: &seed}, nil)
		switch {
		case err == nil:
			released++
		case errors.As(err, &me) && me.Spent && strings.Contains(err.Error(), "noisy record count"):
			refused++
			if _, err := os.Stat(filepath.Join(out, ManifestFile)); err == nil {
				t.Errorf("seed %d: refused, but a manifest was written", seed)
			}
		default:
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	if refused == 0 || released == 0 {
		t.Errorf("ten seeds: %d refused, %d released; want some of each", refused, released)
	}
}
