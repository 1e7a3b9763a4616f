package ingest

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dpsynth/synth/contrib"
	"github.com/dpsynth/synth/universe"
)

// Contribution bounding in the file reader. With Options.PrivacyUnit the
// workers do not count rows: they add each row's (unit ID, cell) to a
// grouping shared by every job and every part file, sharded by the first
// byte of the unit ID. When the read is complete the grouping applies
// contrib.Keep to each unit and counts the kept rows (and, for the internal
// report, every row). The result does not depend on the order of the rows,
// the part files, the workers or the batches.
//
// Memory: one entry per distinct (unit, cell) pair, about UnitEntryBytes
// bytes each. When the entries exceed Options.UnitMemory they are written
// to 256 partition files (by the unit ID's first byte, so that a unit's
// entries all land in one partition) under a temporary folder in
// Options.SpillDir, and the partitions are grouped one at a time at the end;
// a partition that alone exceeds UnitMemory is a *MemoryError.

// DefaultUnitMemory is the grouping's memory when Options.UnitMemory is 0.
const DefaultUnitMemory = 1 << 30

// unitShards is the number of shards and spill partitions.
const unitShards = 256

// entryOverhead is the memory of a grouping entry beyond its key: the map's
// slot (string header and count), the key's allocation rounding and the
// map's growth headroom.
const entryOverhead = 72

// ErrNullUnit is the error of a row whose privacy unit is null or empty.
var ErrNullUnit = errors.New("the privacy unit is null: every row must name its unit")

// UnitEntryBytes is the memory the grouping needs per distinct (unit, cell)
// pair of a table over dom: the 16-byte unit ID, the cell's codes (at most
// 5 bytes each) and the map's overhead.
func UnitEntryBytes(dom *universe.Domain) uint64 {
	return uint64(contribIDLen + 5*dom.Len() + entryOverhead)
}

const contribIDLen = len(contrib.ID{})

// MemoryError is a read refused because its grouping by privacy unit needs
// more memory than it was given, even partition by partition.
type MemoryError struct {
	File  string
	Need  uint64 // bytes of the largest partition
	Limit uint64 // Options.UnitMemory
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("%s: grouping the rows by privacy unit needs more than %s for one of its %d partitions, over the %s it may use; raise --memory-cap",
		e.File, sizeText(e.Need), unitShards, sizeText(e.Limit))
}

