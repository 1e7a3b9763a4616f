package main

import (
	"fmt"
	"math/big"
	"runtime/debug"

	"github.com/dpsynth/synth/universe"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// versionString returns the version and, when the binary was built from a
// git checkout, the commit.
func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			v += " (" + rev + dirty + ")"
		}
		if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	return v
}

func bigInt(v int64) *big.Int { return big.NewInt(v) }

// fmtInt renders an integer with thousands separators, e.g. "48,842".
func fmtInt(v int64) string { return universe.FormatCount(big.NewInt(v)) }

// commit returns the git commit the binary was built from, if recorded.
func commit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return ""
}
