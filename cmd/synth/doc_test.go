package main

// The shell sessions of the docs are run on the built binary and their
// output compared, so that the docs show real commands and real output.

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
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

// writeDocFiles writes the "file=NAME" blocks of a doc into dir.
func writeDocFiles(t *testing.T, doc, dir string) {
	t.Helper()
	for _, b := range docBlocks(t, doc) {
		if _, name, ok := strings.Cut(b.info, "file="); ok {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(b.body, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// runDocSessions runs the "$ synth …" sessions of a doc in dir (which
// setup fills, as well as the doc's own "file=NAME" blocks) and compares
// their output with the doc's.
func runDocSessions(t *testing.T, doc, dir string) {
	blocks := docBlocks(t, doc)
	writeDocFiles(t, doc, dir)
	sessions := 0
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

var domainDoc = filepath.Join(pkgDir, "..", "..", "docs", "DOMAIN.md")

func TestDomainDocSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	runDocSessions(t, domainDoc, t.TempDir())
}

// TestReadmeInputs runs the README's inputs session: people.csv of
// DOMAIN.md split into a gzip part and a plain part, with a _SUCCESS marker.
func TestReadmeInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	dir := t.TempDir()
	writeDocFiles(t, domainDoc, dir)
	b, err := os.ReadFile(filepath.Join(dir, "people.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	export := filepath.Join(dir, "export")
	os.Mkdir(export, 0o755)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Join(lines[:4], "")))
	zw.Close()
	for name, data := range map[string][]byte{
		"part-00000.csv.gz": gz.Bytes(),
		"part-00001.csv":    []byte(lines[0] + strings.Join(lines[4:], "")),
		"_SUCCESS":          nil,
	} {
		if err := os.WriteFile(filepath.Join(export, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runDocSessions(t, filepath.Join(pkgDir, "..", "..", "README.md"), dir)
}

// TestMarkdownFences: every fenced block of the repository's Markdown files
// is closed (as a CommonMark renderer sees them: a fence closes with a line
// of at least as many backticks and nothing else), and no section heading
// ("## …") falls inside a block, which is what an unclosed fence does to
// the rest of a page.
func TestMarkdownFences(t *testing.T) {
	root := filepath.Join("..", "..")
	var files []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 5 {
		t.Fatalf("found only %d Markdown files under %s", len(files), root)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		open, fence := 0, ""
		for i, l := range strings.Split(string(b), "\n") {
			trimmed := strings.TrimLeft(l, " ")
			switch {
			case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
				n := len(trimmed) - len(strings.TrimLeft(trimmed, trimmed[:1]))
				fence, open = trimmed[:n], i+1
			case fence != "" && strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "":
				fence = ""
			case fence != "" && strings.HasPrefix(l, "## "):
				t.Errorf("%s:%d: heading %q inside the code block opened at line %d", f, i+1, l, open)
			}
		}
		if fence != "" {
			t.Errorf("%s:%d: code block never closed", f, open)
		}
	}
}