// sizeText writes a byte count in B, KiB, MiB or GiB.
func sizeText(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// UnitSummary describes how many rows the units have: internal statistics
// of the private data (not DP), for the operator choosing K.
type UnitSummary struct {
	Units  int64 `json:"units"`
	Rows   int64 `json:"rows"`
	Min    int64 `json:"min"`
	Median int64 `json:"median"`
	P90    int64 `json:"p90"`
	P99    int64 `json:"p99"`
	Max    int64 `json:"max"`
	// Ks lists, for K = 1, 2, 4, … up to the largest unit, the share of rows
	// a bound of K keeps and the share of units it truncates.
	Ks []KShare `json:"k"`
}

// KShare is what a bound of K rows per unit keeps.
type KShare struct {
	K         int64   `json:"k"`
	RowsKept  float64 `json:"rows_kept"`
	Truncated float64 `json:"units_truncated"`
}

// unitCheck checks the privacy-unit options against the domain.
func (o *Options) unitCheck(dom *universe.Domain) error {
	if o.PrivacyUnit == "" {
		if o.MaxRowsPerUnit != 0 {
			return errors.New("ingest: MaxRowsPerUnit without a PrivacyUnit")
		}
		return nil
	}
	if o.MaxRowsPerUnit < 1 {
		return fmt.Errorf("ingest: privacy unit %q: MaxRowsPerUnit = %d, want at least 1", o.PrivacyUnit, o.MaxRowsPerUnit)
	}
	if err := o.UnitSalt.Check(); err != nil {
		return fmt.Errorf("ingest: privacy unit %q: %w", o.PrivacyUnit, err)
	}
	if _, ok := dom.Index(o.PrivacyUnit); ok {
		return &DataError{Column: o.PrivacyUnit, Err: fmt.Errorf("%w: %q is the privacy unit and an attribute of the domain; a unit's identifier is never released: leave it out of the domain", ErrUnitConflict, o.PrivacyUnit)}
	}
	if o.CountColumn != "" && o.CountColumn == o.PrivacyUnit {
		return &DataError{Column: o.PrivacyUnit, Err: fmt.Errorf("%w: %q names both the count column and the privacy unit", ErrUnitConflict, o.PrivacyUnit)}
	}
	return nil
}

// withUnits runs read with a grouping by privacy unit when the options name
// one (else read alone), and returns the bounded counts with the stats.
func withUnits(ctx context.Context, name string, dom *universe.Domain, opts Options,
	read func(Options) (*universe.Counts, *Stats, error)) (*universe.Counts, *Stats, error) {
	if opts.PrivacyUnit == "" || opts.grouping != nil {
		if err := opts.unitCheck(dom); err != nil {
			return nil, nil, err
		}
		return read(opts)
	}
	if err := opts.unitCheck(dom); err != nil {
		if de, ok := err.(*DataError); ok {
			de.File = name
		}
		return nil, nil, err
	}
	g := newGrouping(dom, &opts, name)
	defer g.close()
	opts.grouping = g
	_, st, err := read(opts)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	c, err := g.finish(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	return c, st, nil
}

// grouping holds every row's (unit, cell) with its count.
type grouping struct {
	dom       *universe.Domain
	k         int64
	salt      contrib.Salt
	budget    int64
	file      string
	spillRoot string
	workers   int

	mu     sync.RWMutex // held for writing while spilling
	shards [unitShards]groupShard
	bytes  atomic.Int64

	spillDir string
	spills   [unitShards]*spillFile
	spillErr error
}

type groupShard struct {
	mu sync.Mutex
	m  map[string]int64
}

type spillFile struct {
	f *os.File
	w *bufio.Writer
}

func newGrouping(dom *universe.Domain, o *Options, file string) *grouping {
	g := &grouping{dom: dom, k: int64(o.MaxRowsPerUnit), salt: o.UnitSalt, budget: int64(o.UnitMemory), file: file,
		spillRoot: o.SpillDir, workers: o.workers()}
	if g.budget <= 0 {
		g.budget = DefaultUnitMemory
	}
	for i := range g.shards {
		g.shards[i].m = map[string]int64{}
	}
	return g
}

// key appends a (unit, cell) key to dst: the unit ID, then each code as an
// unsigned varint. Keys sort by unit first.
func unitKey(dst []byte, u *contrib.ID, codes []int) []byte {
	dst = append(dst, u[:]...)
	for _, c := range codes {
		dst = binary.AppendUvarint(dst, uint64(c))
	}
	return dst
}

// add records w rows of unit u in the cell of codes; key is scratch.
func (g *grouping) add(key []byte, w int64) {
	s := &g.shards[key[0]]
	s.mu.Lock()
	if c, ok := s.m[string(key)]; ok {
		s.m[string(key)] = c + w
	} else {
		s.m[string(key)] = w
		g.bytes.Add(int64(len(key) + entryOverhead))
	}
	s.mu.Unlock()
}

// addBatch adds a batch's rows (codes row-major, width per row; weights nil
// for one record per row) under a read lock, and spills afterwards when the
// grouping is over its budget. keys is the caller's scratch.
func (g *grouping) addBatch(ids []contrib.ID, codes []int, width int, weights []int64, key []byte) []byte {
	g.mu.RLock()
	for i := range ids {
		w := int64(1)
		if weights != nil {
			if w = weights[i]; w == 0 {
				continue
			}
		}
		key = unitKey(key[:0], &ids[i], codes[i*width:(i+1)*width])
		g.add(key, w)
	}
	g.mu.RUnlock()
	if g.bytes.Load() > g.budget {
		g.spill()
	}
	return key
}

// spill writes every shard's entries to its partition file and empties the
// shards.
func (g *grouping) spill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.bytes.Load() <= g.budget || g.spillErr != nil {
		return
	}
	if g.spillErr = g.writeShards(); g.spillErr == nil {
		g.bytes.Store(0)
	}
}

func (g *grouping) writeShards() error {
	if g.spillDir == "" {
		dir, err := os.MkdirTemp(g.spillRoot, "synth-units-")
		if err != nil {
			return &ReadError{File: g.file, Err: fmt.Errorf("a folder to spill the grouping by privacy unit: %w", err)}
		}
		g.spillDir = dir
		if spillHook != nil {
			spillHook(dir)
		}
	}
	var rec []byte
	for i := range g.shards {
		s := &g.shards[i]
		if len(s.m) == 0 {
			continue
		}
		sf := g.spills[i]
		if sf == nil {
			f, err := os.CreateTemp(g.spillDir, fmt.Sprintf("part-%03d-", i))
			if err != nil {
				return &ReadError{File: g.file, Err: err}
			}
			sf = &spillFile{f: f, w: bufio.NewWriterSize(f, 1<<16)}
			g.spills[i] = sf
		}
		for k, c := range s.m {
			rec = binary.AppendUvarint(rec[:0], uint64(len(k)))
			rec = append(rec, k...)
			rec = binary.AppendUvarint(rec, uint64(c))
			if _, err := sf.w.Write(rec); err != nil {
				return &ReadError{File: g.file, Err: err}
			}
		}
		s.m = map[string]int64{}
	}
	return nil
}

// spillHook, when set (tests), is called with the spill folder when a read
// starts spilling.
var spillHook func(dir string)

// close removes the spill files.
func (g *grouping) close() {
	for _, sf := range g.spills {
		if sf != nil {
			sf.f.Close()
		}
	}
	if g.spillDir != "" {
		os.RemoveAll(g.spillDir)
	}
}

// finish groups every unit's rows, keeps at most K of each, and returns the
// kept counts; st gets the unbounded counts and the unit statistics.
func (g *grouping) finish(ctx context.Context, st *Stats) (*universe.Counts, error) {
	if g.spillErr != nil {
		return nil, g.spillErr
	}
	spilled := g.spillDir != ""
	if spilled {
		if err := g.writeShards(); err != nil {
			return nil, err
		}
		for _, sf := range g.spills {
			if sf != nil {
				if err := sf.w.Flush(); err != nil {
					return nil, &ReadError{File: g.file, Err: err}
				}
			}
		}
	}
	// The shards are grouped in parallel, each worker into an accumulator
	// of its own (with spilled partitions, each worker holds one partition
	// at a time: the budget is shared).
	accs := make([]*unitAcc, g.workers)
	errs := make([]error, g.workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range accs {
		acc := &unitAcc{dom: g.dom, k: g.k, kept: universe.NewCounts(g.dom), all: universe.NewCounts(g.dom)}
		accs[w] = acc
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= unitShards || ctx.Err() != nil {
					return
				}
				m := g.shards[i].m
				if spilled {
					var err error
					if m, err = g.readPartition(i, g.budget/int64(len(accs))); err != nil {
						errs[w] = err
						return
					}
				}
				if err := acc.group(m); err != nil {
					errs[w] = &DataError{File: g.file, Err: ErrCountOverflows}
					return
				}
				g.shards[i].m = nil
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		for _, e := range errs {
			if e != nil {
				return nil, e
			}
		}
	}
	return unitResult(g.dom, accs, st)
}

// readPartition reads partition i back into a map of at most budget
// bytes.
func (g *grouping) readPartition(i int, budget int64) (map[string]int64, error) {
	m := map[string]int64{}
	sf := g.spills[i]
	if sf == nil {
		return m, nil
	}
	if _, err := sf.f.Seek(0, io.SeekStart); err != nil {
		return nil, &ReadError{File: g.file, Err: err}
	}
	r := bufio.NewReaderSize(sf.f, 1<<16)
	var bytes int64
	var key []byte
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &ReadError{File: g.file, Err: err}
		}
		key = slices.Grow(key[:0], int(n))[:n]
		if _, err := io.ReadFull(r, key); err != nil {
			return nil, &ReadError{File: g.file, Err: err}
		}
		c, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, &ReadError{File: g.file, Err: err}
		}
		if old, ok := m[string(key)]; ok {
			m[string(key)] = old + int64(c)
			continue
		}
		m[string(key)] = int64(c)
		if bytes += int64(len(key) + entryOverhead); bytes > budget {
			st, _ := sf.f.Stat()
			need := uint64(bytes)
			if st != nil {
				need = max(need, uint64(st.Size())) // at least its entries on disk
			}
			return nil, &MemoryError{File: g.file, Need: need, Limit: uint64(budget)}
		}
	}
	return m, nil
}

