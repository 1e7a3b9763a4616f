package solvers

import "slices"

// groupVars gives the rounds' fit a model in which a table measured on
// groups of its cells (supportGroups: the supports' groups, a coarse
// pair's) is a table of its own, small variables. Each grouping of an
// attribute's values that a measurement uses becomes one more variable of
// the model, whose value is the group, tied to its attribute by a fixed
// potential (0 where the value is in the group, linkOff elsewhere: the
// model puts no mass on a value outside its group). A measurement on
// groups is then a table over those variables, and its potential lives on
// a clique of as many cells as it has groups, where on the domain's
// attributes alone it would take a clique of the full table's cells.
//
// The model is the same distribution over the domain: a potential on the
// groups is a potential on the full table constant within each group, and
// the variables are functions of their attributes. Only its junction tree
// changes: on a small table (few supported values per attribute) the
// rounds measure wide triples on a few groups each, and the domain's tree
// of those triples is tens of megabytes where the grouped one is a few
// thousand cells (docs/BENCHMARKS.md). The fit's cost follows the tree's
// cells, so it follows what was measured. The domain's tree can also be
// the smaller one (an attribute with two groupings in use, the supports'
// and the coarse groups, joins both in one clique), so the rounds fit on
// whichever tree has fewer cells (setForm), and the released model is on
// the domain's attributes.
//
// A grouping is known by its attribute and its digits' backing array: the
// supports' digits are one array per attribute (attrDigits), the coarse
// groups one per attribute (coarseGroups). A grouping that keeps every
// value alone and in order is the attribute itself.
type groupVars struct {
	sizes []int // the model's attribute sizes: the domain's d, then one per grouping
	vars  map[groupingKey]int
	links [][]int     // per grouping variable: {its attribute, itself}
	theta [][]float64 // per link: its potential over (value, group)
}

type groupingKey struct {
	attr   int
	digits *int32
}

// linkOff is a link's potential where a value is outside the group: its
// exponential is 0 in float64 (below e^−745) against fitted potentials,
// logs of ratios of shares, which stay within tens.
const linkOff = -1e4

func newGroupVars(sizes []int) *groupVars {
	return &groupVars{sizes: slices.Clone(sizes), vars: map[groupingKey]int{}}
}

// grouped reports whether any grouping variable was added.
func (g *groupVars) grouped() bool { return len(g.links) > 0 }

// varOf returns the model variable of attribute a's values grouped by
// digits (radix groups), adding it on first use.
func (g *groupVars) varOf(a int, digits []int32, radix int) int {
	if radix == len(digits) && isIdentity(digits) {
		return a
	}
	k := groupingKey{attr: a, digits: &digits[0]}
	if v, ok := g.vars[k]; ok {
		return v
	}
	v := len(g.sizes)
	g.sizes = append(g.sizes, radix)
	g.vars[k] = v
	g.links = append(g.links, []int{a, v})
	t := make([]float64, len(digits)*radix)
	for x, dg := range digits {
		for y := range radix {
			if int32(y) != dg {
				t[x*radix+y] = linkOff
			}
		}
	}
	g.theta = append(g.theta, t)
	return v
}

func isIdentity(digits []int32) bool {
	for v, d := range digits {
		if int(d) != v {
			return false
		}
	}
	return true
}

// measurement returns m, a measurement of set's groups sg (m.y the
// groups' fractions in sg's order, gm each cell's group, as
// sg.cellGroups), as a plain measurement of the grouping variables'
// table: its set is their variables in increasing order and its y the
// groups' fractions in that set's mixed radix. Its orig is set, its gset
// its set, and its cells each cell of set's table's index in the new one
// (gm renumbered in place), for toDomain and the rounds' moves.
func (g *groupVars) measurement(set []int, sg *supportGroups, gm []int32, m fmeas) fmeas {
	mset, to := g.layout(set, sg)
	y := make([]float64, sg.n)
	for grp, v := range m.y {
		y[to[grp]] = v
	}
	return fmeas{set: mset, y: y, w: m.w, sigma: m.sigma, orig: set, gset: mset, cells: renumber(gm, to)}
}

// renumber maps each cell's group in gm through to, in place, and returns
// gm.
func renumber(gm, to []int32) []int32 {
	for i, grp := range gm {
		gm[i] = to[grp]
	}
	return gm
}

