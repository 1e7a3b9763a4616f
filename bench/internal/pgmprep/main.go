// Command pgmprep writes a benchmark protocol's table as integer codes with a
// {"attr": size} domain, the input format of private-pgm's mechanisms, so
// that AIM and MST run on exactly the table and universe that synth bench
// releases (docs/BENCHMARKS.md, "The accuracy suite", has the commands):
//
//	go run ./bench/internal/pgmprep -protocol cps1988 -out DIR
//
// writes DIR/data.csv and DIR/domain.json. Tables that ship encoded are
// copied as they are; the others are read through synth's own ingest
// against their public domain, and every record is written as one row of
// codes (in cell order, not the file's: the mechanisms ignore row order).
// The workload's cells and the errors of a table scored with `synth eval`
// against DIR/data.csv are those of the original domain.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dpsynth/synth/bench"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

func main() {
	name := flag.String("protocol", "", "protocol of synth bench (its table)")
	out := flag.String("out", "", "folder for data.csv and domain.json")
	flag.Parse()
	if *name == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: pgmprep -protocol NAME -out DIR")
		os.Exit(2)
	}
	if err := run(*name, *out); err != nil {
		fmt.Fprintln(os.Stderr, "pgmprep:", err)
		os.Exit(1)
	}
}

func run(name, out string) error {
	p, err := bench.LookupProtocol(name)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "pgmprep")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	data, domain, err := p.Prepare(tmp)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(domain)
	if err != nil {
		return err
	}
	dom, err := universe.ParseDomain(b)
	if err != nil {
		return err
	}
	counts, _, err := ingest.ReadFile(context.Background(), data, dom, ingest.Options{})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeCodes(filepath.Join(out, "data.csv"), counts); err != nil {
		return err
	}
	enc, err := encodedDomain(dom)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "domain.json"), append(enc, '\n'), 0o644)
}

// encodedDomain is dom with every attribute as codes of the same size, in
// the {"attr": size} shorthand that universe.Domain's JSON form takes for
// such domains.
func encodedDomain(dom *universe.Domain) ([]byte, error) {
	attrs := make([]*universe.Attribute, dom.Len())
	for i, a := range dom.Attrs() {
		e, err := universe.NewEncoded(a.Name, a.Size())
		if err != nil {
			return nil, err
		}
		attrs[i] = e
	}
	enc, err := universe.NewDomain(attrs...)
	if err != nil {
		return nil, err
	}
	return json.Marshal(enc)
}

// writeCodes writes each record of c as a row of codes, header first.
func writeCodes(path string, c *universe.Counts) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	dom := c.Domain()
	for i, a := range dom.Attrs() {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString(a.Name)
	}
	w.WriteByte('\n')
	var line []byte
	for i := range c.Distinct() {
		line = line[:0]
		for j, code := range c.Codes(i) {
			if j > 0 {
				line = append(line, ',')
			}
			line = strconv.AppendInt(line, int64(code), 10)
		}
		line = append(line, '\n')
		for range c.Count(i) {
			w.Write(line)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
