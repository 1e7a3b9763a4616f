package ingest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpsynth/synth/universe"
)

// ReadFile counts the table in the file at path over dom. The format is
// opts.Format, or detected when that is Auto. A file that cannot be opened
// gives the error of os.Open (a *fs.PathError); see ReadCSV and ReadParquet
// for the rest.
func ReadFile(ctx context.Context, path string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
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

// Detect returns the format of a file from its name and first bytes:
// Parquet for names ending in .parquet, .parq or .pq and for content
// starting with the Parquet magic "PAR1", CSV otherwise. It leaves r at
// its start.
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
