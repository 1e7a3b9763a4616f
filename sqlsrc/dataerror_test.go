package sqlsrc

import (
	"strings"
	"testing"
)

func TestDataErrorHidesExample(t *testing.T) {
	e := &DataError{Column: "wage", Count: 3, Example: "98765", Domain: "integer 0..5000"}
	if got := e.Error(); strings.Contains(got, "98765") || !strings.Contains(got, "--show-values") {
		t.Errorf("Error() = %s, want no value and the --show-values hint", got)
	}
	e.Show = true
	if got := e.Error(); !strings.Contains(got, `e.g. "98765"`) {
		t.Errorf("Error() with Show = %s, want the example", got)
	}
	e = &DataError{Column: "wage", Count: 1, Example: NullMarker, Domain: "integer 0..5000"}
	if got := e.Error(); !strings.Contains(got, "a SQL NULL") {
		t.Errorf("Error() of a NULL = %s, want it named (a NULL is no private value)", got)
	}
}