// unitAcc accumulates the groups' results.
type unitAcc struct {
	dom         *universe.Domain
	k           int64
	kept, all   *universe.Counts
	rowsPerUnit []int64
	dropped     int64
	// Scratch for one unit: its cells' codes (row-major), their texts and
	// where each ends, the cells and their kept counts.
	codes      []int
	text       []byte
	ends       []int
	cells      []contrib.Cell
	keptCounts []int64
}

// group applies the bound to every unit of one shard (keys sorted, so that
// a unit's entries are adjacent and the result is deterministic).
func (a *unitAcc) group(m map[string]int64) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j][:contribIDLen] == keys[i][:contribIDLen] {
			j++
		}
		if err := a.unit(keys[i:j], m); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// unit bounds one unit whose entries are keys.
func (a *unitAcc) unit(keys []string, m map[string]int64) error {
	var u contrib.ID
	copy(u[:], keys[0])
	width := a.dom.Len()
	a.text = a.text[:0]
	a.codes = slices.Grow(a.codes[:0], len(keys)*width)[:len(keys)*width]
	a.ends = a.ends[:0]
	rows := int64(0)
	for i, k := range keys {
		codes := a.codes[i*width : (i+1)*width]
		decodeCell(k[contribIDLen:], codes)
		a.text = contrib.AppendCellText(a.text, codes)
		a.ends = append(a.ends, len(a.text))
		rows += m[k]
	}
	a.cells = a.cells[:0]
	start := 0
	for i, k := range keys {
		a.cells = append(a.cells, contrib.Cell{Text: a.text[start:a.ends[i]], Count: m[k]})
		start = a.ends[i]
	}
	a.keptCounts = slices.Grow(a.keptCounts[:0], len(keys))[:len(keys)]
	contrib.Keep(u, a.k, a.cells, a.keptCounts)
	for i, c := range a.cells {
		codes := a.codes[i*width : (i+1)*width]
		if err := a.all.Add(codes, c.Count); err != nil {
			return err
		}
		if a.keptCounts[i] > 0 {
			if err := a.kept.Add(codes, a.keptCounts[i]); err != nil {
				return err
			}
		}
		a.dropped += c.Count - a.keptCounts[i]
	}
	a.rowsPerUnit = append(a.rowsPerUnit, rows)
	return nil
}

