//go:build probe

package release

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpsynth/synth/solvers"
)

func TestPeakProbe(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"a":16,"b":16,"c":16,"d":16,"e":16}`)
	dom := filepath.Join(dir, "d.json")
	os.WriteFile(dom, []byte(b.String()), 0o644)
	r := rand.New(rand.NewPCG(1, 2))
	var c strings.Builder
	c.WriteString("a,b,c,d,e\n")
	for range 20000 {
		fmt.Fprintf(&c, "%d,%d,%d,%d,%d\n", r.IntN(16), r.IntN(16), r.IntN(16), r.IntN(16), r.IntN(16))
	}
	data := filepath.Join(dir, "x.csv")
	os.WriteFile(data, []byte(c.String()), 0o644)
	for _, s := range []string{"project", "dpfw", "smd", "dpam", "mwem"} {
		for _, k := range []int{2, 3} {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			base := ms.HeapAlloc
			var peak atomic.Uint64
			stop := make(chan bool)
			go func() {
				var m runtime.MemStats
				for {
					select {
					case <-stop:
						return
					default:
					}
					runtime.ReadMemStats(&m)
					if m.HeapAlloc > peak.Load() {
						peak.Store(m.HeapAlloc)
					}
					time.Sleep(2 * time.Millisecond)
				}
			}()
			seed := uint64(1)
			_, err := Run(context.Background(), &Config{Neighbours: solvers.ReplaceOne, Data: data, Domain: dom, Marginals: k, Epsilon: 1, Delta: 1e-9, Solver: s,
				Out: filepath.Join(dir, fmt.Sprintf("o-%s-%d", s, k)), Seed: &seed, Sampling: Balanced}, nil)
			close(stop)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s k=%d: peak %.1f × 8k", s, k, float64(peak.Load()-base)/(8*1048576))
		}
	}
}
