package vec

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/dpsynth/synth/internal/par"
)

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / want
}

func TestExpAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	worst, at := 0.0, 0.0
	check := func(x float64) {
		if e := relErr(Exp(x), expRef(x)); e > worst {
			worst, at = e, x
		}
	}
	for range 1_000_000 {
		check(-708 + r.Float64()*(709.7+708))
		check(-40 + r.Float64()*80)
	}
	for _, x := range []float64{0, 1, -1, 0.5, math.Ln2 / 2, -math.Ln2 / 2, 700, -700, 709.7, -708.3, 1e-300, -1e-300} {
		check(x)
	}
	if worst > 1e-15 {
		t.Errorf("Exp relative error %.3g at x = %v, want <= 1e-15", worst, at)
	}
}

func TestExpSpecial(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{0, 1}, {-800, 0}, {math.Inf(-1), 0}, {800, math.Inf(1)}, {math.Inf(1), math.Inf(1)},
	}
	for _, tt := range tests {
		if got := Exp(tt.in); got != tt.want {
			t.Errorf("Exp(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if got := Exp(math.NaN()); !math.IsNaN(got) {
		t.Errorf("Exp(NaN) = %v, want NaN", got)
	}
}

var sink float64

func BenchmarkExp(b *testing.B) {
	x := make([]float64, 4096)
	for i := range x {
		x[i] = -float64(i) / 100
	}
	b.Run("vec.Exp", func(b *testing.B) {
		for b.Loop() {
			s := 0.0
			for _, v := range x {
				s += Exp(v)
			}
			sink = s
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/exp")
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			s := 0.0
			for _, v := range x {
				s += math.Exp(v)
			}
			sink = s
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/exp")
	})
}

func TestExpShiftSum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]float64, 10001)
	for i := range src {
		src[i] = -50 + 100*r.Float64()
	}
	src[7] = -1000
	src[8] = 1e-300
	dst := make([]float64, len(src))
	sum := ExpShiftSum(dst, src, 3)
	want := 0.0
	for i, x := range src {
		w := math.Exp(x - 3)
		want += w
		if e := relErr(dst[i], w); e > 1e-15 {
			t.Fatalf("ExpShiftSum[%d] (x = %v) relative error %.3g", i, x, e)
		}
	}
	if e := relErr(sum, want); e > 1e-13 {
		t.Errorf("sum relative error %.3g", e)
	}
}

func BenchmarkExpShiftSum(b *testing.B) {
	x := make([]float64, 4096)
	for i := range x {
		x[i] = -float64(i) / 100
	}
	dst := make([]float64, len(x))
	for b.Loop() {
		sink = ExpShiftSum(dst, x, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/exp")
}

func TestSoftmax(t *testing.T) {
	team := par.NewTeam(2)
	defer team.Close()
	sm := NewSoftmax(team)
	for _, n := range []int{1, 5, 100000} {
		theta := make([]float64, n)
		r := rand.New(rand.NewPCG(uint64(n), 9))
		for i := range theta {
			theta[i] = 300 * r.NormFloat64()
		}
		out := make([]float64, n)
		lz := sm.Apply(theta, out)
		mx := math.Inf(-1)
		for _, v := range theta {
			mx = max(mx, v)
		}
		z := 0.0
		for _, v := range theta {
			z += math.Exp(v - mx)
		}
		if e := math.Abs(lz - (mx + math.Log(z))); e > 1e-12*math.Abs(lz) {
			t.Errorf("n = %d: log-partition %v, want %v", n, lz, mx+math.Log(z))
		}
		sum := 0.0
		for i, v := range out {
			sum += v
			if w := math.Exp(theta[i]-mx) / z; math.Abs(v-w) > 1e-15+1e-13*w {
				t.Fatalf("n = %d: out[%d] = %v, want %v", n, i, v, w)
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("n = %d: sum = %v, want 1", n, sum)
		}
	}
}

func TestSoftmaxAllocs(t *testing.T) {
	team := par.NewTeam(2)
	defer team.Close()
	sm := NewSoftmax(team)
	theta := make([]float64, 1<<17)
	out := make([]float64, len(theta))
	if a := testing.AllocsPerRun(20, func() { sm.Apply(theta, out) }); a != 0 {
		t.Errorf("Softmax.Apply allocates %v times per call, want 0", a)
	}
}

// BenchmarkSoftmax times Softmax.Apply against plain reads (see
// readRatio).
func BenchmarkSoftmax(b *testing.B) {
	for _, k := range []int{336000, 10_000_000} {
		team := par.NewTeam(0)
		sm := NewSoftmax(team)
		theta := make([]float64, k)
		for i := range theta {
			theta[i] = -float64(i%1000) / 100
		}
		out := make([]float64, k)
		sm.Apply(theta, out) // per-chunk statistics allocated once
		b.Run(strconv.Itoa(k), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuNanos()
			for b.Loop() {
				sm.Apply(theta, out)
			}
			readRatio(b, k, theta, cpu0)
		})
		team.Close()
	}
}
