package main

// End-to-end tests of the inputs as data teams have them: part-file
// folders and globs, compressed CSV, stdin, column selection, collected
// value errors and domain errors, on the built binary.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
)

// rawParts splits ingest's raw test table into a warehouse-style folder:
// plain, gzip and zstd CSV parts, an empty part and the markers Spark
// writes. It returns the folder, the domain and the whole file.
func rawParts(t *testing.T) (dir, domain, whole string) {
	t.Helper()
	raw := filepath.Join(pkgDir, "..", "..", "ingest", "testdata", "raw")
	whole, domain = filepath.Join(raw, "adult-raw.csv"), filepath.Join(raw, "adult-raw-domain.json")
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	header, rows := lines[0], lines[1:]
	part := func(rs []string) []byte { return []byte(header + strings.Join(rs, "")) }
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(part(rows[500:1200]))
	zw.Close()
	zs, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "export")
	files := map[string][]byte{
		"part-00000.csv":    part(rows[:500]),
		"part-00001.csv.gz": gz.Bytes(),
		"part-00002.csv":    zs.EncodeAll(part(rows[1200:]), nil), // zstd, whatever the name says
		"part-00003.csv":    nil,
		"_SUCCESS":          nil,
		".part-00000.crc":   []byte("\x00junk"),
	}
	zs.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, domain, whole
}

