package ledger

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// fileStore keeps a ledger in a JSON file. Every read-modify-write holds
// an exclusive flock on PATH.lock (the ledger file itself is replaced by a
// rename, so it cannot carry the lock), and the new State is written to a
// temporary file in the same folder, synced, renamed over the ledger and
// the folder synced: a crash leaves the old ledger or the new one, never a
// mix.
type fileStore struct {
	path, name string
}

func (f *fileStore) where() string { return f.path }
func (f *fileStore) close() error  { return nil }

// lock takes the exclusive lock (waiting for it, or for ctx) and returns
// its release.
func (f *fileStore) lock(ctx context.Context) (func(), error) {
	lf, err := os.OpenFile(f.path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", f.path, err)
	}
	done := make(chan error, 1)
	go func() { done <- unix.Flock(int(lf.Fd()), unix.LOCK_EX) }()
	select {
	case err := <-done:
		if err != nil {
			lf.Close()
			return nil, fmt.Errorf("ledger %s: lock: %w", f.path, err)
		}
	case <-ctx.Done():
		// The goroutine may still get the lock: closing the file releases it.
		go func() { <-done; lf.Close() }()
		return nil, ctx.Err()
	}
	return func() { unix.Flock(int(lf.Fd()), unix.LOCK_UN); lf.Close() }, nil
}

func (f *fileStore) create(ctx context.Context, s *State) error {
	unlock, err := f.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(f.path); err == nil {
		return fmt.Errorf("ledger %s exists: a table has one lifetime budget (synth ledger show reads it)", f.path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return f.write(s)
}

func (f *fileStore) read(ctx context.Context) (*State, error) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("ledger %s does not exist (create it with synth ledger init): %w", f.path, err)
		}
		return nil, err
	}
	s, err := parseState(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.path, err)
	}
	return s, nil
}

func (f *fileStore) update(ctx context.Context, fn func(*State) (bool, error)) error {
	unlock, err := f.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	s, err := f.read(ctx)
	if err != nil {
		return err
	}
	changed, err := fn(s)
	if err != nil || !changed {
		return err
	}
	return f.write(s)
}

// write replaces the ledger file atomically.
func (f *fileStore) write(s *State) error {
	b, err := s.json()
	if err != nil {
		return err
	}
	dir := filepath.Dir(f.path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("ledger %s: %w", f.path, err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		return fmt.Errorf("ledger %s: %w", f.path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("ledger %s: %w", f.path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("ledger %s: %w", f.path, err)
	}
	if err := os.Chmod(name, 0o644); err != nil {
		return fmt.Errorf("ledger %s: %w", f.path, err)
	}
	if err := os.Rename(name, f.path); err != nil {
		return fmt.Errorf("ledger %s: %w", f.path, err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
