package ingest

import (
	"testing"
	"unsafe"
)

func TestPoolAllocator(t *testing.T) {
	var p poolAllocator
	aligned := func(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%alignment == 0 }
	for _, size := range []int{0, 1, 63, 64, 65, 1000, 1 << 20} {
		for round := range 3 { // later rounds reuse freed buffers
			b := p.Allocate(size)
			if len(b) != size || !aligned(b) {
				t.Fatalf("Allocate(%d) round %d: len %d, aligned %v", size, round, len(b), aligned(b))
			}
			for i, v := range b {
				if v != 0 {
					t.Fatalf("Allocate(%d) round %d: byte %d is %d, want zeroed memory", size, round, i, v)
				}
			}
			b = b[:cap(b)]
			for i := range b {
				b[i] = 0xff // dirty the whole buffer before freeing it
			}
			b = p.Reallocate(size/2, b[:size/2])
			b = p.Reallocate(cap(b), b) // grow within capacity: the tail must be zeroed
			for i, v := range b[size/2:] {
				if v != 0 {
					t.Fatalf("Reallocate within capacity (size %d): byte %d is %d, want 0", size, size/2+i, v)
				}
			}
			b[0] = 1
			g := p.Reallocate(2*cap(b)+1, b) // grow beyond: contents move
			if g[0] != 1 || len(g) != 2*cap(b)+1 || !aligned(g) {
				t.Fatalf("Reallocate beyond capacity: first byte %d, len %d", g[0], len(g))
			}
			p.Free(g)
		}
	}
	p.Free(make([]byte, 100)) // foreign buffers are ignored
	if big := p.Allocate(1<<maxClass + 1); len(big) != 1<<maxClass+1 {
		t.Fatalf("Allocate beyond the largest class: len %d", len(big))
	}
}
