package universe

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Counts is a sparse histogram over a universe: one entry per distinct cell
// seen, with its number of records. It holds at most n entries whatever the
// size of the universe. The zero value is not usable; call NewCounts.
//
// A Counts is not safe for concurrent use; ingest workers keep one each and
// Merge them.
type Counts struct {
	dom   *Domain
	width int
	pos   map[uint64]int32 // cell index -> entry, when the universe is indexable
	posK  map[string]int32 // packed codes -> entry, otherwise
	codes []int32          // entry i's codes are codes[i*width : (i+1)*width]
	idx   []uint64         // entry i's cell index (indexable universes only)
	cnt   []int64
	total int64
}

// ErrCountOverflow is returned when the total count would exceed int64.
var ErrCountOverflow = errors.New("total count exceeds 2^63-1")

// NewCounts returns an empty histogram over d.
func NewCounts(d *Domain) *Counts {
	c := &Counts{dom: d, width: d.Len()}
	if d.Indexable() {
		c.pos = make(map[uint64]int32)
	} else {
		c.posK = make(map[string]int32)
	}
	return c
}

// Domain returns the domain the counts are over.
func (c *Counts) Domain() *Domain { return c.dom }

// Total is the number of records counted (n).
func (c *Counts) Total() int64 { return c.total }

// Distinct is the number of distinct cells seen.
func (c *Counts) Distinct() int { return len(c.cnt) }

// Count returns the count of entry i (0 <= i < Distinct()).
func (c *Counts) Count(i int) int64 { return c.cnt[i] }

// Codes returns the codes of entry i. The slice aliases internal storage
// and must not be modified.
func (c *Counts) Codes(i int) []int32 { return c.codes[i*c.width : (i+1)*c.width : (i+1)*c.width] }

// Entries returns the codes of every entry, row-major (Domain().Len() per
// entry, entry i's at codes[i*Len() : (i+1)*Len()]), and their counts. The
// slices alias internal storage and must not be modified.
func (c *Counts) Entries() (codes []int32, counts []int64) {
	return c.codes[:len(c.cnt)*c.width], c.cnt
}

// Index returns the cell index of entry i; the universe must be indexable.
func (c *Counts) Index(i int) uint64 {
	if c.idx == nil && len(c.cnt) > 0 {
		panic("universe: Counts.Index on a universe larger than 2^64 cells")
	}
	return c.idx[i]
}

// Add counts w records (w >= 0) in the cell with the given codes. The codes
// must be valid for the domain (they come from the attributes' Encode
// methods); Add panics otherwise.
func (c *Counts) Add(codes []int, w int64) error {
	if len(codes) != c.width {
		panic(fmt.Sprintf("universe: Counts.Add with %d codes for %d attributes", len(codes), c.width))
	}
	if w < 0 {
		panic("universe: Counts.Add with a negative count")
	}
	if c.total > math.MaxInt64-w {
		return ErrCountOverflow
	}
	if c.pos != nil {
		idx := c.dom.Encode(codes)
		if e, ok := c.pos[idx]; ok {
			c.cnt[e] += w
		} else {
			c.pos[idx] = int32(len(c.cnt))
			c.appendEntry(codes, w)
			c.idx = append(c.idx, idx)
		}
	} else {
		for i, v := range codes {
			if v < 0 || v >= c.dom.attrs[i].size {
				panic(fmt.Sprintf("universe: code %d out of range for attribute %q", v, c.dom.attrs[i].Name))
			}
		}
		key := packCodes(codes)
		if e, ok := c.posK[key]; ok {
			c.cnt[e] += w
		} else {
			c.posK[key] = int32(len(c.cnt))
			c.appendEntry(codes, w)
		}
	}
	c.total += w
	return nil
}

func (c *Counts) appendEntry(codes []int, w int64) {
	if len(c.cnt) == math.MaxInt32 {
		panic("universe: more than 2^31-1 distinct cells")
	}
	for _, v := range codes {
		c.codes = append(c.codes, int32(v))
	}
	c.cnt = append(c.cnt, w)
}

func packCodes(codes []int) string {
	b := make([]byte, 4*len(codes))
	for i, v := range codes {
		u := uint32(v)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Merge adds the counts of o (over the same domain) into c.
func (c *Counts) Merge(o *Counts) error {
	if o.dom != c.dom {
		panic("universe: Merge of counts over different domains")
	}
	codes := make([]int, c.width)
	for i := range o.cnt {
		for j, v := range o.Codes(i) {
			codes[j] = int(v)
		}
		if err := c.Add(codes, o.cnt[i]); err != nil {
			return err
		}
	}
	return nil
}

// Normalized writes the histogram as fractions of the total, P_n, into the
// dense vector out (len = universe size) and returns it. Cells not seen are
// set to zero.
func (c *Counts) Normalized(out []float64) []float64 {
	k, ok := c.dom.Size()
	if !ok || uint64(len(out)) != k {
		panic(fmt.Sprintf("universe: Normalized into a vector of %d cells for a universe of %s cells", len(out), c.dom.size))
	}
	clear(out)
	if c.total == 0 {
		return out
	}
	inv := 1 / float64(c.total)
	for i, idx := range c.idx {
		out[idx] = float64(c.cnt[i]) * inv
	}
	return out
}
