//go:build evidence

package solvers

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// SYNTH_EXPERIMENT sets experimental fields of the project solver in an
// evidence build (go build -tags evidence ./cmd/synth), as comma-separated
// key=value pairs, e.g. SYNTH_EXPERIMENT=selshare=0.1,support=-1. The keys
// are those of experimentKeys; an unknown key or a bad value stops the
// program, so that a typo never runs the default rules under a variant's name.
func init() {
	spec := os.Getenv("SYNTH_EXPERIMENT")
	if spec == "" {
		return
	}
	var sets []func(*Project)
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(kv, "=")
		set, known := experimentKeys[k]
		if !ok || !known {
			fmt.Fprintf(os.Stderr, "SYNTH_EXPERIMENT: bad pair %q (keys: %s)\n", kv, experimentKeyList())
			os.Exit(2)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "SYNTH_EXPERIMENT: %s: %v\n", k, err)
			os.Exit(2)
		}
		sets = append(sets, func(p *Project) { set(p, f) })
	}
	fmt.Fprintf(os.Stderr, "SYNTH_EXPERIMENT: %s (evidence build: not the documented rules)\n", spec)
	experimentHook = func(p *Project) {
		for _, s := range sets {
			s(p)
		}
	}
}

var experimentKeys = map[string]func(*Project, float64){
	"rounds":    func(p *Project, f float64) { p.Rounds = int(f) },
	"riters":    func(p *Project, f float64) { p.RoundIters = int(f) },
	"selshare":  func(p *Project, f float64) { p.selShare = f },
	"adaptive":  func(p *Project, f float64) { p.adaptive = f != 0 },
	"order":     func(p *Project, f float64) { p.Orders = []int{int(f)} },
	"rpa":       func(p *Project, f float64) { p.perAttr = int(f) },
	"anneal":    func(p *Project, f float64) { p.anneal = f },
	"pairs":     func(p *Project, f float64) { p.pairsMode = f != 0 },
	"support":   func(p *Project, f float64) { p.supportK = f },
	"alloc":     func(p *Project, f float64) { p.oneAlloc = f },
	"onescale":  func(p *Project, f float64) { p.oneScale = f },
	"coarse":    func(p *Project, f float64) { p.coarse = f },
	"smooth":    func(p *Project, f float64) { p.smoothMax = int(f) },
	"capmib":    func(p *Project, f float64) { p.capBytes = uint64(f * (1 << 20)) },
	"threshold": func(p *Project, f float64) { p.Threshold = f },
}

func experimentKeyList() string {
	return strings.Join(slices.Sorted(maps.Keys(experimentKeys)), ", ")
}
