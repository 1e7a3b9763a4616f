package solvers

import "testing"

// setVariant sets the evidence harness's override of the rules (variant) for
// the rest of the test and restores the old value when the test ends. variant
// is package state: a test that sets it must not call t.Parallel.
func setVariant(t testing.TB, v *experiment) {
	t.Helper()
	old := variant
	variant = v
	t.Cleanup(func() { variant = old })
}
