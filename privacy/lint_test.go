package privacy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The privacy paths must not use math/rand (v1) or textbook floating-point
// inverse-CDF sampling (ln of a uniform draw) for anything released. This
// lint parses the package's sources and reports:
//
//   - any import of "math/rand" (v1), in any file, tests included;
//   - any math.Log/Log1p/Log2/Log10 whose argument contains a uniform draw
//     (a call of Uint64, Float64, openFloat64, Uint64N or Bit), directly or
//     through a local variable assigned from one, unless the enclosing
//     function's doc comment carries "privacy:float-ok:" with a reason; the
//     set of such functions is pinned below, so a new one is a reviewed
//     change;
//   - any math.Log* or math.Exp* call at all in the files of the exact
//     samplers (exact.go, discrete.go, grid.go).

// floatOK are the functions allowed to take ln of a uniform draw: selection
// noise whose only output is an argmax, and the tail of the internal
// Gaussian noise.
var floatOK = []string{"gumbel", "laplaceSelect", "normalTail"}

var exactFiles = []string{"exact.go", "discrete.go", "grid.go"}

var uniformCalls = map[string]bool{"Uint64": true, "Float64": true, "openFloat64": true, "Uint64N": true, "Bit": true}

type lintFinding struct {
	pos, msg string
}

// lintFile checks one parsed file; it returns the findings and the names of
// the functions that used their float-ok exemption.
func lintFile(fset *token.FileSet, f *ast.File, exactFile bool) (findings []lintFinding, exempt []string) {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "math/rand" {
			findings = append(findings, lintFinding{fset.Position(imp.Pos()).String(), `import of "math/rand" (v1)`})
		}
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		ok = fn.Doc != nil && strings.Contains(fn.Doc.Text(), "privacy:float-ok:")
		// Local variables assigned from uniform draws.
		tainted := map[string]bool{}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if as, isAssign := n.(*ast.AssignStmt); isAssign && len(as.Lhs) == len(as.Rhs) {
				for i, rhs := range as.Rhs {
					if id, isID := as.Lhs[i].(*ast.Ident); isID && hasUniform(rhs, tainted) {
						tainted[id.Name] = true
					}
				}
			}
			return true
		})
		used := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, isCall := n.(*ast.CallExpr)
			if !isCall {
				return true
			}
			name := mathFunc(call)
			if exactFile && (strings.HasPrefix(name, "Log") || strings.HasPrefix(name, "Exp")) {
				findings = append(findings, lintFinding{fset.Position(call.Pos()).String(),
					"math." + name + " in an exact sampler file"})
			}
			if strings.HasPrefix(name, "Log") && len(call.Args) == 1 && hasUniform(call.Args[0], tainted) {
				if ok {
					used = true
				} else {
					findings = append(findings, lintFinding{fset.Position(call.Pos()).String(),
						"math." + name + " of a uniform draw in " + fn.Name.Name + " (inverse-CDF float sampling)"})
				}
			}
			return true
		})
		if used {
			exempt = append(exempt, fn.Name.Name)
		}
	}
	return findings, exempt
}

// mathFunc returns F for a call math.F(...), or "".
func mathFunc(call *ast.CallExpr) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if x, ok := sel.X.(*ast.Ident); ok && x.Name == "math" {
		return sel.Sel.Name
	}
	return ""
}

// hasUniform reports whether e contains a uniform draw or a tainted name.
func hasUniform(e ast.Expr, tainted map[string]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && uniformCalls[sel.Sel.Name] {
				found = true
			}
		case *ast.Ident:
			if tainted[n.Name] {
				found = true
			}
		}
		return !found
	})
	return found
}

func TestLintPrivacyPaths(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	fset := token.NewFileSet()
	var exempt []string
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		test := strings.HasSuffix(name, "_test.go")
		findings, ex := lintFile(fset, f, slices.Contains(exactFiles, name))
		for _, fd := range findings {
			if test && !strings.Contains(fd.msg, "math/rand") {
				continue // tests may compute logs of anything
			}
			t.Errorf("%s: %s", fd.pos, fd.msg)
		}
		if !test {
			exempt = append(exempt, ex...)
		}
	}
	slices.Sort(exempt)
	want := slices.Clone(floatOK)
	slices.Sort(want)
	if !slices.Equal(exempt, want) {
		t.Errorf("functions using the float-ok exemption = %v, want %v (review any change)", exempt, want)
	}
}

// TestLintCatches shows the lint failing on the patterns it forbids.
func TestLintCatches(t *testing.T) {
	src := `package privacy

import (
	"math"
	"math/rand"
)

func lap(r *Rand, b float64) float64 {
	u := r.Float64()
	return -b * math.Log(u)
}

func direct(r *Rand) float64 { return math.Log1p(-r.Float64()) }

// privacy:float-ok: documented.
func allowed(r *Rand) float64 { return math.Log(r.openFloat64()) }

func fine(x float64) float64 { _ = rand.Int; return math.Log(x) }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "bad.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	findings, exempt := lintFile(fset, f, false)
	if len(findings) != 3 {
		t.Errorf("findings = %v, want the import, lap and direct", findings)
	}
	if !slices.Equal(exempt, []string{"allowed"}) {
		t.Errorf("exempt = %v, want [allowed]", exempt)
	}
	findings, _ = lintFile(fset, f, true)
	if len(findings) != 7 { // plus every math.Log* in an exact file
		t.Errorf("exact-file findings = %d, want 7: %v", len(findings), findings)
	}
}