// layout returns the grouping variables of set's groups sg, in increasing
// order (adding those not yet known), and each group's index (its digits
// in sg's order) in the mixed radix of that set.
func (g *groupVars) layout(set []int, sg *supportGroups) (mset []int, to []int32) {
	k := len(set)
	vs := make([]int, k)
	for j, a := range set {
		vs[j] = g.varOf(a, sg.digits[j], sg.radix[j])
	}
	order := make([]int, k) // order[p]: the set's position of the p-th variable
	for j := range order {
		order[j] = j
	}
	slices.SortFunc(order, func(x, y int) int { return vs[x] - vs[y] })
	mset = make([]int, k)
	mul := make([]int, k) // per set position: its digit's weight in the new table
	acc := 1
	for p := k - 1; p >= 0; p-- {
		j := order[p]
		mset[p] = vs[j]
		mul[j] = acc
		acc *= sg.radix[j]
	}
	to = make([]int32, sg.n)
	for grp := range sg.n {
		rest, idx := grp, 0
		for j := range k {
			idx += rest / sg.mul[j] * mul[j]
			rest %= sg.mul[j]
		}
		to[grp] = int32(idx)
	}
	return mset, to
}

// groupedCand is a candidate grouped on the supports, scored on its
// grouping variables while the fit runs on the grouped tree: the model's
// marginal on set (buf) against the true table's groups (tab), both in
// set's mixed radix, cells mapping each cell of the full table to its
// group there. Its score is the one of its full table summed onto the
// groups (supportGroups.l1), from a marginal of as many cells as groups.
type groupedCand struct {
	set      []int
	cells    []int32
	tab, buf []float64
}

// groupedCands returns, per candidate, its groupedCand (nil for a
// candidate without groups or in skip). The candidates' grouping
// variables must be in gv already (newRounds adds them before the first
// grouped tree), or the trees built so far would lack them.
func groupedCands(gv *groupVars, groups []*supportGroups, tabs [][]int64, cands [][]int, skip []bool) []*groupedCand {
	out := make([]*groupedCand, len(cands))
	for i, sg := range groups {
		if sg == nil || skip[i] {
			continue
		}
		set, to := gv.layout(cands[i], sg)
		gc := &groupedCand{set: set, cells: renumber(sg.cellGroups(), to), tab: make([]float64, sg.n), buf: make([]float64, sg.n)}
		for k, grp := range gc.cells {
			gc.tab[grp] += float64(tabs[i][k])
		}
		out[i] = gc
	}
	return out
}

// toDomain returns m, a measurement on grouping variables (made by
// measurement), in its domain form: on its original set, on groups of
// its cells (gm, gy; y all zero), and its potential phi on the groups as
// the full table's. toGrouped undoes it.
func toDomain(m fmeas, phi []float64) (fmeas, []float64) {
	full := make([]float64, len(m.cells))
	for i, c := range m.cells {
		full[i] = phi[c]
	}
	return fmeas{set: m.orig, y: make([]float64, len(m.cells)), w: m.w, sigma: m.sigma,
		gm: m.cells, gy: m.y, gr: make([]float64, len(m.y)), orig: m.orig, gset: m.gset, cells: m.cells}, full
}

// toGrouped returns m in its domain form (toDomain) back on its grouping
// variables, and its potential phi, constant on each group of the full
// table (the fit moves it by the groups' residuals only), as the groups'.
func toGrouped(m fmeas, phi []float64) (fmeas, []float64) {
	g := make([]float64, len(m.gy))
	for i, c := range m.cells {
		g[c] = phi[i]
	}
	return fmeas{set: m.gset, y: m.gy, w: m.w, sigma: m.sigma, orig: m.orig, gset: m.gset, cells: m.cells}, g
}

// setForm puts every measurement on groups of the fit in the form the
// next tree needs: on its grouping variables (grouped, with gv's links)
// or on the domain's attributes (the links dropped). The model is the
// same distribution in either (post-processing); a change of form leaves
// the fit without a tree, so that the next add rebuilds its models.
func (f *factoredFit) setForm(grouped bool, gv *groupVars) {
	changed := false
	for j, m := range f.meas {
		if m.cells == nil || (m.gm == nil) == grouped {
			continue
		}
		if grouped {
			f.meas[j], f.phi[j] = toGrouped(m, f.phi[j])
		} else {
			f.meas[j], f.phi[j] = toDomain(m, f.phi[j])
		}
		f.sets[j] = f.meas[j].set
		n := len(f.phi[j])
		f.grad[j], f.mu[j], f.mu2[j] = make([]float64, n), make([]float64, n), make([]float64, n)
		changed = true
	}
	f.linkSets, f.linkTheta = nil, nil
	if grouped {
		f.linkSets, f.linkTheta = gv.links, gv.theta
	}
	if changed {
		f.close()
		f.tree = nil
	}
}
