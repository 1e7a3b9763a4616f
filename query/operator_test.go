package query

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/dpsynth/synth/universe"
)

// randomDomain returns a small domain of 1..5 attributes of every kind,
// some nullable.
func randomDomain(t *testing.T, r *rand.Rand) *universe.Domain {
	t.Helper()
	d := 1 + r.IntN(5)
	attrs := make([]*universe.Attribute, d)
	for i := range attrs {
		name := fmt.Sprintf("a%d", i)
		var a *universe.Attribute
		var err error
		switch r.IntN(4) {
		case 0:
			a, err = universe.NewEncoded(name, 1+r.IntN(5))
		case 1:
			n := 1 + r.IntN(4)
			vals := make([]string, n)
			for v := range vals {
				vals[v] = fmt.Sprintf("v%d", v)
			}
			a, err = universe.NewCategorical(name, vals)
		case 2:
			w := int64(1 + r.IntN(3))
			a, err = universe.NewInteger(name, -3, -3+w*int64(1+r.IntN(4))-1, w)
		default:
			a, err = universe.NewNumericBins(name, 0, 10, 1+r.IntN(4))
		}
		if err == nil && r.IntN(4) == 0 {
			a, err = a.WithNull("NA")
		}
		if err != nil {
			t.Fatal(err)
		}
		attrs[i] = a
	}
	dom, err := universe.NewDomain(attrs...)
	if err != nil {
		t.Fatal(err)
	}
	return dom
}

// valueOf renders a declared value that encodes to code c of a (not the
// null code): a category, the lower end of an integer bucket, the middle of
// a numeric bin, or the code of an encoded attribute.
func valueOf(a *universe.Attribute, c int) Value {
	switch a.Kind {
	case universe.Categorical:
		return V(a.Values[c])
	case universe.Integer:
		lo, _ := a.IntBucket(c)
		return V(strconv.FormatInt(lo, 10))
	case universe.Numeric:
		lo, hi := a.Bin(c)
		return V(strconv.FormatFloat((lo+hi)/2, 'g', -1, 64))
	default:
		return V(strconv.Itoa(c))
	}
}

// testQuery is the definition of one query for the brute force: a weight
// and a predicate on the codes of a cell.
type testQuery struct {
	weight float64
	in     func(codes []int) bool
}

