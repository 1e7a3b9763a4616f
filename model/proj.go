package model

import "github.com/dpsynth/synth/internal/vec"

// proj maps the cells of a table over an attribute set (mixed radix, last
// attribute fastest) onto the cells of a table over a subset. Runs of
// adjacent attributes that are all summed out, or all kept, are merged into
// one dimension, so the innermost loop runs over as many cells as possible
// and the odometer carries only at the end of each run. The innermost
// dimension's stride in the target is 0 (summed out) or 1.
type proj struct {
	dims   []int // merged dimension sizes, outermost first (at least one)
	stride []int // each dimension's stride in the target table (0: not in it)
	cells  int   // cells of the source table
	tcells int   // cells of the target table
}

// build sets p to map a table over from onto a table over to (to ⊆ from,
// both increasing) for attribute sizes; dims and stride are the backing
// arrays (capacity at least len(from)+1) so that build allocates nothing.
func (p *proj) build(sizes, from, to []int, dims, stride []int) {
	dims, stride = dims[:0], stride[:0]
	p.cells, p.tcells = 1, 1
	for _, a := range to {
		p.tcells *= sizes[a]
	}
	k := 0 // position in to
	for _, a := range from {
		sz := sizes[a]
		p.cells *= sz
		in := k < len(to) && to[k] == a
		st := 0
		if in {
			st = 1
			for _, b := range to[k+1:] {
				st *= sizes[b]
			}
			k++
		}
		if sz == 1 {
			continue
		}
		if n := len(dims); n > 0 && ((st == 0 && stride[n-1] == 0) || (st != 0 && stride[n-1] == st*sz)) {
			dims[n-1] *= sz
			stride[n-1] = st
			continue
		}
		dims = append(dims, sz)
		stride = append(stride, st)
	}
	if k != len(to) {
		panic("model: projection onto a set that is not a subset")
	}
	if len(dims) == 0 {
		dims = append(dims, 1)
		stride = append(stride, 0)
	}
	if s := stride[len(stride)-1]; s > 1 {
		panic("model: projection with an inner stride above 1")
	}
	p.dims, p.stride = dims, stride
}

// start writes the odometer digits of source cell lo into dig and returns
// its target cell.
func (p *proj) start(lo int, dig []int) int {
	j := 0
	for d := len(p.dims) - 1; d >= 0; d-- {
		dig[d] = lo % p.dims[d]
		lo /= p.dims[d]
		j += dig[d] * p.stride[d]
	}
	return j
}

// next advances the odometer by run cells of the innermost dimension (the
// rest of it) and returns the new target cell.
func (p *proj) next(dig []int, j, run int) int {
	last := len(p.dims) - 1
	j += run * p.stride[last]
	dig[last] += run
	for d := last; d > 0 && dig[d] == p.dims[d]; d-- {
		j -= p.dims[d] * p.stride[d]
		dig[d] = 0
		dig[d-1]++
		j += p.stride[d-1]
	}
	return j
}

// block reports whether the odometer stands at the start of a whole block
// of the two innermost dimensions with at least rest cells to go, and if
// so returns the outer of the two sizes and the block's cells. (Adjacent
// merged dimensions alternate between kept and summed out, so in a block
// exactly one of the two strides is 0.)
func (p *proj) block(dig []int, rest int) (d1, cells int) {
	last := len(p.dims) - 1
	if last < 1 || dig[last] != 0 || dig[last-1] != 0 {
		return 0, 0
	}
	d1 = p.dims[last-1]
	cells = d1 * p.dims[last]
	if cells > rest {
		return 0, 0
	}
	return d1, cells
}

// skipBlock advances the odometer past the block that block reported and
// returns the new target cell.
func (p *proj) skipBlock(dig []int, j int) int {
	last := len(p.dims) - 1
	dig[last-1] = p.dims[last-1] - 1
	j += (p.dims[last-1] - 1) * p.stride[last-1]
	return p.next(dig, j, p.dims[last])
}

