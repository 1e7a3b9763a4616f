package release

import (
	"fmt"
	"math"
	"math/bits"
)

// Rand is the random source the output side needs: uniform 64-bit words and
// uniform reals in [0, 1). The pipeline passes a privacy.Rand (ChaCha8
// seeded from crypto/rand, or from a user seed for tests and demos); in
// tests a *math/rand/v2.Rand serves.
type Rand interface {
	Uint64() uint64
	Float64() float64
}

// SampleMethod chooses how the cells of N synthetic records are drawn from a
// distribution D over the universe.
type SampleMethod uint8

// Sampling methods.
const (
	// Systematic (the default) is controlled rounding of N·D: every cell
	// gets ⌊N·D(z)⌋ rows, and the remaining R = N − Σ⌊N·D(z)⌋ rows go to
	// cells chosen by systematic sampling over the fractional parts
	// φ(z) = N·D(z) − ⌊N·D(z)⌋: one uniform offset u in [0, 1), arrows at
	// u, u+1, …, u+R−1 laid over the running sum of φ, one extra row per
	// arrow. Each count is ⌊N·D(z)⌋ or ⌈N·D(z)⌉ (within one of N·D(z)),
	// its expectation is exactly N·D(z) (unbiased), and the total is N. The
	// per-cell sampling error is below 1/N as a fraction, against about
	// √(D(z)/N) for i.i.d. draws.
	Systematic SampleMethod = iota
	// IID draws N records independently from D (a multinomial sample), as
	// a generative model would: counts have expectation N·D(z) and variance
	// N·D(z)(1 − D(z)). Implemented as a sweep of N sorted uniforms over
	// the running sum of D, with the sorted uniforms generated in order
	// from normalised sums of exponential spacings (Rényi's
	// representation), in O(k + N) time and no memory beyond the output.
	IID
	// Balanced is Systematic followed by Balance with the release's
	// workload: every count still within one of N·D(z), the total N, and
	// the workload's answers on the rows as close to D's as single-row moves
	// make them. The release pipeline's default; Sample itself cannot
	// balance (it does not know the workload) and treats it as Systematic.
	Balanced
)

var sampleMethodNames = [...]string{Systematic: "systematic", IID: "iid", Balanced: "balanced"}

// String returns the method's name as used on the command line and in the
// manifest: "systematic", "iid" or "balanced".
func (m SampleMethod) String() string {
	if int(m) < len(sampleMethodNames) {
		return sampleMethodNames[m]
	}
	return fmt.Sprintf("SampleMethod(%d)", m)
}

// ParseSampleMethod returns the method called name ("systematic", "iid" or
// "balanced").
func ParseSampleMethod(name string) (SampleMethod, error) {
	for i, n := range sampleMethodNames {
		if n == name {
			return SampleMethod(i), nil
		}
	}
	return 0, fmt.Errorf("unknown sampling method %q (want balanced, systematic or iid)", name)
}

// CellCount is one cell of the universe and the number of synthetic rows
// drawn in it.
type CellCount struct {
	Cell  uint64 // mixed-radix index in the universe
	Count int64
}

// Tolerances on the distribution handed to Sample. A solver's output is a
// distribution up to rounding; anything further off is a bug upstream and
// is reported rather than papered over.
const (
	// NegativeTolerance: entries in [−NegativeTolerance, 0) are rounding
	// and count as zero; more negative entries are an error.
	NegativeTolerance = 1e-9
	// SumTolerance: the entries must sum to 1 within SumTolerance; they
	// are then renormalised to sum to exactly 1 (up to rounding).
	SumTolerance = 1e-6
)

// DistributionError reports a distribution that Sample cannot draw from.
type DistributionError struct {
	Cell   int     // offending cell, or -1 for the sum
	Value  float64 // the entry, or the sum
	Reason string
}

func (e *DistributionError) Error() string {
	if e.Cell < 0 {
		return fmt.Sprintf("distribution over the universe: %s (sum %v)", e.Reason, e.Value)
	}
	return fmt.Sprintf("distribution over the universe: cell %d is %v: %s", e.Cell, e.Value, e.Reason)
}

