package release

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpsynth/synth/universe"
)

func TestOutputSettings(t *testing.T) {
	for _, tc := range []struct {
		s     OutputSettings
		name  string
		files []string
	}{
		{OutputSettings{}, "synthetic.parquet", []string{"synthetic.parquet", "report.json", "report.html", "manifest.json"}},
		{OutputSettings{Format: CSV}, "synthetic.csv", []string{"synthetic.csv", "domain.json", "report.json", "report.html", "manifest.json"}},
		{OutputSettings{Format: CSV, SyntheticFile: "p.csv.gz"}, "p.csv.gz", []string{"p.csv.gz", "domain.json", "report.json", "report.html", "manifest.json"}},
		{OutputSettings{SyntheticFile: "out.parquet"}, "out.parquet", []string{"out.parquet", "report.json", "report.html", "manifest.json"}},
	} {
		if got := tc.s.Name(); got != tc.name {
			t.Errorf("%+v.Name() = %q, want %q", tc.s, got, tc.name)
		}
		if got := tc.s.Files(); !slices.Equal(got, tc.files) {
			t.Errorf("%+v.Files() = %q, want %q", tc.s, got, tc.files)
		}
		if err := tc.s.Check(); err != nil {
			t.Errorf("%+v.Check() = %v", tc.s, err)
		}
	}
	for _, bad := range []string{"../x.csv", "a/b.csv", ".hidden", "report.json", "manifest.json", "domain.json"} {
		var ce *ConfigError
		if err := (OutputSettings{SyntheticFile: bad}).Check(); !errors.As(err, &ce) {
			t.Errorf("Check(%q) = %v, want a *ConfigError", bad, err)
		}
	}
	for in, want := range map[string]OutputFormat{"parquet": Parquet, "csv": CSV, "CSV": CSV} {
		if got, err := ParseOutputFormat(in); err != nil || got != want {
			t.Errorf("ParseOutputFormat(%q) = %v, %v, want %v", in, got, err, want)
		}
	}
	if _, err := ParseOutputFormat("xlsx"); err == nil {
		t.Error(`ParseOutputFormat("xlsx") = nil error`)
	}
}

// TestWriteSyntheticCSV: the CSV release writes the chosen file and
// domain.json; the folder is then refused for another release, and --force
// replacing it with Parquet withdraws the CSV and domain.json.
func TestWriteSyntheticCSV(t *testing.T) {
	ctx := context.Background()
	dom := mustDomain(t, mixedDomain)
	cells := testRows(dom, 100, 12)
	dir := filepath.Join(t.TempDir(), "rel")
	s := OutputSettings{Format: CSV, SyntheticFile: "people.csv"}
	od, err := CreateOutDir(ctx, dir, &OutDirSettings{Files: s.Files()})
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := NewDecoder(dom, nil, nil)
	if err := s.WriteSynthetic(ctx, od, dom, cells, dec, nil); err != nil {
		t.Fatal(err)
	}
	if err := od.Write(ctx, ManifestFile, 0o644, writeString(`{"output": {"files": ["people.csv", "domain.json", "manifest.json"]}}`)); err != nil {
		t.Fatal(err)
	}
	if err := od.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"domain.json", "manifest.json", "people.csv"}) {
		t.Errorf("folder = %q", got)
	}
	// domain.json is the domain as the CSV writes it: nulls as empty fields.
	b, _ := os.ReadFile(filepath.Join(dir, DomainFile))
	back, err := universe.ParseDomain(b)
	csvDom, _ := dom.WithNullTokens(func(*universe.Attribute) string { return "" })
	if err != nil || mustJSON(t, back) != mustJSON(t, csvDom) {
		t.Errorf("domain.json = %s (%v), want the domain with empty null tokens", b, err)
	}
	csvb, _ := os.ReadFile(filepath.Join(dir, "people.csv"))
	if n := bytes.Count(csvb, []byte("\r\n")); n < 101 {
		t.Errorf("people.csv has %d lines, want at least 101", n)
	}
	// Another release into the folder: refused, whatever its own names.
	for _, files := range [][]string{nil, (OutputSettings{}).Files(), s.Files()} {
		if _, err := CreateOutDir(ctx, dir, &OutDirSettings{Files: files}); !errors.Is(err, fs.ErrExist) {
			t.Errorf("second release with files %q: %v, want fs.ErrExist", files, err)
		}
	}
	// A folder with only a custom-named file of this release is refused too.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "people.csv"), nil, 0o644)
	if _, err := CreateOutDir(ctx, other, &OutDirSettings{Files: s.Files()}); err == nil || !strings.Contains(err.Error(), "people.csv") {
		t.Errorf("folder holding people.csv: %v, want a refusal naming it", err)
	}
	// --force with the default Parquet output withdraws the CSV release:
	// domain.json and the file its manifest lists (people.csv).
	p := OutputSettings{}
	od, err = CreateOutDir(ctx, dir, &OutDirSettings{Force: true, Files: p.Files()})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteSynthetic(ctx, od, dom, cells, dec, []byte(`{"m": 1}`)); err != nil {
		t.Fatal(err)
	}
	od.Write(ctx, ManifestFile, 0o644, writeString("{}"))
	if err := od.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// The replaced manifest stays, under a name of its own.
	if got := entries(t, dir); len(got) != 3 || got[0] != "manifest.json" || !strings.HasPrefix(got[1], ReplacedManifestPrefix) || got[2] != "synthetic.parquet" {
		t.Errorf("folder after --force = %q, want manifest.json, the replaced manifest and synthetic.parquet", got)
	}
}