// decodeCell decodes a key's cell (varint codes) into codes.
func decodeCell(b string, codes []int) {
	for i := range codes {
		var v uint64
		for shift := 0; ; shift += 7 {
			c := b[0]
			b = b[1:]
			v |= uint64(c&0x7f) << shift
			if c < 0x80 {
				break
			}
		}
		codes[i] = int(v)
	}
}

// unitResult merges the accumulators' counts in cell order, as every read
// does, and fills the stats.
func unitResult(dom *universe.Domain, accs []*unitAcc, st *Stats) (*universe.Counts, error) {
	var kept, all []*universe.Counts
	var rows []int64
	var dropped int64
	for _, a := range accs {
		kept, all = append(kept, a.kept), append(all, a.all)
		rows = append(rows, a.rowsPerUnit...)
		dropped += a.dropped
	}
	k, err := mergeSorted(dom, kept)
	if err != nil {
		return nil, &DataError{File: st.File, Err: ErrCountOverflows}
	}
	if st.AllCounts, err = mergeSorted(dom, all); err != nil {
		return nil, &DataError{File: st.File, Err: ErrCountOverflows}
	}
	st.Units = int64(len(rows))
	st.UnitRowsDropped = dropped
	st.RowsPerUnit = summarize(rows)
	st.N, st.Distinct = k.Total(), k.Distinct()
	return k, nil
}

