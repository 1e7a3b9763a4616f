package contrib

import (
	"bytes"
	"container/heap"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// SaltLen is the length of a salt: 32 lowercase hexadecimal digits (128
// bits).
const SaltLen = 32

// Salt is the secret that keys a release's unit IDs and priorities.
type Salt string

// NewSalt returns a salt made of the 128 bits of two 64-bit draws.
func NewSalt(u64 func() uint64) Salt {
	var b [16]byte
	for i := range 2 {
		v := u64()
		for k := range 8 {
			b[8*i+k] = byte(v >> (8 * k))
		}
	}
	return Salt(hex.EncodeToString(b[:]))
}

// Check reports an error unless s is 32 lowercase hexadecimal digits.
func (s Salt) Check() error {
	if len(s) != SaltLen {
		return fmt.Errorf("contrib: a salt has %d hexadecimal digits, not %d", SaltLen, len(s))
	}
	for i := range len(s) {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return errors.New("contrib: a salt is lowercase hexadecimal")
		}
	}
	return nil
}

// ID identifies a unit: md5(salt ‖ unit text).
type ID [md5.Size]byte

// UnitID returns the ID of the unit whose column holds text.
func UnitID(salt Salt, text string) ID {
	h := md5.New()
	h.Write([]byte(salt))
	h.Write([]byte(text))
	var id ID
	h.Sum(id[:0])
	return id
}

// UnitIDBytes is UnitID for a unit text held as bytes.
func UnitIDBytes(salt Salt, text []byte) ID {
	h := md5.New()
	h.Write([]byte(salt))
	h.Write(text)
	var id ID
	h.Sum(id[:0])
	return id
}

// Hex returns the ID as 32 lowercase hexadecimal digits (what SQL's
// md5(...) returns).
func (id ID) Hex() string { return hex.EncodeToString(id[:]) }

// AppendCellText appends the cell text of codes (decimal codes joined by
// ",", in the domain's attribute order) to dst.
func AppendCellText(dst []byte, codes []int) []byte {
	for i, c := range codes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(c), 10)
	}
	return dst
}

// CellText returns the cell text of codes.
func CellText(codes []int) string { return string(AppendCellText(nil, codes)) }

// Priority is a copy's rank key: md5(hex(u) ‖ "|" ‖ cell ‖ "|" ‖ j).
type Priority [md5.Size]byte

// Less orders priorities bytewise (the order of their hexadecimal text).
func (p Priority) Less(q Priority) bool { return bytes.Compare(p[:], q[:]) < 0 }

// PriorityOf returns the priority of copy j (1-based) of a unit's rows in
// the cell whose text is cell.
func PriorityOf(u ID, cell []byte, j int64) Priority {
	var buf [2*md5.Size + 1]byte
	hex.Encode(buf[:2*md5.Size], u[:])
	buf[2*md5.Size] = '|'
	h := md5.New()
	h.Write(buf[:])
	h.Write(cell)
	var tail [24]byte
	t := append(tail[:0], '|')
	t = strconv.AppendInt(t, j, 10)
	h.Write(t)
	var p Priority
	h.Sum(p[:0])
	return p
}

// Cell is one cell of a unit's rows: its text and how many rows the unit
// has there.
type Cell struct {
	Text  []byte
	Count int64
}

// Keep applies the rule to one unit: cells lists the unit's rows by cell
// (each cell at most once, any order), and kept[i] receives how many of the
// Count rows of cells[i] the unit keeps; the kept rows sum to min(K, Σ
// Count). kept must have len(cells). Units with at most K rows keep every
// row without computing a priority.
func Keep(u ID, k int64, cells []Cell, kept []int64) {
	if len(kept) != len(cells) {
		panic("contrib: Keep with len(kept) != len(cells)")
	}
	if k < 1 {
		panic("contrib: Keep with K < 1")
	}
	total := int64(0)
	for i, c := range cells {
		kept[i] = 0
		total += c.Count
	}
	if total <= k {
		for i, c := range cells {
			kept[i] = c.Count
		}
		return
	}
	// The K smallest priorities: a max-heap of size K.
	h := &topK{}
	for i, c := range cells {
		for j := int64(1); j <= c.Count; j++ {
			p := PriorityOf(u, c.Text, j)
			if int64(h.Len()) < k {
				heap.Push(h, ranked{p, i})
			} else if p.Less(h.items[0].p) {
				h.items[0] = ranked{p, i}
				heap.Fix(h, 0)
			}
		}
	}
	for _, r := range h.items {
		kept[r.cell]++
	}
}

type ranked struct {
	p    Priority
	cell int
}

// topK is a max-heap of priorities.
type topK struct{ items []ranked }

func (h *topK) Len() int           { return len(h.items) }
func (h *topK) Less(i, j int) bool { return h.items[j].p.Less(h.items[i].p) }
func (h *topK) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *topK) Push(x any)         { h.items = append(h.items, x.(ranked)) }
func (h *topK) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