// randomWorkload builds a random spec over dom and the definitions of its
// non-marginal queries, in order; marginal queries are defined from
// w.Marginals().
func randomWorkload(t *testing.T, r *rand.Rand, dom *universe.Domain) (*Workload, map[int]testQuery) {
	t.Helper()
	d := dom.Len()
	spec := &Spec{}
	type pending struct {
		family int
		q      []testQuery
	}
	var defs []pending
	weight := func() *float64 {
		if r.IntN(2) == 0 {
			return nil
		}
		w := 0.25 + 0.75*r.Float64()
		return &w
	}
	nfam := 1 + r.IntN(5)
	for range nfam {
		wt := weight()
		wv := 1.0
		if wt != nil {
			wv = *wt
		}
		a := r.IntN(d)
		attr := dom.Attr(a)
		vc := valueCodes(attr)
		switch kind := r.IntN(6); {
		case kind == 0: // explicit sets
			var sets [][]string
			seen := map[string]bool{}
			for range 1 + r.IntN(3) {
				perm := r.Perm(d)[:1+r.IntN(d)]
				names := make([]string, len(perm))
				for i, p := range perm {
					names[i] = dom.Attr(p).Name
				}
				s := slices.Clone(perm)
				slices.Sort(s)
				if seen[fmt.Sprint(s)] {
					continue
				}
				seen[fmt.Sprint(s)] = true
				sets = append(sets, names)
			}
			spec.Families = append(spec.Families, FamilySpec{Type: "marginals", Sets: sets, Weight: wt})
		case kind == 1:
			spec.Families = append(spec.Families, FamilySpec{Type: "kway", K: 1 + r.IntN(d), Weight: wt})
		case kind == 2:
			k := 1 + r.IntN(d)
			n := 1 + r.IntN(int(binomial(d, k).Int64()))
			seed := r.Uint64()
			spec.Families = append(spec.Families, FamilySpec{Type: "kway", K: k, Sample: n, Seed: &seed, Weight: wt})
		case kind == 3 && attr.Ordered():
			lo := r.IntN(vc)
			hi := lo + r.IntN(vc-lo)
			spec.Families = append(spec.Families, FamilySpec{Type: "range", Attribute: attr.Name, Lo: ptr(valueOf(attr, lo)), Hi: ptr(valueOf(attr, hi)), Weight: wt})
			defs = append(defs, pending{len(spec.Families) - 1, []testQuery{{wv, func(c []int) bool { return c[a] >= lo && c[a] <= hi }}}})
		case kind == 4 && attr.Ordered() && vc > 1:
			spec.Families = append(spec.Families, FamilySpec{Type: "prefixes", Attribute: attr.Name, Weight: wt})
			var qs []testQuery
			for v := range vc - 1 {
				qs = append(qs, testQuery{wv, func(c []int) bool { return c[a] <= v }})
			}
			defs = append(defs, pending{len(spec.Families) - 1, qs})
		default: // predicate
			var where []Clause
			var tests []func([]int) bool
			for _, p := range r.Perm(d)[:1+r.IntN(d)] {
				pa := dom.Attr(p)
				pvc := valueCodes(pa)
				if pa.Ordered() && r.IntN(2) == 0 {
					lo := r.IntN(pvc)
					hi := lo + r.IntN(pvc-lo)
					where = append(where, Clause{Attribute: pa.Name, Lo: ptr(valueOf(pa, lo)), Hi: ptr(valueOf(pa, hi))})
					tests = append(tests, func(c []int) bool { return c[p] >= lo && c[p] <= hi })
					continue
				}
				var vals []Value
				allowed := map[int]bool{}
				for range 1 + r.IntN(3) {
					code := r.IntN(pa.Size())
					if nc, ok := pa.NullCode(); ok && code == nc {
						vals = append(vals, V(pa.NullToken))
					} else {
						vals = append(vals, valueOf(pa, code))
					}
					allowed[code] = true
				}
				where = append(where, Clause{Attribute: pa.Name, In: vals})
				tests = append(tests, func(c []int) bool { return allowed[c[p]] })
			}
			spec.Families = append(spec.Families, FamilySpec{Type: "predicate", Where: where, Weight: wt})
			defs = append(defs, pending{len(spec.Families) - 1, []testQuery{{wv, func(c []int) bool {
				for _, f := range tests {
					if !f(c) {
						return false
					}
				}
				return true
			}}}})
		}
	}
	w, err := Build(dom, spec)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	out := map[int]testQuery{}
	for _, p := range defs {
		f := w.Families()[p.family]
		if f.Len != len(p.q) {
			t.Fatalf("family %d has %d queries, want %d", p.family, f.Len, len(p.q))
		}
		for i, q := range p.q {
			out[f.Offset+i] = q
		}
	}
	return w, out
}

func ptr[T any](v T) *T { return &v }

// denseMatrix builds A (m × k) from the query definitions by visiting every
// cell.
func denseMatrix(w *Workload, defs map[int]testQuery) [][]float64 {
	dom := w.Domain()
	k, _ := dom.Size()
	A := make([][]float64, w.M())
	for j := range A {
		A[j] = make([]float64, k)
	}
	codes := make([]int, dom.Len())
	for idx := range k {
		dom.Decode(idx, codes)
		for _, s := range w.Marginals() {
			cell := 0
			for _, a := range s.Attrs {
				cell = cell*dom.Attr(a).Size() + codes[a]
			}
			A[s.Offset+cell][idx] = s.Weight
		}
		for j, q := range defs {
			if q.in(codes) {
				A[j][idx] = q.weight
			}
		}
	}
	return A
}

