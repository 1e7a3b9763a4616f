//go:build !unix

package release

import (
	"os"
	"time"
)

// lockShared is a no-op without flock.
func lockShared(*os.File) error { return nil }

// tryLockExclusive, without flock, treats a temporary file as a dead
// release's only when it has not been modified for a day.
func tryLockExclusive(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && time.Since(fi.ModTime()) > 24*time.Hour
}
