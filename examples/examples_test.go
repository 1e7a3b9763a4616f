package examples

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the output blocks of the READMEs with what the commands print")

// binDir holds synth and the example programs, built once by TestMain.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // the test skips itself
	}
	dir, err := os.MkdirTemp("", "synth-examples-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := statSources(".."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pkgs := []string{"./cmd/synth"}
	for _, name := range exampleNames() {
		pkgs = append(pkgs, "./examples/"+name)
	}
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build %v: %v\n%s", pkgs, err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// statSources stats every source and data file of the module. The test
// binary does not link the code the examples run (it builds it), so these
// stats are what tells go test's cache that a change of that code must run
// the test again.
func statSources(root string) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		_, err = os.Stat(path)
		return err
	})
}

// exampleNames lists the folders that hold an example (a README.md).
func exampleNames() []string {
	ents, err := os.ReadDir(".")
	if err != nil {
		panic(err)
	}
	var names []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(e.Name(), "README.md")); e.IsDir() && err == nil {
			names = append(names, e.Name())
		}
	}
	return names
}

// block is a fenced code block of a README.
type block struct {
	lang       string
	body       string
	start, end int // byte offsets of the body in the README
}

var fence = regexp.MustCompile("(?m)^```([a-z]*)\n((?s:.*?))^```\n")

func blocks(readme string) []block {
	var bs []block
	for _, m := range fence.FindAllStringSubmatchIndex(readme, -1) {
		bs = append(bs, block{lang: readme[m[2]:m[3]], body: readme[m[4]:m[5]], start: m[4], end: m[5]})
	}
	return bs
}

// preamble stands in for the go command: "go run ./cmd/synth" and
// "go run ./examples/NAME" run the binaries TestMain built.
const preamble = `set -euo pipefail
go() {
  if [ "$1" = run ]; then
    case "$2" in
      ./cmd/synth) shift 2; "$BIN/synth" "$@"; return ;;
      ./examples/*) local name=${2#./examples/}; shift 2; "$BIN/$name" "$@"; return ;;
    esac
  fi
  echo "examples test: unexpected go command: go $*" >&2
  return 1
}
`

const marker = "@@example-block@@"

// TestExamples runs the sh blocks of every example's README, in order, as
// one bash script from a scratch folder that sees the repository's
// datasets/, examples/ and ingest/ (outputs go to out/ there). Each sh
// block followed by a text block must print that text, numbers aside
// (they depend on the solvers' tuning and on timing): the comparison masks
// every number and collapses runs of spaces.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every example (tens of seconds); skipped with -short")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	names := exampleNames()
	if len(names) < 3 {
		t.Fatalf("%d examples, want at least 3", len(names))
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(name, "main.go")); err != nil {
				t.Errorf("%s has no main.go: %v", name, err)
			}
			path := filepath.Join(name, "README.md")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			readme := string(b)
			bs := blocks(readme)
			// A file shown in the README must be the file in the folder.
			for _, bl := range bs {
				if bl.lang == "json" && !sameAsAFile(t, name, bl.body) {
					t.Errorf("%s shows a JSON file that is not in %s/ as shown:\n%s", path, name, bl.body)
				}
			}
			var script strings.Builder
			script.WriteString(preamble)
			var shown []int // index of the sh block of each marker
			for i, bl := range bs {
				if bl.lang != "sh" {
					continue
				}
				fmt.Fprintf(&script, "echo %s\n%s", marker, bl.body)
				shown = append(shown, i)
			}
			if len(shown) == 0 {
				t.Fatalf("%s has no sh block", path)
			}

			work := t.TempDir()
			for _, d := range []string{"datasets", "examples", "ingest"} {
				if err := os.Symlink(filepath.Join(repo, d), filepath.Join(work, d)); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "BIN="+binDir)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out // one pipe: the order a terminal shows
			runErr := cmd.Run()
			parts := strings.Split(out.String(), marker+"\n")[1:]
			if runErr != nil || len(parts) != len(shown) {
				t.Fatalf("%s: the commands failed (%v) after %d of %d blocks:\n%s", path, runErr, len(parts), len(shown), out.String())
			}

			// Compare each output with the text block that follows its
			// commands, if any.
			var edits []block
			for k, i := range shown {
				if i+1 >= len(bs) || bs[i+1].lang != "text" {
					continue
				}
				want, got := bs[i+1], parts[k]
				if *update {
					edits = append(edits, block{body: got, start: want.start, end: want.end})
					continue
				}
				if mw, mg := mask(dropProgress(want.body)), mask(dropProgress(got)); mw != mg {
					t.Errorf("%s: the commands of sh block %d print something else than the README shows "+
						"(go test ./examples -update rewrites it; check the diff)\n--- README\n%s--- printed\n%s",
						path, k+1, want.body, got)
				}
			}
			if *update && len(edits) > 0 {
				for i := len(edits) - 1; i >= 0; i-- {
					e := edits[i]
					readme = readme[:e.start] + e.body + readme[e.end:]
				}
				if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// sameAsAFile reports whether one of the .json files of dir holds body.
func sameAsAFile(t *testing.T, dir, body string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(b)) == strings.TrimSpace(body) {
			return true
		}
	}
	return false
}

// progressLine matches the release's progress log: a line every 10 s of a
// stage ("working") and the end of a stage that took as long ("stage
// done"). Whether a stage prints them depends on the machine's speed and
// load, not on the example.
var progressLine = regexp.MustCompile(`^time=\S+ level=INFO msg=(working|"stage done") `)

// dropProgress removes the progress log's lines from s.
func dropProgress(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !progressLine.MatchString(line) {
			b.WriteString(line)
		}
	}
	return b.String()
}

var (
	number = regexp.MustCompile(`[0-9]+([.,][0-9]+)*([eE][-+]?[0-9]+)?`)
	spaces = regexp.MustCompile(`[ \t]+`)
)

// mask replaces every number by "#" and every run of blanks by one space,
// line by line, without trailing blanks.
func mask(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		line = number.ReplaceAllString(strings.TrimRight(line, " \t\n"), "#")
		b.WriteString(spaces.ReplaceAllString(line, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestMask(t *testing.T) {
	tests := []struct{ in, want string }{
		{"done in 2.68 s\n", "done in # s\n"},
		{"privacy: (ε = 0.999999, δ = 1e-09) spent\n", "privacy: (ε = #, δ = #) spent\n"},
		{"n: 48,842  \n  a    b\n", "n: #\n a b\n"},
		{"all 3-way marginals", "all #-way marginals\n"},
	}
	for _, tt := range tests {
		if got := mask(tt.in); got != tt.want {
			t.Errorf("mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	progress := "a\ntime=2026-12-01T03:51:42.382Z level=INFO msg=working stage=solve stage_elapsed=10s elapsed=10s\n" +
		"time=2026-12-01T03:51:43.021Z level=INFO msg=\"stage done\" stage=solve seconds=10.6 elapsed=11s\nb\n" +
		"level=INFO msg=working is not a log line\n"
	if got, want := dropProgress(progress), "a\nb\nlevel=INFO msg=working is not a log line\n"; got != want {
		t.Errorf("dropProgress(%q) = %q, want %q", progress, got, want)
	}
	if mask("released 10 rows\n") == mask("released 10 synthetic rows\n") {
		t.Error("mask hides a change of words")
	}
}
