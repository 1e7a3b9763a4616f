package release

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Temporary files. A release writes each output to ".NAME.tmp-RANDOM" in
// the output folder (OutDir.Write) and probes the folder with
// ".synth-probe-RANDOM"; it holds a shared lock on each temporary file
// until it commits or aborts. A release killed with SIGKILL cannot remove
// its temporary files; the next release into the folder does
// (removeStale): only names of that form, for the output names a release
// may write, and only files no live process holds a lock on.

const probePattern = ".synth-probe-*"

// tmpPattern is the temporary file pattern of the output name.
func tmpPattern(name string) string { return "." + name + ".tmp-*" }

// isOurTemp reports whether base is one of our temporary file names for
// one of names (or a probe file).
func isOurTemp(base string, names []string) bool {
	if ok, _ := filepath.Match(probePattern, base); ok {
		return true
	}
	for _, n := range names {
		prefix := "." + n + ".tmp-"
		if strings.HasPrefix(base, prefix) && len(base) > len(prefix) && !strings.Contains(base[len(prefix):], "/") {
			return true
		}
	}
	return false
}

// removeStale removes the temporary files of earlier, dead releases from
// dir and returns their names. Files that are not regular files, that a
// live release holds, or that cannot be removed are left alone.
func removeStale(dir string, names []string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		if !e.Type().IsRegular() || !isOurTemp(e.Name(), names) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		// Hold the exclusive lock while removing: a live release holds a
		// shared one on each of its temporary files.
		if tryLockExclusive(f) && os.Remove(path) == nil {
			removed = append(removed, e.Name())
		}
		f.Close()
	}
	slices.Sort(removed)
	return removed
}

// Stale returns the temporary files of earlier releases that CreateOutDir
// removed from the folder (left by a release killed with SIGKILL).
func (od *OutDir) Stale() []string { return od.stale }
