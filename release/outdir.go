package release

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The files of a release, in the order Commit moves them into place:
// manifest.json always comes last, so its presence marks a complete release.
const (
	SyntheticFile  = "synthetic.parquet"
	ReportJSONFile = "report.json"
	ReportHTMLFile = "report.html"
	ManifestFile   = "manifest.json"
	// SyntheticCSVFile is the default name of the synthetic data in CSV.
	SyntheticCSVFile = "synthetic.csv"
	// DomainFile holds the domain next to a CSV release (Parquet carries
	// it in its footer).
	DomainFile = "domain.json"
)

// Outputs lists the release's files in commit order (with the default
// Parquet output).
var Outputs = []string{SyntheticFile, ReportJSONFile, ReportHTMLFile, ManifestFile}

// knownOutputs are the names any release may write: a folder holding one
// of them holds a release.
var knownOutputs = []string{SyntheticFile, SyntheticCSVFile, DomainFile, ReportJSONFile, ReportHTMLFile, ManifestFile}

// CreateError means an output cannot be created: the output folder cannot be
// made, is not a folder, is not writable, or already holds a release and
// replacing it was not asked for. The CLI maps it to exit code 73.
type CreateError struct {
	Path string
	Err  error
}

func (e *CreateError) Error() string {
	return fmt.Sprintf("cannot create output %s: %v", e.Path, e.Err)
}
func (e *CreateError) Unwrap() error { return e.Err }

// WriteError is an I/O error while writing, syncing or moving an output into
// place. The CLI maps it to exit code 74.
type WriteError struct {
	Path string
	Op   string // "write", "sync", "close", "rename", "remove"
	Err  error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err)
}
func (e *WriteError) Unwrap() error { return e.Err }

// OutDirSettings configures CreateOutDir. The zero value refuses a folder
// that already holds any of the release's files.
type OutDirSettings struct {
	// Force replaces a release already in the folder (the --force flag).
	// Its manifest.json is removed first, then its other files that this
	// run does not write (the names a release writes and those its
	// manifest lists in output.files), then the new files are moved in,
	// manifest last.
	// If the commit then fails, the folder holds no release at all: the
	// previous one is withdrawn, not restored.
	Force bool
	// Files are the names this release writes, when they are not the
	// default Outputs (e.g. --synthetic-file NAME, domain.json). The
	// folder is refused if it holds any of them or any of the names a
	// release writes by default (synthetic.parquet, synthetic.csv,
	// domain.json, the reports, manifest.json).
	Files []string
}

// names returns the file names that mark a release in the folder.
func (s *OutDirSettings) names() []string {
	out := slices.Clone(knownOutputs)
	for _, f := range s.Files {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// OutDir is one transaction on an output folder. Each output is written to
// a temporary file in the folder itself (so on the same file system),
// flushed and fsynced; Commit renames the files into place, the manifest
// last, and fsyncs the folder. On any error, on context cancellation and
// on Abort, every temporary file is removed and no file that the run would
// have created is left behind.
//
// Files already in the folder: a folder that holds any of the release's
// file names (Outputs, the CSV names, or OutDirSettings.Files) is refused with a *CreateError wrapping
// fs.ErrExist, unless Force is set (see OutDirSettings). Other files in the
// folder are never touched.
//
// Temporary files are named ".NAME.tmp-RANDOM". A process killed with
// SIGKILL cannot remove them; they never carry a final name, so a killed run
// leaves no synthetic.parquet or manifest.json behind (a kill during the
// few renames of Commit can leave some outputs without manifest.json,
// which marks the release as incomplete). The next CreateOutDir on the
// folder removes such leftovers (see stale.go and Stale): only files of
// that form for the names a release writes, and only those no live
// release holds (each holds a shared lock on its temporary files).
//
// A folder that CreateOutDir creates (with any parents it creates) is
// removed again by Abort if it is empty; a folder that existed stays.
//
// Usage:
//
//	od, err := CreateOutDir(ctx, dir, nil) // before reading any data
//	defer od.Abort()                        // no-op after Commit
//	err = od.Write(ctx, SyntheticFile, 0o644, writeParquet)
//	…
//	err = od.Commit(ctx)
//
// An OutDir is not safe for concurrent use.
type OutDir struct {
	dir     string
	set     OutDirSettings
	made    []string // folders created by this run, deepest first
	stale   []string // temporary files of dead releases removed at open
	pending []pend   // written, not yet committed, in write order
	moved   []string // finals renamed into place by a failed commit
	done    bool     // committed or aborted
}

type pend struct {
	name string   // final name
	tmp  string   // path of the temporary file
	hold *os.File // holds the shared lock on tmp until commit or abort
}

// release drops the lock on the temporary file.
func (p *pend) release() {
	if p.hold != nil {
		p.hold.Close()
		p.hold = nil
	}
}

// CreateOutDir opens dir (creating it and its parents if needed) as the
// output folder of a release, checks that it is a folder, that it does not
// already hold a release (unless s.Force) and that a file can be created
// in it. Call it before reading any data, so that a bad output folder
// fails fast. Errors are *CreateError.
func CreateOutDir(ctx context.Context, dir string, s *OutDirSettings) (*OutDir, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	od := &OutDir{dir: dir}
	if s != nil {
		od.set = *s
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Note which folders do not exist yet, deepest first, so that a
		// failed run removes exactly those it made.
		var missing []string
		for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
			if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
				break
			}
			missing = append(missing, d)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, &CreateError{Path: dir, Err: err}
		}
		od.made = missing
	case err != nil:
		return nil, &CreateError{Path: dir, Err: err}
	case !fi.IsDir():
		return nil, &CreateError{Path: dir, Err: errors.New("not a directory")}
	}
	if !od.set.Force {
		for _, name := range od.set.names() {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				od.removeMadeDir()
				return nil, &CreateError{Path: filepath.Join(dir, name),
					Err: fmt.Errorf("%w: the folder already holds a release; choose another folder or replace it with --force", fs.ErrExist)}
			}
		}
	}
	if od.made == nil {
		od.stale = removeStale(dir, od.set.names())
	}
	// Probe: can a file be created here?
	f, err := os.CreateTemp(dir, ".synth-probe-*")
	if err != nil {
		od.removeMadeDir()
		return nil, &CreateError{Path: dir, Err: unwrapPath(err)}
	}
	name := f.Name()
	f.Close()
	// (Another release opening the folder at this moment may have removed
	// the probe already: that is fine.)
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &CreateError{Path: dir, Err: unwrapPath(err)}
	}
	return od, nil
}

