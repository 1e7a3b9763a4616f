package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/dpsynth/synth/internal/par"
)

// TestTiledStep: the tiles, run in reverse order on two goroutines, give
// Step.Apply's θ2 exactly, its e to the exponential's last bits and its
// log-partition function to rounding, with the shift near (one pass) and
// far off (redone); in place as well.
func TestTiledStep(t *testing.T) {
	forPaths(t, func(t *testing.T) {
		team := par.NewTeam(2)
		defer team.Close()
		st := NewStep(team)
		ts := NewTiledStep(st)
		for _, k := range []int{1, 9, 1023, 3*chunk + 5, 5000} {
			for _, size := range []int{1, 7, 100, chunk + 3, 5000} {
				if size > k {
					continue
				}
				r := rand.New(rand.NewPCG(uint64(k), uint64(size)))
				theta, grad := make([]float64, k), make([]float64, k)
				for i := range theta {
					theta[i], grad[i] = 3*r.NormFloat64(), r.NormFloat64()
				}
				lz0 := NewSoftmax(team).Apply(theta, make([]float64, k))
				for _, shift := range []float64{lz0, lz0 + 1000} {
					for _, inPlace := range []bool{false, true} {
						keep := !inPlace || size%2 == 0 // the exponentials in e, or in the tiles
						name := fmt.Sprintf("k=%d/tile=%d/shift=%g/inplace=%v/keep=%v", k, size, shift, inPlace, keep)
						want2, wantE := make([]float64, k), make([]float64, k)
						wantZ, wantz := st.Apply(want2, theta, grad, 0.7, shift, wantE)
						th := append([]float64(nil), theta...)
						theta2 := make([]float64, k)
						if inPlace {
							theta2 = th
						}
						e := make([]float64, k)
						tiles := (k + size - 1) / size
						ts.Begin(theta2, th, 0.7, shift, e, keep, tiles)
						var wg sync.WaitGroup
						for w := range 2 {
							wg.Add(1)
							go func() {
								defer wg.Done()
								for tl := tiles - 1 - w; tl >= 0; tl -= 2 {
									lo := tl * size
									g := append([]float64(nil), grad[lo:min(lo+size, k)]...)
									out := ts.Tile(tl, lo, g)
									if !keep {
										copy(e[lo:], out) // where the caller answers them
									} else if &out[0] != &e[lo] {
										panic("Tile did not return its tile of e")
									}
								}
							}()
						}
						wg.Wait()
						lz, z, redone := ts.End()
						if redone != (shift != lz0) {
							t.Fatalf("%s: redone = %v", name, redone)
						}
						for i := range k {
							if theta2[i] != want2[i] {
								t.Fatalf("%s: theta2[%d] = %v, want %v", name, i, theta2[i], want2[i])
							}
							if math.Abs(e[i]-wantE[i]) > 1e-15*wantE[i] {
								t.Fatalf("%s: e[%d] = %v, want %v", name, i, e[i], wantE[i])
							}
						}
						if math.Abs(lz-wantZ) > 1e-13*(1+math.Abs(wantZ)) || math.Abs(z-wantz) > 1e-13*wantz {
							t.Fatalf("%s: logZ, z = %v, %v, want %v, %v", name, lz, z, wantZ, wantz)
						}
					}
				}
			}
		}
	})
}

// TestTiledStepPanics: a tile that did not run, and a θ2 that is NaN or all
// −Inf.
func TestTiledStepPanics(t *testing.T) {
	team := par.NewTeam(1)
	defer team.Close()
	ts := NewTiledStep(NewStep(team))
	inf := math.Inf(1)
	for _, tt := range []struct {
		name  string
		theta []float64
		skip  bool
	}{
		{"a tile not run", []float64{0, 1, 2, 3}, true},
		{"NaN", []float64{0, math.NaN(), 1, 2}, false},
		{"+Inf", []float64{0, inf, 1, 2}, false},
		{"all -Inf", []float64{-inf, -inf, -inf, -inf}, false},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("TiledStep with %s did not panic", tt.name)
				}
			}()
			g := make([]float64, 4)
			ts.Begin(make([]float64, 4), tt.theta, 1, 0, make([]float64, 4), true, 2)
			ts.Tile(0, 0, g[:2])
			if !tt.skip {
				ts.Tile(1, 2, g[2:])
			}
			ts.End()
		}()
	}
}
