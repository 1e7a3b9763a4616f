package universe

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	d := mustDomain(t, `{"a": 3, "b": 1, "c": 7, "d": 2}`)
	k, _ := d.Size()
	codes := make([]int, d.Len())
	for idx := uint64(0); idx < k; idx++ {
		d.Decode(idx, codes)
		if got := d.Encode(codes); got != idx {
			t.Fatalf("Encode(Decode(%d)) = %d (codes %v)", idx, got, codes)
		}
	}
	// Last attribute fastest.
	if got := d.Encode([]int{0, 0, 0, 1}); got != 1 {
		t.Errorf("Encode([0 0 0 1]) = %d, want 1", got)
	}
	if got := d.Encode([]int{1, 0, 0, 0}); got != 14 {
		t.Errorf("Encode([1 0 0 0]) = %d, want 14", got)
	}
}

func TestCounts(t *testing.T) {
	d := mustDomain(t, `{"a": 3, "b": 4}`)
	c := NewCounts(d)
	rows := [][]int{{0, 1}, {2, 3}, {0, 1}, {1, 0}}
	for _, r := range rows {
		if err := c.Add(r, 1); err != nil {
			t.Fatal(err)
		}
	}
	if c.Total() != 4 || c.Distinct() != 3 {
		t.Fatalf("Total, Distinct = %d, %d, want 4, 3", c.Total(), c.Distinct())
	}
	p := c.Normalized(make([]float64, 12))
	want := make([]float64, 12)
	want[1], want[11], want[4] = 0.5, 0.25, 0.25
	if !slices.Equal(p, want) {
		t.Errorf("Normalized = %v, want %v", p, want)
	}
	o := NewCounts(d)
	o.Add([]int{2, 3}, 6)
	if err := c.Merge(o); err != nil {
		t.Fatal(err)
	}
	if c.Total() != 10 || c.Distinct() != 3 {
		t.Errorf("after Merge: Total, Distinct = %d, %d, want 10, 3", c.Total(), c.Distinct())
	}
	for i := range c.Distinct() {
		if codes := c.Codes(i); int(codes[0]) == 2 && c.Count(i) != 7 {
			t.Errorf("count of cell (2,3) = %d, want 7", c.Count(i))
		}
	}
	if err := c.Add([]int{0, 0}, 1<<63-1); err != ErrCountOverflow {
		t.Errorf("Add beyond int64: err = %v, want ErrCountOverflow", err)
	}
}

func FuzzEncodeDecode(f *testing.F) {
	f.Add([]byte{3, 1, 7, 2}, uint64(17))
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255}, uint64(1)<<62)
	f.Fuzz(func(t *testing.T, sizes []byte, seed uint64) {
		if len(sizes) == 0 || len(sizes) > 12 {
			return
		}
		attrs := make([]*Attribute, len(sizes))
		for i, s := range sizes {
			a, err := NewEncoded(string(rune('a'+i)), int(s)+1)
			if err != nil {
				t.Fatal(err)
			}
			attrs[i] = a
		}
		d, err := NewDomain(attrs...)
		if err != nil {
			t.Fatal(err)
		}
		k, ok := d.Size()
		if !ok {
			return
		}
		r := rand.New(rand.NewPCG(seed, 1))
		codes := make([]int, d.Len())
		for range 16 {
			idx := r.Uint64N(k)
			d.Decode(idx, codes)
			for i, c := range codes {
				if c < 0 || c >= d.Attr(i).Size() {
					t.Fatalf("Decode(%d) code %d = %d out of range", idx, i, c)
				}
			}
			if got := d.Encode(codes); got != idx {
				t.Fatalf("Encode(Decode(%d)) = %d", idx, got)
			}
		}
	})
}

func FuzzParseDomain(f *testing.F) {
	f.Add([]byte(fullDomain))
	f.Add([]byte(`{"a": 2, "b": 3}`))
	f.Add([]byte(`{"attributes": [{"name": "a", "type": "numeric", "edges": [0, 1]}]}`))
	f.Add([]byte(`{"attributes": {}}`))
	f.Add([]byte("{\"attributes\": [\n  {\"name\": \"age\", \"type\": \"integer\", \"min\": 0, \"max\": 9, \"bin\": 1}\n]}"))
	f.Add([]byte("{\"attributes\": [{\"name\": \"a\", \"type\": \"integer\", \"min\": \"0\", \"max\": 9}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDomain(data)
		if err != nil {
			// Errors are ours, not the JSON package's internals, and a
			// position is inside the file.
			if strings.Contains(err.Error(), "json: ") || strings.Contains(err.Error(), "Go struct") {
				t.Fatalf("raw JSON package error: %v", err)
			}
			var pe *PositionError
			if errors.As(err, &pe) && (pe.Line < 1 || pe.Col < 1 || pe.Line > bytes.Count(data, []byte("\n"))+1) {
				t.Fatalf("position %d:%d outside the input: %v", pe.Line, pe.Col, err)
			}
			return
		}
		// A parsed domain is consistent and re-parses to the same description.
		size := 1.0
		for _, a := range d.Attrs() {
			if a.Size() <= 0 {
				t.Fatalf("attribute %q has size %d", a.Name, a.Size())
			}
			size *= float64(a.Size())
			_ = a.Describe()
			_ = a.Label(a.Size() - 1)
		}
		b, err := d.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		d2, err := ParseDomain(b)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		if d2.SizeBig().Cmp(d.SizeBig()) != 0 || d2.Len() != d.Len() {
			t.Fatalf("round trip changed the domain: %s vs %s", d2.SizeBig(), d.SizeBig())
		}
	})
}