func near(a, b, scale float64) bool { return math.Abs(a-b) <= 1e-12*max(1, scale) }

type variant struct {
	workers, tile, parMin int
	goKernels             bool // the Go bodies instead of the assembly kernels
	stream                bool // Adjoint streams its tiles out (as for universes beyond the caches)
}

// variants cover the default plan, one tile per cell (no inner attributes),
// one tile for all of D (no prefix), and tilings in between, on 1 to 3
// workers.
var variants = []variant{{1, 2048, 1 << 16, false, false}, {2, 2048, 1, false, false}, {2, 3, 1, false, true}, {3, 5, 8, false, false}, {2, 1, 1, false, false}, {2, 1 << 30, 1, false, false}, {3, 40, 1, false, true}, {2, 7, 1, true, true}}

func withVariant(v variant, f func()) {
	ot, om, op, oa, os := tileCells, maxTileCells, parallelMin, useAVX2, streamBytes
	tileCells, parallelMin = v.tile, v.parMin
	if v.stream {
		streamBytes = 0
	}
	if v.tile != ot { // a forced tiling: tiles of exactly the longest prefix holding v.tile cells
		maxTileCells = v.tile
	}
	useAVX2 = useAVX2 && !v.goKernels
	defer func() { tileCells, maxTileCells, parallelMin, useAVX2, streamBytes = ot, om, op, oa, os }()
	f()
}

func TestOperatorMatchesDenseMatrix(t *testing.T) {
	for seed := range uint64(150) {
		r := rand.New(rand.NewPCG(seed, 7))
		dom := randomDomain(t, r)
		w, defs := randomWorkload(t, r, dom)
		A := denseMatrix(w, defs)
		k, _ := dom.Size()
		d := make([]float64, k)
		for i := range d {
			d[i] = r.NormFloat64()
		}
		y := make([]float64, w.M())
		for i := range y {
			y[i] = r.NormFloat64()
		}
		for _, v := range variants {
			withVariant(v, func() {
				op, err := w.Compile(&CompileSettings{Workers: v.workers})
				if err != nil {
					t.Fatal(err)
				}
				defer op.Close()
				checkOperator(t, fmt.Sprintf("seed %d %+v", seed, v), op, A, d, y)
			})
		}
	}
}

func checkOperator(t *testing.T, name string, op *Operator, A [][]float64, d, y []float64) {
	t.Helper()
	m, k := op.M(), op.K()
	if m != len(A) || k != len(d) {
		t.Fatalf("%s: M, K = %d, %d, want %d, %d", name, m, k, len(A), len(d))
	}
	got := make([]float64, m)
	for i := range got {
		got[i] = math.NaN() // Answer must overwrite
	}
	op.Answer(d, got)
	for j := range m {
		want, scale := 0.0, 0.0
		for i, a := range A[j] {
			want += a * d[i]
			scale += math.Abs(a * d[i])
		}
		if !near(got[j], want, scale) {
			t.Fatalf("%s: Answer()[%d] (%s) = %v, want %v", name, j, op.w.Label(j), got[j], want)
		}
	}
	adj := make([]float64, k)
	for i := range adj {
		adj[i] = math.NaN() // Adjoint must overwrite
	}
	op.Adjoint(y, adj)
	for i := range k {
		want, scale := 0.0, 0.0
		for j := range m {
			want += A[j][i] * y[j]
			scale += math.Abs(A[j][i] * y[j])
		}
		if !near(adj[i], want, scale) {
			t.Fatalf("%s: Adjoint()[%d] = %v, want %v", name, i, adj[i], want)
		}
	}
	// ⟨Aᵀy, d⟩ = ⟨y, Ad⟩.
	lhs, rhs, scale := 0.0, 0.0, 0.0
	for i := range k {
		lhs += adj[i] * d[i]
		scale += math.Abs(adj[i] * d[i])
	}
	for j := range m {
		rhs += y[j] * got[j]
	}
	if math.Abs(lhs-rhs) > 1e-12*max(scale, 1) {
		t.Fatalf("%s: <Adjoint(y), d> = %v, <y, Answer(d)> = %v", name, lhs, rhs)
	}
	checkFused(t, name, op, adj, d, y)
	// AddQuery(j) = Adjoint(e_j), Range from the row.
	x := make([]float64, k)
	for j := range m {
		clear(x)
		x[0] = 0.5
		op.AddQuery(j, -2, x)
		for i := range k {
			want := -2 * A[j][i]
			if i == 0 {
				want += 0.5
			}
			if !near(x[i], want, 2) {
				t.Fatalf("%s: AddQuery(%d, -2)[%d] = %v, want %v", name, j, i, x[i], want)
			}
		}
		lo, hi := op.Range(j)
		if wlo, whi := slices.Min(A[j]), slices.Max(A[j]); lo != wlo || hi != whi {
			t.Fatalf("%s: Range(%d) = %v, %v, want %v, %v", name, j, lo, hi, wlo, whi)
		}
	}
}