// sumTo adds the source cells i in [lo, hi) into dst[j(i)]; src holds
// those cells (src[0] is cell lo).
func (p *proj) sumTo(dst, src []float64, lo, hi int, dig []int) {
	last := len(p.dims) - 1
	in, ist := p.dims[last], p.stride[last]
	j := p.start(lo, dig)
	hi -= lo // i indexes the window
	for i := 0; i < hi; {
		if d1, blk := p.block(dig, hi-i); blk > 0 {
			// a whole block of the two innermost dimensions
			s1 := p.stride[last-1]
			if ist == 0 && in == 2 {
				// pairs: (0+x)+(0+y) and x+y are the same sum here
				// (targets start at +0 and never hold -0)
				s := src[i : i+blk]
				for a := range d1 {
					dst[j+a*s1] += s[2*a] + s[2*a+1]
				}
			} else if ist == 0 {
				for a := range d1 {
					s := src[i+a*in : i+(a+1)*in]
					var a0, a1 float64
					k := 0
					for ; k+1 < len(s); k += 2 {
						a0 += s[k]
						a1 += s[k+1]
					}
					if k < len(s) {
						a0 += s[k]
					}
					dst[j+a*s1] += a0 + a1
				}
			} else if in == 2 { // a binary innermost attribute: two running sums
				var a0, a1 float64
				s := src[i : i+blk]
				for k := 0; k+1 < len(s); k += 2 {
					a0 += s[k]
					a1 += s[k+1]
				}
				dst[j] += a0
				dst[j+1] += a1
			} else if in >= longRun {
				d := dst[j : j+in]
				for a := range d1 {
					addVec(d, src[i+a*in:i+(a+1)*in])
				}
			} else {
				d := dst[j : j+in]
				for a := range d1 {
					for k, v := range src[i+a*in : i+(a+1)*in] {
						d[k] += v
					}
				}
			}
			i += blk
			j = p.skipBlock(dig, j)
			continue
		}
		run := min(in-dig[last], hi-i)
		s := src[i : i+run]
		if ist == 0 {
			var a0, a1 float64
			k := 0
			for ; k+1 < len(s); k += 2 {
				a0 += s[k]
				a1 += s[k+1]
			}
			if k < len(s) {
				a0 += s[k]
			}
			dst[j] += a0 + a1
		} else if run >= longRun {
			addVec(dst[j:j+run], s)
		} else {
			d := dst[j : j+run]
			for k, v := range s {
				d[k] += v
			}
		}
		i += run
		j = p.next(dig, j, run)
	}
}

// addFrom adds a·src[j(i)] to dst[i] for source cells i in [lo, hi).
func (p *proj) addFrom(dst []float64, a float64, src []float64, lo, hi int, dig []int) {
	last := len(p.dims) - 1
	in, ist := p.dims[last], p.stride[last]
	j := p.start(lo, dig)
	for i := lo; i < hi; {
		if d1, blk := p.block(dig, hi-i); blk > 0 {
			s1 := p.stride[last-1]
			switch {
			case ist == 0 && in == 2:
				d := dst[i : i+blk]
				for b := range d1 {
					v := a * src[j+b*s1]
					d[2*b] += v
					d[2*b+1] += v
				}
			case ist == 0:
				for b := range d1 {
					v := a * src[j+b*s1]
					d := dst[i+b*in : i+(b+1)*in]
					for k := range d {
						d[k] += v
					}
				}
			case in == 2:
				v0, v1 := a*src[j], a*src[j+1]
				d := dst[i : i+blk]
				for q := 0; q+1 < len(d); q += 2 {
					d[q] += v0
					d[q+1] += v1
				}
			default:
				s := src[j : j+in]
				for b := range d1 {
					d := dst[i+b*in : i+(b+1)*in]
					for k := range d {
						d[k] += a * s[k]
					}
				}
			}
			i += blk
			j = p.skipBlock(dig, j)
			continue
		}
		run := min(in-dig[last], hi-i)
		d := dst[i : i+run]
		if ist == 0 {
			v := a * src[j]
			for k := range d {
				d[k] += v
			}
		} else {
			s := src[j : j+run]
			for k := range d {
				d[k] += a * s[k]
			}
		}
		i += run
		j = p.next(dig, j, run)
	}
}

// longRun is the least run length for which the product kernels call the
// vector kernels (copy, vec.Scale, mulVec) instead of a plain loop.
const longRun = 16