// runStdin runs the binary with stdin.
func runStdin(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, synthBinary(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantOutput(t *testing.T, r result, code int, in string, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d: %s", r.code, code, r)
	}
	for _, w := range want {
		if !strings.Contains(in, w) {
			t.Errorf("output does not contain %q: %s", w, r)
		}
	}
}

func TestInputsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	dir, domain, whole := rawParts(t)

	// inspect reads a folder, a quoted glob and stdin: the same n as the file.
	for _, data := range []string{dir, filepath.Join(dir, "part-*")} {
		r := runBinary(t, "", "inspect", "--domain", domain, "--data", data)
		wantOutput(t, r, ExitOK, r.stdout, "data: "+data+" (csv)\npart files: 4\nrows: 2,000\nn: 2,000\n", "validation: ok")
	}
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(b)
	zw.Close()
	for _, in := range [][]byte{b, gz.Bytes()} {
		r := runStdin(t, in, "inspect", "--domain", domain, "--data", "-")
		wantOutput(t, r, ExitOK, r.stdout, "data: stdin (csv)\nrows: 2,000\nn: 2,000\n")
	}

	// release from the glob, projected onto three attributes; eval of the
	// synthetic table against the folder with the same projection.
	out := filepath.Join(t.TempDir(), "rel")
	r := runBinary(t, "", "release", "--data", filepath.Join(dir, "part-0000[0-3]*"), "--domain", domain,
		"--columns", "age,sex,race", "--marginals", "2", "--epsilon", "1", "--seed", "3", "--rows", "2000", "--out", out)
	wantOutput(t, r, ExitOK, r.stdout)
	f, err := os.Open(filepath.Join(out, "synthetic.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range pf.Schema().Fields() {
		cols = append(cols, c.Name())
	}
	if got := strings.Join(cols, ","); got != "race,sex,age" || pf.NumRows() != 2000 {
		t.Errorf("synthetic.parquet: columns %s, %d rows; want race,sex,age (domain order), 2000 rows", got, pf.NumRows())
	}
	// release from stdin (gzip), the same records.
	out2 := filepath.Join(t.TempDir(), "rel")
	r = runStdin(t, gz.Bytes(), "release", "--data", "-", "--domain", domain, "--columns", "age,sex,race",
		"--marginals", "2", "--epsilon", "1", "--seed", "3", "--out", out2, "--json")
	wantOutput(t, r, ExitOK, r.stdout, `"records":2000`)
	r = runBinary(t, "", "eval", "--data", dir, "--domain", domain, "--exclude-columns", "education,marital-status,occupation,income",
		"--ignore-extra-columns", "--marginals", "2", "--synthetic", filepath.Join(out, "synthetic.parquet"))
	wantOutput(t, r, ExitOK, r.stdout, "2000 synthetic rows against 2000 records")
}

func TestInputsFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	dir, domain, whole := rawParts(t)
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	rel := func(extra ...string) []string {
		return append([]string{"release", "--domain", domain, "--marginals", "2", "--epsilon", "1", "--out", out}, extra...)
	}

	// Bad values: listed (first 20), counted, with the repairs that apply.
	b, _ := os.ReadFile(whole)
	lines := strings.SplitAfter(string(b), "\n")
	var bad strings.Builder
	bad.WriteString(lines[0])
	for i := 1; i <= 30; i++ {
		bad.WriteString("Male,0,Martian,Never-married,Adm-clerical,Bachelors,95\n")
	}
	badPath := filepath.Join(tmp, "bad.csv")
	os.WriteFile(badPath, []byte(bad.String()), 0o644)
	// By default the values are not printed (private data in logs).
	r := runBinary(t, "", rel("--data", badPath)...)
	wantOutput(t, r, ExitData, r.stderr,
		"synth release: "+badPath+`: row 1, column "race": unknown category (declared:`,
		"\nhint: the values themselves are not printed")
	if strings.Contains(r.stderr, "Martian") || strings.Contains(r.stderr, `"95"`) {
		t.Errorf("release printed the bad values without --show-values:\n%s", r.stderr)
	}
	r = runBinary(t, "", rel("--data", badPath, "--show-values")...)
	wantOutput(t, r, ExitData, r.stderr,
		"synth release: "+badPath+`: row 1, column "race": unknown category "Martian"`,
		"\n"+badPath+`: row 1, column "age": out of range "95" (declared: numeric [17, 91] in 10 bins)`,
		"\n"+badPath+`: row 10, column "age": out of range "95"`,
		"\n60 bad values in all; the first 20 are listed\n",
		`hint: --clamp moves numbers out of range ("age")`,
		`hint: --unknown-to-other maps unknown categories to the declared other value ("Other" of "race")`)
	if strings.Contains(r.stderr, "row 11,") {
		t.Errorf("more than 20 values listed: %s", r)
	}
	noOutput(t, out)
	// The suggested repairs work.
	r = runBinary(t, "", rel("--data", badPath, "--clamp", "--unknown-to-other", "--seed", "1", "--out", filepath.Join(tmp, "repaired"))...)
	wantOutput(t, r, ExitOK, r.stderr, `30 values of "age" clamped`, `30 values of "race" mapped to the declared other value`)

	// Column problems.
	extra := filepath.Join(tmp, "extra.csv")
	os.WriteFile(extra, []byte("id,"+strings.TrimRight(lines[0], "\n")+"\n7,"+lines[1]), 0o644)
	r = runBinary(t, "", "inspect", "--domain", domain, "--data", extra)
	wantOutput(t, r, ExitData, r.stderr, `header, column "id": extra column: "id" is not an attribute of the domain; to skip it give --ignore-extra-columns`)
	// The hint works: --ignore-extra-columns skips the column (where
	// --exclude-columns, which names attributes of the domain, would fail).
	if r := runBinary(t, "", "inspect", "--domain", domain, "--data", extra, "--ignore-extra-columns"); r.code != ExitOK {
		t.Errorf("inspect with the hint's flag: %s", r)
	}
	r = runBinary(t, "", "inspect", "--domain", domain, "--data", extra, "--ignore-extra-columns")
	wantOutput(t, r, ExitOK, r.stdout, "n: 1\n")
	r = runBinary(t, "", rel("--data", whole, "--columns", "sex,agee,zip")...)
	wantOutput(t, r, ExitUsage, r.stderr, `--columns: "agee", "zip" are not attributes of the domain (domain attributes: "education"`)
	r = runBinary(t, "", "inspect", "--domain", domain, "--exclude-columns", "sexx")
	wantOutput(t, r, ExitUsage, r.stderr, `--exclude-columns: "sexx" is not an attribute of the domain`)

	// Flags and paths.
	r = runBinary(t, "", rel("--data", whole, "--data", dir)...)
	wantOutput(t, r, ExitUsage, r.stderr, `invalid argument "`+dir+`" for "--data" flag: given twice`, "give their folder or a quoted glob")
	r = runBinary(t, "", rel("--data", filepath.Join(dir, "part-00000.csv"), filepath.Join(dir, "part-00002.csv"))...)
	wantOutput(t, r, ExitUsage, r.stderr, "unexpected arguments", "quote the glob")
	empty := filepath.Join(tmp, "empty")
	os.MkdirAll(empty, 0o755)
	os.WriteFile(filepath.Join(empty, "_SUCCESS"), nil, 0o644)
	r = runBinary(t, "", rel("--data", empty)...)
	wantOutput(t, r, ExitNoInput, r.stderr, empty+": no data files (1 ignored")
	r = runStdin(t, []byte("x"), rel("--data", "-", "--data-format", "parquet")...)
	wantOutput(t, r, ExitUsage, r.stderr, "--data - reads CSV from stdin")
	corrupt := filepath.Join(dir, "part-00004.csv")
	os.WriteFile(corrupt, []byte("\x1f\x8b\x08\x00garbage"), 0o644)
	r = runBinary(t, "", "inspect", "--domain", domain, "--data", dir)
	wantOutput(t, r, ExitData, r.stderr, corrupt+": malformed input: corrupt gzip stream")

	// Domain errors name file, line and column, and the attribute.
	dom := filepath.Join(tmp, "domain.json")
	os.WriteFile(dom, []byte("{\"attributes\": [\n  {\"name\": \"sex\", \"type\": \"categorical\", \"values\": [\"F\", \"M\"]},\n  {\"name\": \"age\", \"type\": \"integer\", \"min\": 0, \"max\": 99, \"widht\": 10}\n]}\n"), 0o644)
	r = runBinary(t, "", "inspect", "--domain", dom)
	wantOutput(t, r, ExitData, r.stderr, "synth inspect: "+dom+`:3:59: attribute "age": unknown field "widht" (did you mean "width"?); fields of an integer attribute: name, type, min, max, width, null`)
	os.WriteFile(dom, []byte("{\"attributes\": [\n  {\"name\": \"sex\", \"type\": \"categorical\", \"values\": [\"F\", \"M\"]}\n  {\"name\": \"age\"}\n]}\n"), 0o644)
	r = runBinary(t, "", "inspect", "--domain", dom)
	wantOutput(t, r, ExitData, r.stderr, "synth inspect: "+dom+`:3:3: invalid character '{' after array element`)
}