// checkFused checks AdjointMapAnswer against Adjoint (adj = Aᵀy), the
// map and Answer in turn, bit for bit, with a map that also reads d on the
// tile's cells and returns x's tile in a vector or in g; and that it calls
// the map once per tile, and is unavailable exactly when a block reads
// every attribute.
func checkFused(t *testing.T, name string, op *Operator, adj, d, y []float64) {
	t.Helper()
	m, k := op.M(), op.K()
	f := func(g, d float64) float64 { return 0.5*g - d*d }
	want := make([]float64, k)
	for i := range want {
		want[i] = f(adj[i], d[i])
	}
	wantAns := make([]float64, m)
	op.Answer(want, wantAns)
	x, got := make([]float64, k), make([]float64, m)
	for i := range x {
		x[i], got[i%m] = math.NaN(), math.NaN()
	}
	n, size := op.MapTiles()
	full := false
	for _, tg := range op.ex.p.targets {
		full = full || tg.off < 0
	}
	if (n == 0) != full {
		t.Fatalf("%s: MapTiles() = %d, %d with a block over every attribute %v", name, n, size, full)
	}
	if n == 0 {
		return
	}
	calls := make([]int, n)
	op.AdjointMapAnswer(y, func(tile, lo int, g []float64) []float64 {
		if lo != tile*size || len(g) != size {
			panic(fmt.Sprintf("tile %d at %d with %d cells, want %d and %d", tile, lo, len(g), tile*size, size))
		}
		calls[tile]++
		if tile%2 == 1 { // x's tile in place of g's
			for i, v := range g {
				x[lo+i] = f(v, d[lo+i])
				g[i] = x[lo+i]
			}
			return g
		}
		for i, v := range g {
			x[lo+i] = f(v, d[lo+i])
		}
		return x[lo : lo+len(g)]
	}, got)
	for tile, c := range calls {
		if c != 1 {
			t.Fatalf("%s: AdjointMapAnswer mapped tile %d %d times, want 1", name, tile, c)
		}
	}
	for i := range k {
		if math.Float64bits(x[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: AdjointMapAnswer's x[%d] = %v, want %v", name, i, x[i], want[i])
		}
	}
	for j := range m {
		if math.Float64bits(got[j]) != math.Float64bits(wantAns[j]) {
			t.Fatalf("%s: AdjointMapAnswer()[%d] = %v, want %v (Answer of the map of Adjoint)", name, j, got[j], wantAns[j])
		}
	}
}

func TestAnswerCountsMatchesNormalized(t *testing.T) {
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 11))
		dom := randomDomain(t, r)
		w, _ := randomWorkload(t, r, dom)
		c := universe.NewCounts(dom)
		codes := make([]int, dom.Len())
		for range r.IntN(40) {
			for i := range codes {
				codes[i] = r.IntN(dom.Attr(i).Size())
			}
			if err := c.Add(codes, int64(1+r.IntN(3))); err != nil {
				t.Fatal(err)
			}
		}
		got := w.AnswerCounts(c, make([]float64, w.M()))
		k, _ := dom.Size()
		p := c.Normalized(make([]float64, k))
		op, err := w.Compile(nil)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, w.M())
		op.Answer(p, want)
		op.Close()
		for j := range want {
			if !near(got[j], want[j], 1) {
				t.Fatalf("seed %d: AnswerCounts()[%d] (%s) = %v, want %v", seed, j, w.Label(j), got[j], want[j])
			}
		}
	}
}

