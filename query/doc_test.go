package query

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsynth/synth/universe"
)

// TestWorkloadDoc checks docs/WORKLOAD.md: its "json domain" block parses,
// every "json workload" block builds against it, and every "json invalid"
// block fails with the error of the "text" block after it.
func TestWorkloadDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "WORKLOAD.md"))
	if err != nil {
		t.Fatal(err)
	}
	type fence struct {
		info, body string
		line       int
	}
	var fs []fence
	var cur *fence
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &fence{info: strings.TrimPrefix(l, "```"), line: i + 1}
		case cur != nil && l == "```":
			fs = append(fs, *cur)
			cur = nil
		case cur != nil:
			cur.body += l + "\n"
		}
	}
	var dom *universe.Domain
	valid, invalid := 0, 0
	for i, f := range fs {
		switch f.info {
		case "json domain":
			if dom, err = universe.ParseDomain([]byte(f.body)); err != nil {
				t.Fatalf("WORKLOAD.md:%d: the domain does not parse: %v", f.line, err)
			}
		case "json workload":
			if dom == nil {
				t.Fatalf("WORKLOAD.md:%d: a workload before the domain", f.line)
			}
			if _, err := Parse([]byte(f.body), dom); err != nil {
				t.Errorf("WORKLOAD.md:%d: example does not build: %v", f.line, err)
			}
			valid++
		case "json invalid":
			if i+1 >= len(fs) || fs[i+1].info != "text" {
				t.Fatalf("WORKLOAD.md:%d: an invalid example needs a text block with its error after it", f.line)
			}
			_, err := Parse([]byte(f.body), dom)
			var we *WorkloadError
			if !errors.As(err, &we) {
				t.Errorf("WORKLOAD.md:%d: invalid example: error %v, want a *WorkloadError", f.line, err)
				continue
			}
			if got, want := err.Error(), strings.TrimSuffix(fs[i+1].body, "\n"); got != want {
				t.Errorf("WORKLOAD.md:%d: error\n%s\nwant (WORKLOAD.md:%d)\n%s", f.line, got, fs[i+1].line, want)
			}
			invalid++
		}
	}
	if valid < 2 || invalid < 2 {
		t.Errorf("WORKLOAD.md has %d valid and %d invalid examples; want at least 2 and 2", valid, invalid)
	}
}