// mulFrom multiplies the source cells i in [lo, hi) by src[j(i)]; dst
// holds those cells (dst[0] is cell lo).
func (p *proj) mulFrom(dst, src []float64, lo, hi int, dig []int) {
	last := len(p.dims) - 1
	in, ist := p.dims[last], p.stride[last]
	j := p.start(lo, dig)
	hi -= lo // i indexes the window
	for i := 0; i < hi; {
		if d1, blk := p.block(dig, hi-i); blk > 0 {
			s1 := p.stride[last-1]
			if ist == 0 {
				for b := range d1 {
					mulScalar(dst[i+b*in:i+(b+1)*in], src[j+b*s1])
				}
			} else {
				s := src[j : j+in]
				for b := range d1 {
					mulRun(dst[i+b*in:i+(b+1)*in], s)
				}
			}
			i += blk
			j = p.skipBlock(dig, j)
			continue
		}
		run := min(in-dig[last], hi-i)
		d := dst[i : i+run]
		if ist == 0 {
			mulScalar(d, src[j])
		} else {
			mulRun(d, src[j:j+run])
		}
		i += run
		j = p.next(dig, j, run)
	}
}

// mulScalar multiplies d by v.
func mulScalar(d []float64, v float64) {
	if len(d) >= longRun {
		vec.Scale(d, v)
		return
	}
	for k := range d {
		d[k] *= v
	}
}

// mulRun multiplies d by s elementwise (len(s) == len(d)).
func mulRun(d, s []float64) {
	if len(d) >= longRun {
		mulVec(d, s)
		return
	}
	s = s[:len(d)]
	for k := range d {
		d[k] *= s[k]
	}
}

// setFrom sets the source cells i in [lo, hi) to src[j(i)]; dst holds
// those cells (dst[0] is cell lo).
func (p *proj) setFrom(dst, src []float64, lo, hi int, dig []int) {
	last := len(p.dims) - 1
	in, ist := p.dims[last], p.stride[last]
	j := p.start(lo, dig)
	hi -= lo // i indexes the window
	for i := 0; i < hi; {
		if d1, blk := p.block(dig, hi-i); blk > 0 {
			s1 := p.stride[last-1]
			if ist == 0 {
				for b := range d1 {
					fill(dst[i+b*in:i+(b+1)*in], src[j+b*s1])
				}
			} else {
				s := src[j : j+in]
				for b := range d1 {
					copy(dst[i+b*in:i+(b+1)*in], s)
				}
			}
			i += blk
			j = p.skipBlock(dig, j)
			continue
		}
		run := min(in-dig[last], hi-i)
		d := dst[i : i+run]
		if ist == 0 {
			fill(d, src[j])
		} else {
			copy(d, src[j:j+run])
		}
		i += run
		j = p.next(dig, j, run)
	}
}

// fill sets every element of d to v.
func fill(d []float64, v float64) {
	if len(d) < longRun {
		for k := range d {
			d[k] = v
		}
		return
	}
	d[0] = v
	for k := 1; k < len(d); k *= 2 {
		copy(d[k:], d[:k])
	}
}

// maxTo sets dst[j(i)] = max(dst[j(i)], src[i]) for source cells i in
// [lo, hi).
func (p *proj) maxTo(dst, src []float64, lo, hi int, dig []int) {
	last := len(p.dims) - 1
	in, ist := p.dims[last], p.stride[last]
	j := p.start(lo, dig)
	for i := lo; i < hi; {
		run := min(in-dig[last], hi-i)
		s := src[i : i+run]
		if ist == 0 {
			dst[j] = max(dst[j], maxOf(s))
		} else {
			d := dst[j : j+run]
			for k, v := range s {
				if v > d[k] {
					d[k] = v
				}
			}
		}
		i += run
		j = p.next(dig, j, run)
	}
}

// each calls f(i, j, run) for each run of source cells i..i+run-1 in
// [lo, hi) whose target cells are j, j+st, … (st the inner stride, 0 or 1).
// It is for the rare paths (exact log-sum-exp, elimination).
func (p *proj) each(lo, hi int, dig []int, f func(i, j, run int)) {
	last := len(p.dims) - 1
	in := p.dims[last]
	j := p.start(lo, dig)
	for i := lo; i < hi; {
		run := min(in-dig[last], hi-i)
		f(i, j, run)
		i += run
		j = p.next(dig, j, run)
	}
}

// inner is the target stride of the innermost dimension (0 or 1).
func (p *proj) inner() int { return p.stride[len(p.stride)-1] }