// checkDistribution validates d and returns its sum (over the entries that
// count, tiny negatives being zero).
func checkDistribution(d []float64) (float64, error) {
	if len(d) == 0 {
		return 0, &DistributionError{Cell: -1, Reason: "empty distribution"}
	}
	if uint64(len(d)) > math.MaxUint32+1 {
		return 0, &DistributionError{Cell: -1, Value: float64(len(d)),
			Reason: "more than 2^32 cells; rows store cells as uint32"}
	}
	var sum, c float64 // Neumaier summation
	for i, x := range d {
		switch {
		case math.IsNaN(x):
			return 0, &DistributionError{Cell: i, Value: x, Reason: "not a number"}
		case math.IsInf(x, 0):
			return 0, &DistributionError{Cell: i, Value: x, Reason: "infinite"}
		case x < -NegativeTolerance:
			return 0, &DistributionError{Cell: i, Value: x, Reason: "negative beyond rounding"}
		case x <= 0:
			continue
		}
		t := sum + x
		if math.Abs(sum) >= x {
			c += (sum - t) + x
		} else {
			c += (x - t) + sum
		}
		sum = t
	}
	sum += c
	if !(math.Abs(sum-1) <= SumTolerance) {
		return 0, &DistributionError{Cell: -1, Value: sum, Reason: fmt.Sprintf("does not sum to 1 within %g", SumTolerance)}
	}
	return sum, nil
}

// Sample draws the cells of n synthetic records from the distribution d over
// the universe (len k, the mixed-radix order of universe.Domain) and appends
// them to dst as (cell, count) pairs with count > 0, in increasing cell
// order; it returns the extended slice. The counts sum to n. Entries of d
// must be finite, non-negative up to NegativeTolerance, and sum to 1 within
// SumTolerance; otherwise Sample returns a *DistributionError. It runs in
// O(k + n) time (IID) or O(k) (Systematic) and allocates only when dst
// grows.
//
// Privacy: sampling is post-processing of D, which is already differentially
// private; it reads no data and costs no budget, whatever n is. The default
// row count n (the number of input records) is itself public under the
// replace-one neighbouring relation. The random source matters for
// reproducibility only; a seeded source is still fine here, although the
// manifest reports it.
func Sample(dst []CellCount, d []float64, n int64, m SampleMethod, r Rand) ([]CellCount, error) {
	if n < 0 {
		return dst, fmt.Errorf("sample: negative row count %d", n)
	}
	sum, err := checkDistribution(d)
	if err != nil {
		return dst, err
	}
	if n == 0 {
		return dst, nil
	}
	switch m {
	case Systematic, Balanced:
		return sampleSystematic(dst, d, n, 1/sum, r), nil
	case IID:
		return sampleIID(dst, d, n, 1/sum, r), nil
	}
	return dst, fmt.Errorf("sample: unknown method %v", m)
}

// sampleSystematic is controlled rounding of n·d: floors plus systematic
// sampling over the fractional parts. See Systematic.
func sampleSystematic(dst []CellCount, d []float64, n int64, scale float64, r Rand) []CellCount {
	nf := float64(n) * scale
	start := len(dst)
	u := r.Float64()
	// First pass: floors and, through the running sum s of the fractional
	// parts (Neumaier-compensated), the extra rows: cell z gets
	// ⌊s_z + u⌋ − ⌊s_{z−1} + u⌋ extras, which is 0 or 1 because each
	// fractional part is below 1 (clamped against rounding).
	var (
		s, c float64
		prev = math.Floor(u)
	)
	for z, p := range d {
		if p <= 0 {
			continue
		}
		x := p * nf
		f := math.Floor(x)
		phi := x - f // exact in floating point
		t := s + phi
		if math.Abs(s) >= phi {
			c += (s - t) + phi
		} else {
			c += (phi - t) + s
		}
		s = t
		cur := math.Floor(s + c + u)
		extra := int64(0)
		if cur > prev {
			extra = 1
		}
		prev = max(prev, cur)
		cnt := int64(f) + extra
		if cnt > 0 {
			dst = append(dst, CellCount{Cell: uint64(z), Count: cnt})
		}
	}
	// The extras number ⌊S + u⌋ where S = Σφ equals R = n − Σ⌊x⌋ up to
	// the rounding of the x = n·d(z), at most a few n·2^−53 in all, so the
	// total can be off by one only when S + u lies that close to an
	// integer (probability about 1e-9 for n = 10^7). Restore the exact total
	// by a deterministic fix-up that keeps every count within one.
	got := int64(0)
	for _, e := range dst[start:] {
		got += e.Count
	}
	if got != n {
		dst = fixTotal(dst, start, d, nf, n-got)
	}
	return dst
}

