package release

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dpsynth/synth/universe"
)

// OutputFormat is the format of the synthetic data file.
type OutputFormat uint8

// Output formats.
const (
	// Parquet (the default): typed columns, the domain (DomainKey) and the
	// manifest (ManifestKey) in the footer's key-value metadata.
	Parquet OutputFormat = iota
	// CSV: a header row, RFC 4180 records, nulls as empty fields, gzip when
	// the file name ends in ".gz"; the domain goes to domain.json next to
	// it.
	CSV
)

var outputFormatNames = [...]string{Parquet: "parquet", CSV: "csv"}

// String returns "parquet" or "csv".
func (f OutputFormat) String() string {
	if int(f) < len(outputFormatNames) {
		return outputFormatNames[f]
	}
	return fmt.Sprintf("OutputFormat(%d)", f)
}

// ParseOutputFormat returns the format called name ("parquet" or "csv").
func ParseOutputFormat(name string) (OutputFormat, error) {
	for i, n := range outputFormatNames {
		if n == strings.ToLower(name) {
			return OutputFormat(i), nil
		}
	}
	return 0, fmt.Errorf("unknown output format %q (want parquet or csv)", name)
}

// OutputSettings choose the synthetic data file. The zero value writes
// synthetic.parquet.
type OutputSettings struct {
	Format OutputFormat
	// SyntheticFile is the file's name in the output folder (a plain
	// name; default synthetic.parquet or synthetic.csv by Format).
	SyntheticFile string
}

// Name returns the synthetic data file's name.
func (s OutputSettings) Name() string {
	switch {
	case s.SyntheticFile != "":
		return s.SyntheticFile
	case s.Format == CSV:
		return SyntheticCSVFile
	}
	return SyntheticFile
}

// Check reports a bad file name (a path, a hidden name, or a name that
// another output of the release uses).
func (s OutputSettings) Check() error {
	if s.Format > CSV {
		return configErrorf("unknown output format %v", s.Format)
	}
	n := s.SyntheticFile
	if n == "" {
		return nil
	}
	switch {
	case n != filepath.Base(n) || strings.ContainsAny(n, `/\`):
		return configErrorf("--synthetic-file %q: give a file name, not a path (the folder is --out)", n)
	case strings.HasPrefix(n, "."):
		return configErrorf("--synthetic-file %q: the name must not start with a dot", n)
	case n == ReportJSONFile || n == ReportHTMLFile || n == ManifestFile || n == DomainFile:
		return configErrorf("--synthetic-file %q: that name is taken by another output of the release", n)
	}
	return nil
}

// Files lists the release's files in commit order: the synthetic data,
// domain.json (CSV), the reports, manifest.json last.
func (s OutputSettings) Files() []string {
	out := []string{s.Name()}
	if s.Format == CSV {
		out = append(out, DomainFile)
	}
	return append(out, ReportJSONFile, ReportHTMLFile, ManifestFile)
}

// NewRowWriter returns the RowWriter of the format to out; the Parquet
// footer gets the manifest (the domain is always there). CSV is gzipped
// when the name ends in ".gz".
func (s OutputSettings) NewRowWriter(out io.Writer, dec *Decoder, manifest []byte) (RowWriter, error) {
	if s.Format == CSV {
		return NewCSVWriter(out, dec, &CSVSettings{Gzip: GzipName(s.Name())}), nil
	}
	var meta [][2]string
	if manifest != nil {
		meta = [][2]string{{ManifestKey, string(manifest)}}
	}
	return NewParquetWriter(out, dec, &ParquetSettings{Metadata: meta})
}

// WriteSynthetic writes the synthetic rows (cells of an indexable
// universe) and, for CSV, domain.json into the output folder.
func (s OutputSettings) WriteSynthetic(ctx context.Context, od *OutDir, dom *universe.Domain, cells []uint32, dec *Decoder, manifest []byte) error {
	return s.WriteSyntheticRows(ctx, od, dom, dec, manifest, func(rw RowWriter) error {
		return WriteCells(ctx, rw, dom, cells)
	})
}

// WriteSyntheticRows writes the synthetic file, whose rows fill streams to
// the writer, and, for CSV, domain.json into the output folder.
func (s OutputSettings) WriteSyntheticRows(ctx context.Context, od *OutDir, dom *universe.Domain, dec *Decoder, manifest []byte, fill func(RowWriter) error) error {
	if err := od.Write(ctx, s.Name(), 0o644, func(w io.Writer) error {
		rw, err := s.NewRowWriter(w, dec, manifest)
		if err != nil {
			return err
		}
		if err := fill(rw); err != nil {
			return err
		}
		return rw.Close()
	}); err != nil {
		return err
	}
	if s.Format != CSV {
		return nil
	}
	js, err := csvDomainJSON(dom)
	if err != nil {
		return err
	}
	return od.Write(ctx, DomainFile, 0o644, writeBytes(js))
}

// csvDomainJSON is the domain.json that describes a synthetic CSV file: the
// domain with each null token replaced by the empty string, since the CSV
// writes nulls as empty fields (so that synth inspect and synth eval read
// the release's own files back). An attribute that declares the empty
// string as a category keeps its token (its nulls and that category are
// both empty fields in the CSV: see CSVWriter).
func csvDomainJSON(dom *universe.Domain) ([]byte, error) {
	csvDom, err := dom.WithNullTokens(func(a *universe.Attribute) string {
		if slices.Contains(a.Values, "") {
			return a.NullToken
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	js, err := csvDom.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, js, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
