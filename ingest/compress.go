package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Compressed CSV is recognised by its first bytes, not by its name.
var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// maxZstdWindow bounds the memory a zstd stream may ask for (its window):
// 128 MiB covers every level of the zstd command line but --long=28+.
const maxZstdWindow = 128 << 20

func newPeekReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 1<<16) }

// srcReader remembers the first error of the underlying reader other than
// io.EOF, so that a failure of the decompressor can be told from a failure
// of the disk.
type srcReader struct {
	r   io.Reader
	err error
}

func (s *srcReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// corruptError is a compressed stream that cannot be decompressed: bad
// data, not an I/O error.
type corruptError struct {
	kind string
	err  error
}

func (e *corruptError) Error() string { return fmt.Sprintf("corrupt %s stream: %v", e.kind, e.err) }
func (e *corruptError) Unwrap() error { return e.err }

// unpacked is the output of a decompressor; its errors that are not the
// underlying reader's become *corruptError.
type unpacked struct {
	r    io.Reader
	src  *srcReader
	kind string
}

func (u *unpacked) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if err != nil && err != io.EOF && u.src.err == nil {
		err = &corruptError{kind: u.kind, err: err}
	}
	return n, err
}

// decompress returns the CSV text of br: br itself, or a decompressor when
// it starts with the gzip or zstd magic. close releases the decompressor.
// src is the reader under br.
func decompress(br *bufio.Reader, src *srcReader) (r io.Reader, kind string, close func(), err error) {
	magic, _ := br.Peek(4)
	wrap := func(kind string, err error) error {
		if src.err != nil {
			return src.err
		}
		return &corruptError{kind: kind, err: err}
	}
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, "gzip", nil, wrap("gzip", err)
		}
		return &unpacked{r: zr, src: src, kind: "gzip"}, "gzip", func() { zr.Close() }, nil
	case bytes.HasPrefix(magic, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow),
			zstd.WithDecoderMaxMemory(1<<40))
		if err != nil {
			return nil, "zstd", nil, wrap("zstd", err)
		}
		return &unpacked{r: zr, src: src, kind: "zstd"}, "zstd", zr.Close, nil
	}
	return br, "", func() {}, nil
}

// streamErr classifies an error met while reading the CSV text: a corrupt
// compressed stream is bad data, anything else an I/O error.
func streamErr(name string, err error) error {
	var ce *corruptError
	if errors.As(err, &ce) {
		return &DataError{File: name, Err: fmt.Errorf("%w: %v", ErrMalformed, ce)}
	}
	return &ReadError{File: name, Err: err}
}
