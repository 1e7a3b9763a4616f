package universe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fence is a fenced code block of a Markdown file.
type fence struct {
	info, body string
	line       int
}

func fences(t *testing.T, path string) []fence {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out []fence
		cur *fence
		buf strings.Builder
	)
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &fence{info: strings.TrimPrefix(l, "```"), line: i + 1}
			buf.Reset()
		case cur != nil && l == "```":
			cur.body = buf.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			buf.WriteString(l)
			buf.WriteByte('\n')
		}
	}
	return out
}

// TestDomainDoc parses every example of docs/DOMAIN.md: "json" blocks must
// parse; each "json invalid" block must fail with the error of the "text"
// block after it (as LoadDomain reports it for a file named domain.json).
func TestDomainDoc(t *testing.T) {
	fs := fences(t, filepath.Join("..", "docs", "DOMAIN.md"))
	valid, invalid := 0, 0
	for i, f := range fs {
		info := f.info
		if strings.HasPrefix(info, "json file=") {
			info = "json"
		}
		switch info {
		case "json":
			if _, err := ParseDomain([]byte(f.body)); err != nil {
				t.Errorf("DOMAIN.md:%d: example does not parse: %v", f.line, err)
			}
			valid++
		case "json invalid":
			if i+1 >= len(fs) || fs[i+1].info != "text" {
				t.Errorf("DOMAIN.md:%d: an invalid example needs a text block with its error after it", f.line)
				continue
			}
			_, err := ParseDomain([]byte(f.body))
			if err == nil {
				t.Errorf("DOMAIN.md:%d: invalid example parses", f.line)
				continue
			}
			got := (&DomainError{File: "domain.json", Err: err}).Error()
			if want := strings.TrimSuffix(fs[i+1].body, "\n"); got != want {
				t.Errorf("DOMAIN.md:%d: error\n%s\nwant (DOMAIN.md:%d)\n%s", f.line, got, fs[i+1].line, want)
			}
			invalid++
		}
	}
	if valid < 6 || invalid < 5 {
		t.Errorf("DOMAIN.md has %d valid and %d invalid examples; want at least 6 and 5", valid, invalid)
	}
}
