package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dpsynth/synth/universe"
)

// Stdin is the path that makes ReadFile read CSV from standard input
// (Options.Stdin, or os.Stdin).
const Stdin = "-"

// stdinName names standard input in errors and Stats.
const stdinName = "stdin"

// ReadFile counts the table at path over dom. The path is one of:
//
//   - a file: CSV or Parquet, the format from opts.Format or detected (see
//     Detect); CSV may be compressed with gzip or zstd (see ReadCSV);
//   - a folder or a glob pattern (e.g. "export/part-*.csv.gz") of part
//     files, as warehouses and Spark write them: see Parts for which files
//     are read. They are read in name order and must all have the same
//     format; their counts add up. Errors name the part file and its row;
//     part files without rows are allowed as long as one has rows;
//   - Stdin ("-"): CSV (possibly compressed) from opts.Stdin or os.Stdin.
//
// A file that cannot be opened gives the error of os.Open (a
// *fs.PathError); a folder or pattern without data files gives a
// *NoFilesError (which errors.Is fs.ErrNotExist); see ReadCSV and
// ReadParquet for the rest.
func ReadFile(ctx context.Context, path string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	return withUnits(ctx, path, dom, opts, func(o Options) (*universe.Counts, *Stats, error) { return readFile(ctx, path, dom, o) })
}

func readFile(ctx context.Context, path string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	if path == Stdin {
		return readStdin(ctx, dom, opts)
	}
	parts, single, err := Parts(path)
	if err != nil {
		return nil, nil, err
	}
	if single {
		return readOne(ctx, path, dom, opts)
	}
	return readParts(ctx, path, parts, dom, opts)
}

func readStdin(ctx context.Context, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	if opts.Format == Parquet {
		return nil, nil, &DataError{File: stdinName, Err: errors.New("Parquet cannot be read from stdin (it needs random access to the file): give the file's path")}
	}
	r := opts.Stdin
	if r == nil {
		r = os.Stdin
	}
	br := newPeekReader(r)
	if magic, _ := br.Peek(4); string(magic) == "PAR1" {
		return nil, nil, &DataError{File: stdinName, Err: errors.New("stdin holds Parquet, which needs random access to the file: give the file's path")}
	}
	return ReadCSV(ctx, br, stdinName, dom, opts)
}

// readOne reads a single file.
func readOne(ctx context.Context, path string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	format := opts.Format
	if format == Auto {
		if format, err = Detect(path, f); err != nil {
			return nil, nil, &ReadError{File: path, Err: err}
		}
	}
	if format == Parquet {
		return ReadParquet(ctx, f, path, dom, opts)
	}
	return ReadCSV(ctx, f, path, dom, opts)
}

// NoFilesError is a folder or glob pattern with no data files.
type NoFilesError struct {
	Path string
	// Ignored lists the names skipped (hidden and "_" files).
	Ignored []string
}

func (e *NoFilesError) Error() string {
	msg := e.Path + ": no data files"
	if len(e.Ignored) > 0 {
		msg += fmt.Sprintf(" (%d ignored: names starting with \"_\" or \".\", such as %q)", len(e.Ignored), e.Ignored[0])
	}
	return msg
}

// Is makes a NoFilesError match fs.ErrNotExist (a missing input).
func (e *NoFilesError) Is(target error) bool { return target == fs.ErrNotExist }

// ignored reports whether a part file is skipped: markers and metadata
// such as _SUCCESS, _committed_*, _delta_log, and hidden files such as
// .part-0000.crc.
func ignored(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")
}

// hasMeta reports whether path is a glob pattern.
func hasMeta(path string) bool { return strings.ContainsAny(path, "*?[") }