// summarize describes the rows per unit.
func summarize(rows []int64) *UnitSummary {
	s := &UnitSummary{Units: int64(len(rows))}
	if len(rows) == 0 {
		return s
	}
	slices.Sort(rows)
	q := func(p float64) int64 { return rows[min(len(rows)-1, int(math.Ceil(p*float64(len(rows))))-1)] }
	for _, r := range rows {
		s.Rows += r
	}
	s.Min, s.Median, s.P90, s.P99, s.Max = rows[0], q(0.5), q(0.9), q(0.99), rows[len(rows)-1]
	for k := int64(1); ; k *= 2 {
		kept, trunc := int64(0), 0
		for _, r := range rows {
			kept += min(r, k)
			if r > k {
				trunc++
			}
		}
		s.Ks = append(s.Ks, KShare{K: k, RowsKept: float64(kept) / float64(s.Rows), Truncated: float64(trunc) / float64(len(rows))})
		if k >= s.Max {
			break
		}
	}
	return s
}

// unitText appends the text of row i of a unit column to dst; ok is false
// for a null or an empty value.
func unitText(dst []byte, arr arrow.Array, i int) ([]byte, bool) {
	if arr.IsNull(i) {
		return dst, false
	}
	n := len(dst)
	switch a := arr.(type) {
	case *array.String:
		dst = append(dst, a.Value(i)...)
	case *array.LargeString:
		dst = append(dst, a.Value(i)...)
	case *array.StringView:
		dst = append(dst, a.Value(i)...)
	case *array.Binary:
		dst = append(dst, a.Value(i)...)
	case *array.Boolean:
		dst = strconv.AppendBool(dst, a.Value(i))
	case *array.Uint64:
		dst = strconv.AppendUint(dst, a.Value(i), 10)
	case *array.Float32:
		dst = strconv.AppendFloat(dst, float64(a.Value(i)), 'g', -1, 32)
	case *array.Float64:
		dst = strconv.AppendFloat(dst, a.Value(i), 'g', -1, 64)
	case *array.Dictionary:
		return unitText(dst, a.Dictionary(), a.GetValueIndex(i))
	default:
		v, ok := intAt(arr, i)
		if !ok {
			panic(fmt.Sprintf("ingest: unit column type %s passed the type check", arr.DataType()))
		}
		dst = strconv.AppendInt(dst, v, 10)
	}
	return dst, len(dst) > n
}

// unitSupported reports whether a column type can identify units.
func unitSupported(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.BINARY:
		return true
	case arrow.DICTIONARY:
		return unitSupported(t.(*arrow.DictionaryType).ValueType)
	}
	return supported(t)
}

// encodeUnits computes the unit ID of rows 0..n-1 of the unit column; a
// null or empty unit goes to w.bad (its value is never recorded).
func (w *worker) encodeUnits(field int, arr arrow.Array, n int) {
	if cap(w.unitIDs) < n {
		w.unitIDs = make([]contrib.ID, n)
	}
	w.unitIDs = w.unitIDs[:n]
	for i := range n {
		var ok bool
		w.unitBuf, ok = unitText(w.unitBuf[:0], arr, i)
		if !ok {
			w.bad(i, -1, field, ErrNullUnit)
			continue
		}
		w.unitIDs[i] = contrib.UnitIDBytes(w.salt, w.unitBuf)
	}
}

// unitColumnErr is the error of a unit column whose type cannot identify
// units.
func unitColumnErr(file string, f arrow.Field) error {
	return &DataError{File: file, Column: f.Name, Err: fmt.Errorf("%w %s for the privacy unit (want strings, integers, floats, booleans or a dictionary of them)", ErrColumnType, f.Type)}
}
