package bench

import (
	"bytes"
	"encoding/csv"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/universe"
)

func TestProtocolShapes(t *testing.T) {
	tests := []struct {
		name       string
		attributes int
		k          uint64
		marginals  int
		m          int
	}{
		{"adult-reduced", 7, 336000, 35, 14955},
		{"titanic", 9, 89159616, 84, 173703},
		{"adult-gem", 9, 4536000, 64, 15015},
		{"adult", 14, 641263392000000000, 364, 20894536}, // 6.4e17 cells: factored only
		{"titanic-no-age", 8, 979776, 56, 20914},
		{"tiny", 16, 65536, 120, 480},
		{"nltcs", 16, 65536, 560, 4480},
		{"cps1988", 7, 127680, 35, 13384},
		{"fertility", 8, 50880, 56, 13780},
		{"healthins", 11, 2150400, 165, 23776},
		{"slid", 5, 19448, 10, 6065},
		{"smokeban", 7, 2720, 35, 1810},
		{"gssvocab", 8, 20528640, 56, 62440},
	}
	for _, tt := range tests {
		p, err := LookupProtocol(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		sh, err := p.Shape()
		if err != nil {
			t.Fatalf("%s: Shape: %v", tt.name, err)
		}
		if len(sh.Attributes) != tt.attributes || sh.K != tt.k || sh.Cells.Uint64() != tt.k || sh.Marginals != tt.marginals || sh.M != tt.m {
			t.Errorf("%s: Shape() = %d attributes, k %d, %d marginals, m %d; want %d, %d, %d, %d",
				tt.name, len(sh.Attributes), sh.K, sh.Marginals, sh.M, tt.attributes, tt.k, tt.marginals, tt.m)
		}
	}
	if _, err := LookupProtocol("nope"); !isConfigError(err) {
		t.Errorf("LookupProtocol(nope) = %v, want a ConfigError", err)
	}
}

// TestPrepareRestricted: a restricted protocol's files hold exactly the
// chosen columns of every record, and its domain parses to the same shape.
func TestPrepareRestricted(t *testing.T) {
	p, err := LookupProtocol("titanic-no-age")
	if err != nil {
		t.Fatal(err)
	}
	data, domain, err := p.Prepare(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dom, err := universe.LoadDomain(domain)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Survived", "Pclass", "Sex", "SibSp", "Parch", "Fare", "Embarked", "Cabin"}
	if !slices.Equal(dom.Names(), want) {
		t.Errorf("domain attributes = %v, want %v (the shipped order without Age)", dom.Names(), want)
	}
	if k, _ := dom.Size(); k != 979776 {
		t.Errorf("universe = %d cells, want 979,776", k)
	}
	f, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := datasets.Lookup("titanic")
	if len(recs) != ds.Rows+1 || !slices.Equal(recs[0], want) {
		t.Errorf("restricted CSV: %d records, header %v; want %d, %v", len(recs), recs[0], ds.Rows+1, want)
	}
	// The first shipped row is 2,1,22,1,0,0,8,2,0 in the order
	// Pclass,Sex,Age,SibSp,Parch,Fare,Cabin,Embarked,Survived.
	if got, want := strings.Join(recs[1], ","), "0,2,1,1,0,0,2,8"; got != want {
		t.Errorf("first row = %s, want %s", got, want)
	}
}

func TestRestrictCSVErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"a,b\n1,2\n", `no column "c"`},
		{"a,b,c\n1,2,3\n4,5\n", "data row 2"},
		{"", "reading the header"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		err := restrictCSV(&out, strings.NewReader(tt.in), "x.csv", []string{"c", "a"})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "x.csv") {
			t.Errorf("restrictCSV(%q) = %v, want an error naming x.csv and %q", tt.in, err, tt.want)
		}
	}
}

