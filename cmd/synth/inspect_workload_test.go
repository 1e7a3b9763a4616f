package main

import (
	"strings"
	"testing"
)

func TestInspectWorkload(t *testing.T) {
	_, domain := extract(t, "adult-reduced")
	code, out, errs := run(t, "inspect", "--domain", domain, "--marginals", "3")
	if code != ExitOK {
		t.Fatalf("inspect --marginals 3: exit %d, stderr %q", code, errs)
	}
	for _, w := range []string{"queries (m): 14,955\n", "marginal sets: 35 ", "education, occupation, age              2400"} {
		if !strings.Contains(out, w) {
			t.Errorf("inspect --marginals 3 output does not contain %q:\n%s", w, out)
		}
	}
	code, _, errs = run(t, "inspect", "--domain", domain, "--marginals", "8")
	if code != ExitData || !strings.Contains(errs, "k") {
		t.Errorf("inspect --marginals 8 on 7 attributes: exit %d, stderr %q; want %d", code, errs, ExitData)
	}
	code, _, _ = run(t, "inspect", "--domain", domain, "--marginals", "2", "--workload", "w.json")
	if code != ExitUsage {
		t.Errorf("inspect with --workload and --marginals: exit %d, want %d", code, ExitUsage)
	}
}
