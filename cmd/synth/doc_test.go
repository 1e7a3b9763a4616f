package main

// The shell sessions of the docs are run on the built binary and their
// output compared, so that the docs show real commands and real output.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// docBlock is a fenced block of a Markdown file.
type docBlock struct {
	info string
	body []string
	line int
}

func docBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out []docBlock
		cur *docBlock
	)
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &docBlock{info: strings.TrimPrefix(l, "```"), line: i + 1}
		case cur != nil && l == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body = append(cur.body, l)
		}
	}
	return out
}

// splitArgs splits a command line on spaces; single quotes group.
func splitArgs(s string) []string {
	var (
		args []string
		cur  strings.Builder
		in   bool
		any  bool
	)
	for _, r := range s {
		switch {
		case r == '\'':
			in, any = !in, true
		case r == ' ' && !in:
			if any {
				args = append(args, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		args = append(args, cur.String())
	}
	return args
}

// matchLines reports whether got matches want, where a want line "…"
// stands for any lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "…" {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && got[0] == want[0] && matchLines(want[1:], got[1:])
}

// runDocSessions writes the doc's "file=NAME" blocks into a folder and
// runs its "$ synth …" sessions there.
func runDocSessions(t *testing.T, doc string) {
	blocks := docBlocks(t, doc)
	dir := t.TempDir()
	sessions := 0
	for _, b := range blocks {
		if _, name, ok := strings.Cut(b.info, "file="); ok {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(b.body, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, b := range blocks {
		if b.info != "" || len(b.body) == 0 || !strings.HasPrefix(b.body[0], "$ synth ") {
			continue
		}
		sessions++
		var last result
		for i := 0; i < len(b.body); {
			cmd := strings.TrimPrefix(b.body[i], "$ ")
			j := i + 1
			for j < len(b.body) && !strings.HasPrefix(b.body[j], "$ ") {
				j++
			}
			want := b.body[i+1 : j]
			if cmd == "echo $?" {
				if len(want) != 1 || want[0] != strconv.Itoa(last.code) {
					t.Errorf("%s:%d: exit code %d, the doc says %v", doc, b.line+i+1, last.code, want)
				}
			} else {
				args := splitArgs(cmd)
				last = runBinary(t, dir, args[1:]...)
				got := strings.Split(strings.TrimSuffix(last.stdout+last.stderr, "\n"), "\n")
				if !matchLines(want, got) {
					t.Errorf("%s:%d: %s\noutput:\n%s\nthe doc says:\n%s", doc, b.line+i+1, cmd, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			i = j
		}
	}
	if sessions == 0 {
		t.Errorf("%s: no shell sessions", doc)
	}
	t.Logf("%s: %d sessions run", doc, sessions)
}

func TestDomainDocSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	runDocSessions(t, filepath.Join(pkgDir, "..", "..", "docs", "DOMAIN.md"))
}
