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

// SYNTH_EXPERIMENT sets a variant of the project solver's rules in an
// evidence build (go build -tags evidence ./cmd/synth), as comma-separated
// key=value pairs, e.g. SYNTH_EXPERIMENT=selshare=0.1,support=-1: the keys
// of variantKeys build the one variant, those of settingKeys set the
// exported settings of every new Project. An unknown key or a bad value
// stops the program, so that a typo never runs the default rules under a
// variant's name. SYNTH_ROUNDS_LOG=1 writes the factored adaptive rounds'
// log (one line per selection) to stderr; SYNTH_ROUNDS_LOG=FILE appends it
// to FILE (the releases that synth bench runs keep their stderr).
func init() {
	if lg := os.Getenv("SYNTH_ROUNDS_LOG"); lg != "" {
		// The adaptive rounds' log (one line per selection) on stderr, or
		// appended to the file it names (a release under synth bench).
		w := os.Stderr
		if lg != "1" {
			f, err := os.OpenFile(lg, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				fmt.Fprintf(os.Stderr, "SYNTH_ROUNDS_LOG: %v\n", err)
				os.Exit(2)
			}
			w = f
		}
		debugRound = func(m string) { fmt.Fprintln(w, m) }
	}
	spec := os.Getenv("SYNTH_EXPERIMENT")
	if spec == "" {
		return
	}
	v := &experiment{}
	var sets []func(*Project)
	for _, kv := range strings.Split(spec, ",") {
		k, val, ok := strings.Cut(kv, "=")
		setV, isV := variantKeys[k]
		setP, isP := settingKeys[k]
		if !ok || !isV && !isP {
			fmt.Fprintf(os.Stderr, "SYNTH_EXPERIMENT: bad pair %q (keys: %s)\n", kv, experimentKeyList())
			os.Exit(2)
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "SYNTH_EXPERIMENT: %s: %v\n", k, err)
			os.Exit(2)
		}
		if isV {
			setV(v, f)
		} else {
			sets = append(sets, func(p *Project) { setP(p, f) })
		}
	}
	fmt.Fprintf(os.Stderr, "SYNTH_EXPERIMENT: %s (evidence build: not the documented rules)\n", spec)
	variant = v
	if len(sets) > 0 {
		projectSettings = func(p *Project) {
			for _, s := range sets {
				s(p)
			}
		}
	}
}

// variantKeys set the overrides of the rules (experiment).
var variantKeys = map[string]func(*experiment, float64){
	"selshare": func(v *experiment, f float64) { v.selShare = f },
	"adaptive": func(v *experiment, f float64) { v.adaptive = f != 0 },
	"rpa":      func(v *experiment, f float64) { v.perAttr = int(f) },
	"anneal":   func(v *experiment, f float64) { v.anneal = f },
	"pairs":    func(v *experiment, f float64) { v.pairsMode = f != 0 },
	"support":  func(v *experiment, f float64) { v.supportK = f },
	"alloc":    func(v *experiment, f float64) { v.oneAlloc = f },
	"onescale": func(v *experiment, f float64) { v.oneScale = f },
	"coarse":   func(v *experiment, f float64) { v.coarse = f },
	"smooth":   func(v *experiment, f float64) { v.smoothMax = int(f) },
	"capmib":   func(v *experiment, f float64) { v.capBytes = uint64(f * (1 << 20)) },
	"widen":    func(v *experiment, f float64) { v.widenMoves = f },
	"wrun":     func(v *experiment, f float64) { v.widenRun = f },
	"cshare":   func(v *experiment, f float64) { v.stageShare = f },
	"topthr":   func(v *experiment, f float64) { v.stageTop = f },
	"settle":   func(v *experiment, f float64) { v.settle = int(f) },
}

// settingKeys set Project's exported settings.
var settingKeys = map[string]func(*Project, float64){
	"rounds": func(p *Project, f float64) { p.Rounds = int(f) },
	"riters": func(p *Project, f float64) { p.RoundIters = int(f) },
	"order": func(p *Project, f float64) {
		// One order, or several as digits (123: orders 1, 2 and 3).
		p.Orders = nil
		for _, c := range strconv.Itoa(int(f)) {
			p.Orders = append(p.Orders, int(c-'0'))
		}
	},
	"threshold": func(p *Project, f float64) { p.Threshold = f },
}

func experimentKeyList() string {
	keys := slices.AppendSeq(slices.Collect(maps.Keys(variantKeys)), maps.Keys(settingKeys))
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
