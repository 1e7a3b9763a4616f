//go:build unix

package release

import (
	"os"
	"syscall"
)

// lockShared takes a shared advisory lock on f (held until f is closed):
// the mark of a live release's temporary file.
func lockShared(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
}

// tryLockExclusive reports whether an exclusive lock on f could be taken:
// no live process holds the file.
func tryLockExclusive(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