func TestNoAllocations(t *testing.T) {
	dom := mustDomain(t, `{"a": 6, "b": 40, "c": 7, "d": 50, "e": 3}`)
	w, err := Build(dom, &Spec{Families: []FamilySpec{
		{Type: "kway", K: 3},
		{Type: "prefixes", Attribute: "b"},
		{Type: "predicate", Where: []Clause{{Attribute: "a", In: []Value{V("1"), V("3")}}, {Attribute: "d", Lo: ptr(V("5")), Hi: ptr(V("30"))}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	op, err := w.Compile(&CompileSettings{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if op.ex.p.serial {
		t.Fatalf("a %d-cell universe should run on 2 workers", op.K())
	}
	d := make([]float64, op.K())
	out := make([]float64, op.M())
	copyTile := func(_, lo int, g []float64) []float64 { return g }
	tests := []struct {
		name string
		f    func()
	}{
		{"Answer", func() { op.Answer(d, out) }},
		{"Adjoint", func() { op.Adjoint(out, d) }},
		{"AddQuery", func() { op.AddQuery(op.M()-1, 1, d); op.AddQuery(17, 1, d) }},
		{"AdjointMapAnswer", func() { op.AdjointMapAnswer(out, copyTile, out) }},
	}
	op.AdjointMapAnswer(out, copyTile, out) // its scratch, once
	for _, tt := range tests {
		if n := testing.AllocsPerRun(20, tt.f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", tt.name, n)
		}
	}
}

func mustDomain(t testing.TB, src string) *universe.Domain {
	t.Helper()
	d, err := universe.ParseDomain([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTallyAddRows: AddRows and AddCounts (chunk by chunk, block by block,
// over the cores past tallyParallel, the column scratch grown from call to
// call) give the same answers, bit for bit, as Add of each row,
// on random domains and workloads (marginals of every order, prefixes and
// predicates) with enough rows to take the parallel path.
func TestTallyAddRows(t *testing.T) {
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 12))
		dom := randomDomain(t, r)
		w, _ := randomWorkload(t, r, dom)
		d := dom.Len()
		n := 1 + r.IntN(3*tallyParallel/max(1, len(w.blocks)))
		rows := make([]int32, n*d)
		for i := range rows {
			rows[i] = int32(r.IntN(dom.Attr(i % d).Size()))
		}
		one, all := w.NewTally(), w.NewTally()
		for i := 0; i < len(rows); i += d {
			one.Add(rows[i:i+d], 1)
		}
		// In two calls, the second with a partial row left over (ignored);
		// on odd seeds the first call has a few rows, so that the second
		// grows the tally's column scratch.
		half := (n / 2) * d
		if seed%2 == 1 {
			half = min(n, 1+r.IntN(8)) * d
		}
		all.AddRows(rows[:half])
		rest := slices.Clone(rows[half:])
		if d > 1 {
			rest = append(rest, 0)
		}
		all.AddRows(rest)
		want, got := one.Answers(make([]float64, w.M())), all.Answers(make([]float64, w.M()))
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("seed %d (%d rows): AddRows answer %d (%s) = %v, want %v (Add's)", seed, n, j, w.Label(j), got[j], want[j])
			}
		}
		// Weighted rows: AddCounts against Add with each row's count.
		cnt := make([]int64, n)
		one, all = w.NewTally(), w.NewTally()
		for i := range cnt {
			cnt[i] = int64(r.IntN(1000))
			one.Add(rows[i*d:(i+1)*d], float64(cnt[i]))
		}
		all.AddCounts(rows, cnt)
		want, got = one.Answers(want), all.Answers(got)
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("seed %d (%d rows): AddCounts answer %d (%s) = %v, want %v (Add's)", seed, n, j, w.Label(j), got[j], want[j])
			}
		}
		// TakeAnswers: Answers' bits, in the tally's own vector.
		for j, v := range all.TakeAnswers() {
			if math.Float64bits(v) != math.Float64bits(got[j]) {
				t.Fatalf("seed %d: TakeAnswers answer %d (%s) = %v, want %v (Answers')", seed, j, w.Label(j), v, got[j])
			}
		}
	}
}

// TestAnswerTablesMatchesAnswerCounts checks that the answers made from the
// sets' count tables are AnswerCounts's bit for bit, on small workloads
// (one core) and on one large enough to be split over the cores.
func TestAnswerTablesMatchesAnswerCounts(t *testing.T) {
	half := 0.5
	cases := []struct {
		name, domain string
		fams         []FamilySpec
		records      int
	}{
		{"pairs", `{"a": 3, "b": 5, "c": 2, "d": 4}`, []FamilySpec{{Type: "kway", K: 2}}, 40},
		{"weighted", `{"a": 3, "b": 5, "c": 2, "d": 4}`, []FamilySpec{{Type: "kway", K: 1}, {Type: "kway", K: 3, Weight: &half}}, 25},
		{"empty", `{"a": 3, "b": 5}`, []FamilySpec{{Type: "kway", K: 2}}, 0},
		{"split", `{"a": 40, "b": 40, "c": 50, "d": 30}`, []FamilySpec{{Type: "kway", K: 3}}, 5000},
	}
	for _, tc := range cases {
		r := rand.New(rand.NewPCG(7, uint64(len(tc.name))))
		dom := mustDomain(t, tc.domain)
		w, err := Build(dom, &Spec{Families: tc.fams})
		if err != nil {
			t.Fatal(err)
		}
		c := universe.NewCounts(dom)
		codes := make([]int, dom.Len())
		for range tc.records {
			for i := range codes {
				codes[i] = r.IntN(dom.Attr(i).Size())
			}
			if err := c.Add(codes, int64(1+r.IntN(3))); err != nil {
				t.Fatal(err)
			}
		}
		sets := make([][]int, len(w.Marginals()))
		for i, s := range w.Marginals() {
			sets[i] = s.Attrs
		}
		tabs, err := c.Marginals(context.Background(), sets)
		if err != nil {
			t.Fatal(err)
		}
		want := w.AnswerCounts(c, make([]float64, w.M()))
		got := w.AnswerTables(tabs, c.Total(), make([]float64, w.M()))
		for j := range want {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Fatalf("%s: AnswerTables()[%d] (%s) = %v, want %v (AnswerCounts)", tc.name, j, w.Label(j), got[j], want[j])
			}
		}
	}
}

func TestAnswerTablesPanics(t *testing.T) {
	dom := mustDomain(t, `{"a": 3, "b": 5}`)
	mixed, err := Build(dom, &Spec{Families: []FamilySpec{{Type: "kway", K: 1}, {Type: "prefixes", Attribute: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := Build(dom, &Spec{Families: []FamilySpec{{Type: "kway", K: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		w      *Workload
		tables [][]int64
		out    int
	}{
		{"a range family", mixed, [][]int64{make([]int64, 3), make([]int64, 5)}, mixed.M()},
		{"too few tables", pairs, nil, pairs.M()},
		{"a short table", pairs, [][]int64{make([]int64, 14)}, pairs.M()},
		{"a short output", pairs, [][]int64{make([]int64, 15)}, pairs.M() - 1},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AnswerTables with %s did not panic", tc.name)
				}
			}()
			tc.w.AnswerTables(tc.tables, 1, make([]float64, tc.out))
		}()
	}
}
