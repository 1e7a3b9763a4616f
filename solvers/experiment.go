package solvers

// experimentHook, when not nil, sets the experimental fields of every new
// Project. Only the evidence build sets it (experiment_evidence.go, build tag
// evidence: SYNTH_EXPERIMENT), so that a variant of the rules can run through
// the whole release and `synth bench` on the accuracy suite; in every other
// build it is nil and the rules are the documented ones.
var experimentHook func(*Project)

func newProject(s Setting) Solver {
	p := &Project{Setting: s}
	if experimentHook != nil {
		experimentHook(p)
	}
	return p
}