// unwrapPath drops the temporary file name from an error about the folder.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Dir returns the output folder.
func (od *OutDir) Dir() string { return od.dir }

// ctxWriter fails writes once ctx is done and records the first I/O error
// of the underlying file.
type ctxWriter struct {
	ctx   context.Context
	w     io.Writer
	ioErr error
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.w.Write(p)
	if err != nil && c.ioErr == nil {
		c.ioErr = err
	}
	return n, err
}

// Write creates the output name (a plain file name, no folder) with
// permission bits mode: fn writes its content to the given writer, which
// is buffered and fails once ctx is done. The content lands in a temporary
// file, flushed and fsynced; it gets its final name at Commit. Writing a
// name twice replaces the first content.
//
// On any error the whole transaction is aborted (see Abort). The error is
// ctx.Err() after cancellation, a *CreateError if the file cannot be
// created, a *WriteError for an I/O error, and fn's own error otherwise.
func (od *OutDir) Write(ctx context.Context, name string, mode fs.FileMode, fn func(w io.Writer) error) (err error) {
	if od.done {
		panic("release: OutDir.Write after Commit or Abort")
	}
	if name == "" || name != filepath.Base(name) || name[0] == '.' {
		panic(fmt.Sprintf("release: output name %q must be a plain file name", name))
	}
	defer func() {
		if err != nil {
			od.Abort()
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	final := filepath.Join(od.dir, name)
	f, err := os.CreateTemp(od.dir, "."+name+".tmp-*")
	if err != nil {
		return &CreateError{Path: final, Err: unwrapPath(err)}
	}
	lockShared(f) // best effort: a file system without locks still works
	od.pending = append(od.pending, pend{name: name, tmp: f.Name()})
	cw := &ctxWriter{ctx: ctx, w: f}
	bw := bufio.NewWriterSize(cw, 1<<20)
	ferr := fn(bw)
	if ferr == nil {
		ferr = bw.Flush()
	}
	if ferr != nil {
		f.Close()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case cw.ioErr != nil:
			return &WriteError{Path: final, Op: "write", Err: unwrapPath(cw.ioErr)}
		}
		return ferr
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return &WriteError{Path: final, Op: "chmod", Err: unwrapPath(err)}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return &WriteError{Path: final, Op: "sync", Err: unwrapPath(err)}
	}
	// Keep a shared lock on the temporary file until commit or abort (a
	// second handle, locked before the first is closed).
	if h, err := os.Open(f.Name()); err == nil {
		if lockShared(h) == nil {
			od.pending[len(od.pending)-1].hold = h
		} else {
			h.Close()
		}
	}
	if err := f.Close(); err != nil {
		return &WriteError{Path: final, Op: "close", Err: unwrapPath(err)}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// A second write of the same name replaces the first.
	for i, p := range od.pending[:len(od.pending)-1] {
		if p.name == name {
			os.Remove(p.tmp)
			od.pending[i].release()
			od.pending = slices.Delete(od.pending, i, i+1)
			break
		}
	}
	return nil
}

// commitOrder returns the pending files in commit order: as written, with
// manifest.json last.
func (od *OutDir) commitOrder() []pend {
	out := make([]pend, 0, len(od.pending))
	var manifest []pend
	for _, p := range od.pending {
		if p.name == ManifestFile {
			manifest = append(manifest, p)
		} else {
			out = append(out, p)
		}
	}
	return append(out, manifest...)
}

// Commit moves the written files into place, in write order with
// manifest.json last, then fsyncs the folder. With Force it first withdraws
// the release already in the folder (see OutDirSettings). On error or
// cancellation everything this run wrote is removed (Abort).
func (od *OutDir) Commit(ctx context.Context) (err error) {
	if od.done {
		panic("release: OutDir.Commit after Commit or Abort")
	}
	defer func() {
		if err != nil {
			od.Abort()
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	if od.set.Force {
		// Withdraw the previous release: its manifest first, then its other
		// files that this run does not replace.
		order := append([]string{ManifestFile}, slices.DeleteFunc(od.set.names(), func(n string) bool { return n == ManifestFile })...)
		for _, f := range previousFiles(od.dir) { // e.g. an earlier --synthetic-file
			if !slices.Contains(order, f) {
				order = append(order, f)
			}
		}
		for _, name := range order {
			writes := slices.ContainsFunc(od.pending, func(p pend) bool { return p.name == name })
			if name != ManifestFile && writes {
				continue
			}
			path := filepath.Join(od.dir, name)
			if name == ManifestFile {
				// The replaced manifest is the record of what the earlier
				// release spent: it is kept, under a name of its own.
				if err := keepReplaced(od.dir); err != nil {
					return err
				}
				continue
			}
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return &WriteError{Path: path, Op: "remove", Err: unwrapPath(err)}
			}
		}
	}
	for _, p := range od.commitOrder() {
		if err := ctx.Err(); err != nil {
			return err
		}
		final := filepath.Join(od.dir, p.name)
		if !od.set.Force {
			// Refuse to clobber a file that appeared since CreateOutDir.
			if _, err := os.Lstat(final); err == nil {
				return &CreateError{Path: final, Err: fmt.Errorf("%w: created by someone else during the run", fs.ErrExist)}
			}
		}
		if err := os.Rename(p.tmp, final); err != nil {
			return &WriteError{Path: final, Op: "rename", Err: unwrapPath(err)}
		}
		od.moved = append(od.moved, final)
	}
	if err := syncDir(od.dir); err != nil {
		return &WriteError{Path: od.dir, Op: "sync", Err: unwrapPath(err)}
	}
	for i := range od.pending {
		od.pending[i].release()
	}
	od.pending, od.moved, od.done = nil, nil, true
	return nil
}

// previousFiles returns the plain file names listed in output.files of
// the manifest.json already in dir (none if it cannot be read).
func previousFiles(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil
	}
	var m struct {
		Output struct {
			Files []string `json:"files"`
		} `json:"output"`
	}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	var out []string
	for _, f := range m.Output.Files {
		if f != "" && f == filepath.Base(f) && f[0] != '.' {
			out = append(out, f)
		}
	}
	return out
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// Abort removes every temporary file and every output already moved into
// place by a failed Commit, and the folder itself (and the parents it
// created) if this run created it and it is empty. It is a no-op after a
// successful Commit and may be called more than once (defer it).
func (od *OutDir) Abort() {
	if od.done {
		return
	}
	od.done = true
	for i, p := range od.pending {
		os.Remove(p.tmp)
		od.pending[i].release()
	}
	for _, path := range od.moved {
		os.Remove(path)
	}
	od.pending, od.moved = nil, nil
	od.removeMadeDir()
}

// removeMadeDir removes the folders this run created, deepest first; each
// removal fails, harmlessly, unless the folder is empty.
func (od *OutDir) removeMadeDir() {
	for _, d := range od.made {
		if os.Remove(d) != nil {
			return
		}
	}
}

// ReplacedManifestPrefix starts the name under which a release made with
// Force keeps the manifest it replaces: manifest.replaced-<UTC time>.json
// (e.g. manifest.replaced-20261124T221503Z.json; "-2", "-3", … when two
// replacements fall in one second). It is not one of a release's files.
const ReplacedManifestPrefix = "manifest.replaced-"

// keepReplaced renames the manifest.json in dir, if any, to a replaced
// manifest's name, never overwriting one.
func keepReplaced(dir string) error {
	old := filepath.Join(dir, ManifestFile)
	if _, err := os.Lstat(old); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for i := 1; ; i++ {
		name := ReplacedManifestPrefix + stamp + ".json"
		if i > 1 {
			name = fmt.Sprintf("%s%s-%d.json", ReplacedManifestPrefix, stamp, i)
		}
		dst := filepath.Join(dir, name)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		// Link, then remove: a name that appeared meanwhile is never replaced.
		if err := os.Link(old, dst); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return &WriteError{Path: dst, Op: "keep the replaced manifest as", Err: unwrapPath(err)}
		}
		if err := os.Remove(old); err != nil {
			return &WriteError{Path: old, Op: "remove", Err: unwrapPath(err)}
		}
		return nil
	}
}