// fixTotal adds (diff > 0) or removes (diff < 0) one row in each of |diff|
// cells whose count is at its floor (resp. ceiling) and whose fractional
// part is positive, keeping every count within one of n·d(z). It only runs
// after a rounding coincidence.
func fixTotal(dst []CellCount, start int, d []float64, nf float64, diff int64) []CellCount {
	pos := start
	for z := 0; z < len(d) && diff != 0; z++ {
		if d[z] <= 0 {
			continue
		}
		x := d[z] * nf
		f := math.Floor(x)
		for pos < len(dst) && dst[pos].Cell < uint64(z) {
			pos++
		}
		have := int64(0)
		if pos < len(dst) && dst[pos].Cell == uint64(z) {
			have = dst[pos].Count
		}
		if x == f {
			continue // an integer: its count is exact
		}
		switch {
		case diff > 0 && have == int64(f):
			if have == 0 {
				dst = append(dst, CellCount{})
				copy(dst[pos+1:], dst[pos:])
				dst[pos] = CellCount{Cell: uint64(z)}
			}
			dst[pos].Count++
			diff--
		case diff < 0 && have == int64(f)+1:
			dst[pos].Count--
			diff++
			if dst[pos].Count == 0 {
				dst = append(dst[:pos], dst[pos+1:]...)
			}
		}
	}
	if diff != 0 {
		panic("release: systematic sampling cannot restore the row total")
	}
	return dst
}

// sampleIID draws n i.i.d. records: n sorted uniforms swept over the
// running sum of d. Given the order statistic U_(i−1), the next one is the
// minimum of the n−i+1 uniforms left on (U_(i−1), 1):
// U_(i) = 1 − (1 − U_(i−1))·V^(1/(n−i+1)) with V uniform, computed in log
// space, so the sorted sample comes in increasing order without storing it.
func sampleIID(dst []CellCount, d []float64, n int64, scale float64, r Rand) []CellCount {
	var (
		logRest = 0.0 // log(1 − U_(i−1))
		left    = n   // order statistics still to draw
		cum     float64
		c       float64
		z       = 0
		count   int64
	)
	next := func() float64 {
		// log(1 − U_(i)) = log(1 − U_(i−1)) + log(V)/left.
		logRest += math.Log(1-r.Float64()) / float64(left)
		left--
		return -math.Expm1(logRest) // U_(i)
	}
	last := len(d) - 1
	for last > 0 && !(d[last] > 0) {
		last--
	}
	u := next()
	for z <= last {
		p := d[z]
		if p > 0 {
			p *= scale
			t := cum + p
			if math.Abs(cum) >= p {
				c += (cum - t) + p
			} else {
				c += (p - t) + cum
			}
			cum = t
		}
		hi := cum + c
		if z == last {
			hi = math.Inf(1) // the last positive cell takes what rounding left over
		}
		for u < hi && count < n {
			count++
			if dst = addRow(dst, uint64(z)); left == 0 {
				return dst
			}
			u = next()
		}
		z++
	}
	return dst
}