// Parts lists the files ReadFile reads for path, in the order it reads
// them, and whether path is a single file (then parts is just path).
//
// A folder gives its files; a glob pattern (filepath.Match syntax, e.g.
// "out/part-*.parquet") its matches. Names starting with "_" or "." are
// ignored (_SUCCESS, _committed_*, .crc files); files are sorted by name.
// A sub-folder among them is an error (nested folders such as Hive
// partitions are not read: their rows would be lost), and so is a folder
// or pattern without data files (*NoFilesError). A path that is neither a
// folder nor an existing file but a pattern is matched; any other path is
// a single file (which may not exist: opening it reports that).
func Parts(path string) (parts []string, single bool, err error) {
	fi, statErr := os.Stat(path)
	var names []string
	switch {
	case statErr == nil && fi.IsDir():
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, false, err
		}
		for _, e := range entries {
			names = append(names, filepath.Join(path, e.Name()))
		}
	case statErr == nil || !hasMeta(path):
		return []string{path}, true, nil
	default:
		if names, err = filepath.Glob(path); err != nil {
			return nil, false, fmt.Errorf("--data %s: %w", path, err)
		}
	}
	var skipped []string
	for _, n := range names {
		if ignored(filepath.Base(n)) {
			skipped = append(skipped, filepath.Base(n))
			continue
		}
		fi, err := os.Stat(n)
		if err != nil {
			return nil, false, err
		}
		if fi.IsDir() {
			return nil, false, &DataError{File: n, Err: fmt.Errorf("%w: %s is a folder; part files must sit directly in the folder read (nested folders such as Hive partitions are not read)", ErrNestedFolder, n)}
		}
		parts = append(parts, n)
	}
	if len(parts) == 0 {
		return nil, false, &NoFilesError{Path: path, Ignored: skipped}
	}
	slices.Sort(parts)
	return parts, false, nil
}

// readParts reads part files in order and adds their counts up. Bad values
// are collected over all parts; an error that is not about values stops
// the read.
func readParts(ctx context.Context, path string, parts []string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	format := opts.Format
	var first string // the part whose format the others must match
	if format == Auto {
		for _, p := range parts {
			f, err := os.Open(p)
			if err != nil {
				return nil, nil, err
			}
			pf, err := Detect(p, f)
			f.Close()
			if err != nil {
				return nil, nil, &ReadError{File: p, Err: err}
			}
			if first == "" {
				format, first = pf, p
			} else if pf != format {
				return nil, nil, &DataError{File: p, Err: fmt.Errorf("%w: %s is %s but %s is %s; the part files must all have one format", ErrMixedFormats, p, pf, first, format)}
			}
		}
	}
	opts.Format = format
	var (
		counts []*universe.Counts
		errs   []*DataError
		st     = &Stats{File: path, Format: format, Parts: parts, Repairs: make([]Repairs, dom.Len())}
	)
	for _, p := range parts {
		c, pst, err := readOne(ctx, p, dom, opts)
		var de *DataError
		switch {
		case err == nil:
		case errors.As(err, &de) && de.Total == 0 && de.Row == 0 && (errors.Is(de.Err, ErrEmpty) || errors.Is(de.Err, ErrNoRows)):
			continue // an empty part: allowed
		case errors.As(err, &de):
			errs = append(errs, de)
			if !de.collected() {
				return nil, nil, joinErrors(errs)
			}
			continue
		default:
			return nil, nil, err
		}
		counts = append(counts, c)
		st.Rows += pst.Rows
		for a := range st.Repairs {
			st.Repairs[a].Attribute = pst.Repairs[a].Attribute
			st.Repairs[a].Clamped += pst.Repairs[a].Clamped
			st.Repairs[a].MappedToOther += pst.Repairs[a].MappedToOther
		}
	}
	if len(errs) > 0 {
		return nil, nil, joinErrors(errs)
	}
	if st.Rows == 0 {
		return nil, nil, &DataError{File: path, Err: fmt.Errorf("%w: none of the %d part files has a data row", ErrNoRows, len(parts))}
	}
	c, err := mergeSorted(dom, counts)
	if err != nil {
		return nil, nil, &DataError{File: path, Column: opts.CountColumn, Err: ErrCountOverflows}
	}
	st.N, st.Distinct = c.Total(), c.Distinct()
	return c, st, nil
}

// Detect returns the format of a file from its name and first bytes:
// Parquet for names ending in .parquet, .parq or .pq and for content
// starting with the Parquet magic "PAR1", CSV otherwise (including gzip
// and zstd compressed CSV). It leaves r at its start.
func Detect(name string, r io.ReadSeeker) (Format, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".parquet", ".parq", ".pq":
		return Parquet, nil
	}
	var magic [4]byte
	n, err := io.ReadFull(r, magic[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return Auto, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return Auto, err
	}
	if n == 4 && string(magic[:]) == "PAR1" {
		return Parquet, nil
	}
	return CSV, nil
}
