package ingest

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// poolAllocator is an Arrow memory.Allocator that recycles the buffers of
// released record batches through size-class pools. Ingest builds and drops
// a few megabytes of Arrow buffers per batch; with memory.GoAllocator that
// is garbage for the collector (about 30% of the CPU time of a CSV read, see
// docs/BENCHMARKS.md). arrow-go ships no pooling allocator, hence this one.
//
// Buffers are zeroed when handed out, as Arrow's builders expect (the
// GoAllocator and the cgo Mallocator both return zeroed memory), and
// 64-byte aligned. Buffers larger than the largest class are left to the
// garbage collector.
type poolAllocator struct {
	pools [maxClass + 1]sync.Pool
}

const (
	minClass  = 6  // 64 bytes
	maxClass  = 26 // 64 MiB
	alignment = 64
)

var batchAllocator memory.Allocator = &poolAllocator{}

func class(size int) int {
	if size <= 1<<minClass {
		return minClass
	}
	return bits.Len(uint(size - 1))
}

func (p *poolAllocator) Allocate(size int) []byte {
	c := class(size)
	if c > maxClass {
		return memory.DefaultAllocator.Allocate(size)
	}
	if v := p.pools[c].Get(); v != nil {
		b := *(v.(*[]byte))
		b = b[:size]
		clear(b)
		return b
	}
	buf := make([]byte, 1<<c+alignment)
	shift := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % alignment); r != 0 {
		shift = alignment - r
	}
	return buf[shift : shift+size : shift+1<<c]
}

func (p *poolAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:]) // the tail may hold data of a previous use
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *poolAllocator) Free(b []byte) {
	c := cap(b)
	if c == 0 || c&(c-1) != 0 || c < 1<<minClass || c > 1<<maxClass {
		return // not one of ours (or too large): leave it to the collector
	}
	b = b[:0]
	p.pools[bits.TrailingZeros(uint(c))].Put(&b)
}