// addRow adds one row in cell z, the cells arriving in increasing order.
func addRow(dst []CellCount, z uint64) []CellCount {
	if n := len(dst); n > 0 && dst[n-1].Cell == z {
		dst[n-1].Count++
		return dst
	}
	return append(dst, CellCount{Cell: z, Count: 1})
}

// uintn returns a uniform integer in [0, n) by Lemire's multiply-shift
// method with rejection (unbiased).
func uintn(r Rand, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// Rows expands (cell, count) pairs into the cell of each synthetic row,
// appended to dst in a uniformly random order, so that the order of the
// rows in the output reveals nothing about the order of the cells. Cells
// must be below 2^32 (Sample guarantees it).
//
// Small outputs are expanded and shuffled by Fisher–Yates (Shuffle), which
// allocates nothing beyond dst. From bucketMin rows on, Rows uses the
// Rao–Sandelius method, which is cache-friendly: every row gets an
// independent uniform label in 0..255, the rows are written grouped by
// label (256 sequential streams), and each group, small enough for the
// cache, is shuffled by Fisher–Yates. Given the group sizes, the labels
// assign the rows to the groups as a uniformly random set partition, and
// each group's order is uniform, so the whole order is a uniformly random
// permutation (Rao 1961, Sandelius 1962). It allocates one byte per row
// for the labels.
//
// Privacy: post-processing; no budget.
func Rows(dst []uint32, cells []CellCount, r Rand) []uint32 {
	start := len(dst)
	var total int64
	for _, c := range cells {
		if c.Cell > math.MaxUint32 {
			panic(fmt.Sprintf("release: cell %d does not fit in uint32", c.Cell))
		}
		total += c.Count
	}
	dst = growRows(dst, total)
	if total < bucketMin {
		for _, c := range cells {
			for range c.Count {
				dst = append(dst, uint32(c.Cell))
			}
		}
		Shuffle(dst[start:], r)
		return dst
	}
	labels := make([]uint8, total)
	var ends [257]int64 // group g fills [ends[g], ends[g+1]) after the prefix sum
	for i := int64(0); i < total; i += 8 {
		u := r.Uint64()
		for j := i; j < min(i+8, total); j++ {
			labels[j] = uint8(u)
			ends[int(uint8(u))+1]++
			u >>= 8
		}
	}
	for g := 1; g <= 256; g++ {
		ends[g] += ends[g-1]
	}
	out := dst[start : int64(start)+total]
	dst = dst[:int64(start)+total]
	next := ends
	i := int64(0)
	for _, c := range cells {
		for range c.Count {
			g := labels[i]
			out[next[g]] = uint32(c.Cell)
			next[g]++
			i++
		}
	}
	for g := range 256 {
		Shuffle(out[ends[g]:ends[g+1]], r)
	}
	return dst
}

// bucketMin is the number of rows from which Rows uses the bucketed
// (Rao–Sandelius) shuffle; a variable so that tests can exercise it on
// small inputs.
var bucketMin int64 = 1 << 16

func growRows(dst []uint32, extra int64) []uint32 {
	if int64(cap(dst)-len(dst)) >= extra {
		return dst
	}
	out := make([]uint32, len(dst), int64(len(dst))+extra)
	copy(out, dst)
	return out
}

// Shuffle permutes rows uniformly at random (Fisher–Yates with unbiased
// bounded draws). It allocates nothing.
func Shuffle(rows []uint32, r Rand) {
	for i := len(rows) - 1; i > 0; i-- {
		j := uintn(r, uint64(i)+1)
		rows[i], rows[j] = rows[j], rows[i]
	}
}

// Histogram writes the fraction of rows in each cell into out (len k,
// overwritten): the synthetic data's P_n, for answering the workload on the
// released rows with query.Operator.Answer.
func Histogram(cells []CellCount, out []float64) []float64 {
	clear(out)
	var total int64
	for _, c := range cells {
		total += c.Count
	}
	if total == 0 {
		return out
	}
	inv := 1 / float64(total)
	for _, c := range cells {
		out[c.Cell] = float64(c.Count) * inv
	}
	return out
}
