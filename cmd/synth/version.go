package main

import (
	"runtime/debug"
)

// buildVersion identifies the binary: the module version and the VCS
// revision that the Go toolchain records in it (runtime/debug.ReadBuildInfo).
// "synth version" prints it and the manifest's tool version and commit come
// from it.
type buildVersion struct {
	// Version is the module version: a release tag (go install
	// …@v1.2.3), a pseudo-version (v0.0.0-20261124…-abcdef123456, when built
	// in a git checkout), "(devel)" when the toolchain records none, or the
	// -ldflags "-X main.version=…" value when set.
	Version string
	// Commit is the full VCS revision ("" when not recorded, e.g. with
	// -buildvcs=false); Modified says the work tree had local changes.
	Commit   string
	Modified bool
}

// readBuildVersion reads the binary's build information.
func readBuildVersion() buildVersion {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi, version)
}

// versionOf is readBuildVersion for a given build information (nil when
// there is none) and -ldflags version ("dev" when not set).
func versionOf(bi *debug.BuildInfo, ldVersion string) buildVersion {
	v := buildVersion{Version: "(devel)"}
	if bi != nil {
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if ldVersion != "" && ldVersion != "dev" {
		v.Version = ldVersion
	}
	return v
}

// String is the version line's text after "synth ", e.g.
// "v0.0.0-20261124020412-abcdef123456+dirty (commit abcdef123456, modified)"
// or "(devel) (no commit recorded: built outside a git checkout or with
// -buildvcs=false)".
func (v buildVersion) String() string {
	if v.Commit == "" {
		return v.Version + " (no commit recorded: built outside a git checkout or with -buildvcs=false)"
	}
	c := v.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	s := v.Version + " (commit " + c
	if v.Modified {
		s += ", modified"
	}
	return s + ")"
}

// manifestCommit is the commit as the manifest states it: the full
// revision, with "+modified" when the work tree had local changes.
func (v buildVersion) manifestCommit() string {
	if v.Commit != "" && v.Modified {
		return v.Commit + "+modified"
	}
	return v.Commit
}
