package privacy

import (
	"errors"
	"io"
	"math"
	"testing"
)

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("entropy unavailable") }

func TestNewSecure(t *testing.T) {
	a, err := NewSecure()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSecure()
	if err != nil {
		t.Fatal(err)
	}
	if !a.Secure() || a.Describe() == SeededWarning {
		t.Errorf("NewSecure: Secure() = %v, Describe() = %q", a.Secure(), a.Describe())
	}
	if a.Uint64() == b.Uint64() && a.Uint64() == b.Uint64() {
		t.Error("two secure streams agree on 128 bits")
	}
}

func TestNewSecureFailsLoudly(t *testing.T) {
	defer func(r io.Reader) { entropy = r }(entropy)
	for _, r := range []io.Reader{failingReader{}, io.LimitReader(failingReader{}, 0)} {
		entropy = r
		got, err := NewSecure()
		if err == nil || got != nil {
			t.Errorf("NewSecure with a failing source = %v, %v; want nil and an error", got, err)
		}
	}
}

func TestSeeded(t *testing.T) {
	a, b, c := NewSeeded(7), NewSeeded(7), NewSeeded(8)
	if a.Secure() || a.Describe() != SeededWarning {
		t.Errorf("NewSeeded: Secure() = %v, Describe() = %q", a.Secure(), a.Describe())
	}
	same, diff := true, false
	for range 100 {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		same = same && x == y
		diff = diff || x != z
	}
	if !same || !diff {
		t.Errorf("seeded streams: same seed equal = %v, different seeds differ = %v", same, diff)
	}
}

func TestSplit(t *testing.T) {
	r1, r2 := NewSeeded(3), NewSeeded(3)
	c1, c2 := r1.SplitN(2), r2.SplitN(2)
	if c1[0].Secure() {
		t.Error("a stream split from a seeded one claims to be secure")
	}
	for range 10 {
		a, b := c1[0].Uint64(), c2[0].Uint64()
		if a != b {
			t.Fatal("splits of equal seeded streams differ")
		}
		if a == c1[1].Uint64() {
			t.Fatal("two splits of one stream agree")
		}
	}
	// Splitting advances the parent: the parent's next output is not the
	// child's first.
	p := NewSeeded(3)
	ch := p.Split()
	if p.Uint64() == ch.Uint64() {
		t.Error("parent and child streams agree after Split")
	}
	s, err := NewSecure()
	if err != nil {
		t.Fatal(err)
	}
	if !s.Split().Secure() {
		t.Error("a stream split from a secure one is not secure")
	}
}

// TestUint64N checks Uint64N's range and uniformity: χ² over n cells with
// 200 expected per cell; threshold the 1 − 1e-6 quantile.
func TestUint64N(t *testing.T) {
	r := testRand(t, 11)
	for _, n := range []uint64{1, 2, 3, 10, 1000, 1<<63 + 12345} {
		cells := int(min(n, 1000))
		counts := make([]int, cells)
		draws := 200 * cells
		for range draws {
			v := r.Uint64N(n)
			if v >= n {
				t.Fatalf("Uint64N(%d) = %d", n, v)
			}
			counts[int(v/((n+uint64(cells)-1)/uint64(cells)))%cells]++
		}
		if n > 1000 {
			continue // bucketed: ranges are not all equal, only the bound is checked
		}
		probs := make([]float64, cells)
		for i := range probs {
			probs[i] = 1 / float64(cells)
		}
		stat, df := chiSquare(counts, probs, draws, 5)
		if df > 0 && stat > chi2Threshold(df, falseFailure) {
			t.Errorf("Uint64N(%d): χ² = %.1f with %d df > %.1f", n, stat, df, chi2Threshold(df, falseFailure))
		}
	}
}

func TestFloat64Range(t *testing.T) {
	r := NewSeeded(1)
	for range 100000 {
		if f := r.Float64(); f < 0 || f >= 1 {
			t.Fatalf("Float64() = %v", f)
		}
		if f := r.openFloat64(); f <= 0 || f > 1 || math.IsInf(math.Log(f), 0) {
			t.Fatalf("openFloat64() = %v", f)
		}
	}
}
