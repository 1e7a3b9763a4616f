package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/dpsynth/synth/release"
)

func TestVersionOf(t *testing.T) {
	rev := "abcdef1234567890abcdef1234567890abcdef12"
	info := func(ver string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/dpsynth/synth", Version: ver}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	tests := []struct {
		name     string
		bi       *debug.BuildInfo
		ld       string
		want     string
		manifest string
	}{
		{"checkout, modified", info("v0.0.0-20261124020412-abcdef123456+dirty", "vcs.revision", rev, "vcs.modified", "true"), "dev",
			"v0.0.0-20261124020412-abcdef123456+dirty (commit abcdef123456, modified)", rev + "+modified"},
		{"checkout, clean", info("v0.0.0-20261124020412-abcdef123456", "vcs.revision", rev, "vcs.modified", "false"), "dev",
			"v0.0.0-20261124020412-abcdef123456 (commit abcdef123456)", rev},
		{"go install @v1.2.3", info("v1.2.3"), "dev",
			"v1.2.3 (no commit recorded: built outside a git checkout or with -buildvcs=false)", ""},
		{"devel", info("(devel)", "vcs.revision", rev), "dev", "(devel) (commit abcdef123456)", rev},
		{"no build info", nil, "dev", "(devel) (no commit recorded: built outside a git checkout or with -buildvcs=false)", ""},
		{"ldflags", info("(devel)", "vcs.revision", rev), "v2.0.0", "v2.0.0 (commit abcdef123456)", rev},
	}
	for _, tt := range tests {
		v := versionOf(tt.bi, tt.ld)
		if got := v.String(); got != tt.want {
			t.Errorf("%s: versionOf(…).String() = %q, want %q", tt.name, got, tt.want)
		}
		if got := v.manifestCommit(); got != tt.manifest {
			t.Errorf("%s: manifestCommit() = %q, want %q", tt.name, got, tt.manifest)
		}
	}
}

// TestVersionBinary: "synth version" prints the built binary's version
// line, and a release's manifest states the same version and commit.
func TestVersionBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	r := runBinary(t, "", "version")
	if r.code != ExitOK || !strings.HasPrefix(r.stdout, "synth ") || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("synth version: %s", r)
	}
	line := strings.TrimSuffix(strings.TrimPrefix(r.stdout, "synth "), "\n")
	ver, rest, _ := strings.Cut(line, " (")
	if ver == "" || !(strings.HasPrefix(rest, "commit ") || strings.HasPrefix(rest, "no commit recorded")) {
		t.Errorf("synth version = %q: want VERSION (commit …) or VERSION (no commit recorded …)", r.stdout)
	}
	out := filepath.Join(t.TempDir(), "out")
	r = runBinary(t, "", "release", "--data", filepath.Join(rawDir, "adult-raw.csv"), "--domain", filepath.Join(rawDir, "adult-raw-domain.json"),
		"--marginals", "1", "--epsilon", "1", "--out", out, "--quiet")
	if r.code != ExitOK {
		t.Fatalf("release: %s", r)
	}
	b, err := os.ReadFile(filepath.Join(out, release.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	man, err := release.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if man.Tool.Version != ver {
		t.Errorf("manifest tool version %q, synth version says %q", man.Tool.Version, ver)
	}
	if c := man.Tool.Commit; (c == "") != strings.HasPrefix(rest, "no commit") || (c != "" && !strings.HasPrefix(rest, "commit "+c[:min(12, len(c))])) {
		t.Errorf("manifest tool commit %q, synth version says %q", c, line)
	}
}
