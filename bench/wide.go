package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
)

// The wide tables: a public generator of tables of many columns with a
// known structure, for the width benchmarks (issue: 50–200 columns in
// minutes). Nothing in it comes from private data; the column count, the
// row count and a seed fix a table.
//
// Column j has between 2 and 24 values (drawn from the seed, most columns
// small: 2–6 values for half of them) and up to two parents among the
// columns before it (a random Bayesian network, each column depending on a
// nearby earlier one and, half the time, on a second one anywhere before
// it). Its conditional law given each configuration of its parents is a
// random distribution, peaked (a Dirichlet(0.5) draw), so that marginals
// carry real structure and the tables are neither uniform nor degenerate.
// Rows are drawn column by column in order.

// WideSeed fixes the wide protocols' tables.
const WideSeed = 7

// wideNet is a generated Bayesian network.
type wideNet struct {
	sizes   []int
	parents [][]int
	// cdf[j][config] is column j's cumulative law given its parents'
	// configuration (mixed radix of the parents' values).
	cdf [][][]float64
}

func newWideNet(cols int, seed uint64) *wideNet {
	r := rand.New(rand.NewPCG(seed, uint64(cols)))
	n := &wideNet{sizes: make([]int, cols), parents: make([][]int, cols), cdf: make([][][]float64, cols)}
	for j := range cols {
		if r.IntN(2) == 0 {
			n.sizes[j] = 2 + r.IntN(5) // 2..6
		} else {
			n.sizes[j] = 2 + r.IntN(23) // 2..24
		}
		if j > 0 {
			n.parents[j] = append(n.parents[j], max(0, j-1-r.IntN(min(j, 4))))
			if j > 1 && r.IntN(2) == 0 {
				if p := r.IntN(j); p != n.parents[j][0] {
					n.parents[j] = append(n.parents[j], p)
				}
			}
		}
		configs := 1
		for _, p := range n.parents[j] {
			configs *= n.sizes[p]
		}
		n.cdf[j] = make([][]float64, configs)
		for c := range configs {
			n.cdf[j][c] = dirichletCDF(r, n.sizes[j], 0.5)
		}
	}
	return n
}

// dirichletCDF draws a Dirichlet(alpha) law over k values (by normalised
// Gamma draws, Marsaglia–Tsang with the alpha < 1 boost) and returns its
// cumulative sums.
func dirichletCDF(r *rand.Rand, k int, alpha float64) []float64 {
	g := make([]float64, k)
	sum := 0.0
	for i := range g {
		g[i] = gamma(r, alpha) + 1e-6
		sum += g[i]
	}
	acc := 0.0
	for i := range g {
		acc += g[i] / sum
		g[i] = acc
	}
	g[k-1] = 1
	return g
}

func gamma(r *rand.Rand, a float64) float64 {
	if a < 1 {
		return gamma(r, a+1) * math.Pow(r.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// WideDomain returns the domain of the wide table of cols columns
// (shorthand form: columns c000, c001, … of their sizes).
func WideDomain(cols int, seed uint64) []byte {
	n := newWideNet(cols, seed)
	var b []byte
	b = append(b, '{')
	for j, s := range n.sizes {
		if j > 0 {
			b = append(b, ", "...)
		}
		name, _ := json.Marshal(wideName(j))
		b = append(b, name...)
		b = append(b, ": "...)
		b = strconv.AppendInt(b, int64(s), 10)
	}
	return append(b, "}\n"...)
}

func wideName(j int) string { return fmt.Sprintf("c%03d", j) }

// WriteWide writes the wide table of cols columns and rows rows as CSV of
// codes (header first).
func WriteWide(w io.Writer, cols, rows int, seed uint64) error {
	n := newWideNet(cols, seed)
	r := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(rows)))
	bw := bufio.NewWriterSize(w, 1<<16)
	for j := range cols {
		if j > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(wideName(j))
	}
	bw.WriteByte('\n')
	row := make([]int, cols)
	var buf []byte
	for range rows {
		buf = buf[:0]
		for j := range cols {
			c := 0
			for _, p := range n.parents[j] {
				c = c*n.sizes[p] + row[p]
			}
			u := r.Float64()
			cdf := n.cdf[j][c]
			v := 0
			for v < len(cdf)-1 && u >= cdf[v] {
				v++
			}
			row[j] = v
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(v), 10)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