func TestGrid(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want int
	}{
		{"defaults", Config{Solvers: []string{"project"}}, 3*5*5 + 3*3},
		{"adult", Config{Protocols: []string{"adult"}, Solvers: []string{"project"}}, 3 * 3},
		{"tiny", Config{Protocols: []string{"tiny"}, Solvers: []string{"project"}}, 2},
		{"settings", Config{Protocols: []string{"adult-reduced"}, Solvers: []string{"project"}, Settings: []string{"tuned", "paper"}}, 2 * 5 * 5},
		{"eps and seeds", Config{Protocols: []string{"adult-reduced", "tiny"}, Solvers: []string{"project"}, Epsilons: []float64{1}, Seeds: 3}, 2 * 3},
		{"suite", Config{Protocols: []string{"suite"}, Solvers: []string{"project"}, Epsilons: []float64{0.1, 0.5, 1}, Seeds: 3}, len(SuiteProtocols) * 3 * 3},
		{"suite and more", Config{Protocols: []string{"tiny", "suite"}, Solvers: []string{"project"}, Seeds: 1}, 2 + 3 + 5 + 3 + 5 + 3*20 + 1 + 1}, // each protocol's own ε grid
		{"suite-2way", Config{Protocols: []string{"suite-2way"}, Solvers: []string{"project"}, Seeds: 3}, len(Suite2WayProtocols) * 3 * 3},
		{"both suites", Config{Protocols: []string{"suite", "suite-2way"}, Solvers: []string{"project"}, Seeds: 1}, (len(SuiteProtocols) + len(Suite2WayProtocols)) * 3},
	}
	for _, tt := range tests {
		pts, err := Grid(&tt.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(pts) != tt.want {
			t.Errorf("%s: Grid() has %d points, want %d", tt.name, len(pts), tt.want)
		}
		keys := map[string]bool{}
		for i := range pts {
			keys[pts[i].Key()] = true
		}
		if len(keys) != len(pts) {
			t.Errorf("%s: %d distinct keys for %d points", tt.name, len(keys), len(pts))
		}
	}
	pts, err := Grid(&Config{Protocols: []string{"tiny"}, Solvers: []string{"project"}, Delta: 1e-6, Seeds: 2, Neighbours: "replace-one", Holdout: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pts[3].String(), "tiny 2-way project/tuned ε=1 δ=1e-6 seed=2 replace-one holdout=0.1"; got != want {
		t.Errorf("point = %q, want %q", got, want)
	}
	pts, err = Grid(&Config{Protocols: []string{"suite"}, Solvers: []string{"project"}, Model: "factored"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pt := range pts {
		if pt.Model != "factored" {
			t.Errorf("%s: model %q, want factored", pt.String(), pt.Model)
		}
		if len(names) == 0 || names[len(names)-1] != pt.Protocol.Name {
			names = append(names, pt.Protocol.Name)
		}
	}
	if !slices.Equal(names, SuiteProtocols) {
		t.Errorf("suite's protocols = %v, want %v", names, SuiteProtocols)
	}
}

// TestTwoWayProtocols checks that each 2-way protocol is its table's 3-way
// protocol with the workload's order changed and nothing else of the table.
func TestTwoWayProtocols(t *testing.T) {
	for _, name := range Suite2WayProtocols {
		p, err := LookupProtocol(name)
		if err != nil {
			t.Fatal(err)
		}
		base, err := LookupProtocol(strings.TrimSuffix(name, "-2way"))
		if err != nil {
			t.Fatal(err)
		}
		if p.Marginals != 2 || p.Dataset != base.Dataset || !slices.Equal(p.Attributes, base.Attributes) || p.Rows != 0 {
			t.Errorf("%s: marginals %d, dataset %q, attributes %v; want 2, %q, %v", name, p.Marginals, p.Dataset,
				p.Attributes, base.Dataset, base.Attributes)
		}
		if !slices.Equal(p.Epsilons, suiteEpsilons) || p.WorkloadName() != "2-way" {
			t.Errorf("%s: ε grid %v, workload %q; want %v, 2-way", name, p.Epsilons, p.WorkloadName(), suiteEpsilons)
		}
		if base.Marginals != 3 {
			t.Errorf("%s's table protocol has %d-way marginals, want 3", name, base.Marginals)
		}
	}
}

func TestGridErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"protocol", Config{Protocols: []string{"adult-full"}}, `unknown protocol "adult-full"`},
		{"solver", Config{Solvers: []string{"aim"}}, `unknown solver "aim"`},
		{"setting", Config{Settings: []string{"fast"}}, `unknown setting "fast"`},
		{"empty setting", Config{Settings: []string{""}}, `unknown setting ""`},
		{"duplicate", Config{Solvers: []string{"project", "project"}}, `"project" is listed twice`},
		{"eps", Config{Epsilons: []float64{1, 0}}, "every ε must be positive"},
		{"eps twice", Config{Epsilons: []float64{1, 0.5, 1}}, `"1" is listed twice`},
		{"seeds", Config{Seeds: -1}, "--seeds"},
		{"delta", Config{Delta: 1}, "--delta"},
		{"holdout", Config{Holdout: 1}, "--holdout"},
		{"neighbours", Config{Neighbours: "swap"}, "--neighbours"},
		{"model", Config{Model: "dense"}, "--model"},
		{"suite twice", Config{Protocols: []string{"suite", "adult"}}, `"adult" is listed twice`},
	}
	for _, tt := range tests {
		_, err := Grid(&tt.cfg)
		if !isConfigError(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Grid() error = %v, want a ConfigError containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := Run(t.Context(), &Config{Protocols: []string{"tiny"}}); !isConfigError(err) {
		t.Errorf("Run without Out: %v, want a ConfigError", err)
	}
}

func TestWriteGridResume(t *testing.T) {
	pts, err := Grid(&Config{Protocols: []string{"tiny"}, Solvers: []string{"project"}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteGrid(&b, pts, map[string]bool{pts[0].Key(): true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "seed=1 (done)\n") || !strings.HasSuffix(b.String(), "2 runs, 1 to do\n") {
		t.Errorf("WriteGrid with one done point:\n%s", b.String())
	}
}

// TestReadmeColumns: bench/README.md documents every results.csv column.
func TestReadmeColumns(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(".", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Columns() {
		if !strings.Contains(string(b), "| `"+c+"` |") {
			t.Errorf("README.md does not document column %s (a table row | `%s` | ...)", c, c)
		}
	}
}

// TestShapeLargeUniverse: a protocol's shape holds universes beyond a uint64
// (K is then 0, Cells exact) and the results' universe column beyond an
// int64 is unknown.
func TestShapeLargeUniverse(t *testing.T) {
	big30, _ := new(big.Int).SetString("1000000000000000000000000000000", 10)
	tests := []struct {
		sh   *Shape
		want int64
	}{
		{&Shape{K: 641263392000000000, Cells: big.NewInt(641263392000000000)}, 641263392000000000},
		{&Shape{K: 0, Cells: big30}, -1},
		{&Shape{K: 1 << 63, Cells: new(big.Int).SetUint64(1 << 63)}, -1},
		{&Shape{K: 336000}, 336000},
	}
	for _, tt := range tests {
		if got := universeCells(tt.sh); got != tt.want {
			t.Errorf("universeCells(%v) = %d, want %d", tt.sh.Cells, got, tt.want)
		}
	}
	if got, want := cellsText(big30), "1,000,000,000,000,000,000,000,000,000,000 (1.0e30)"; got != want {
		t.Errorf("cellsText(1e30) = %q, want %q", got, want)
	}
	if got, want := cellsText(big.NewInt(979776)), "979,776"; got != want {
		t.Errorf("cellsText(979776) = %q, want %q", got, want)
	}
}

// TestRelabel: rows of titanic run before it took all 9 attributes (979,776
// cells) become titanic-no-age; rows with the current universe, of unknown
// protocols or of unknown universe stay.
func TestRelabel(t *testing.T) {
	mk := func(protocol, dataset string, universe int64) *Result {
		return &Result{Protocol: protocol, Dataset: dataset, Workload: "3-way", Universe: universe}
	}
	rs := []*Result{
		mk("titanic", "titanic", 979776),
		mk("titanic", "titanic", 89159616),
		mk("titanic", "titanic", -1),
		mk("titanic", "titanic", 12345),
		mk("elsewhere", "titanic", 979776),
		mk("adult", "adult", 641263392000000000),
	}
	Relabel(rs)
	var got []string
	for _, r := range rs {
		got = append(got, r.Protocol)
	}
	want := []string{"titanic-no-age", "titanic", "titanic", "titanic", "elsewhere", "adult"}
	if !slices.Equal(got, want) {
		t.Errorf("Relabel = %v, want %v", got, want)
	}
}
