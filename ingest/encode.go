package ingest

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dpsynth/synth/universe"
)

// detach copies the value of a *universe.ValueError out of the batch's
// memory, which is released after the batch; show says whether its
// message prints the value (Options.ShowValues).
func detach(err error, show bool) error {
	var ve *universe.ValueError
	if errors.As(err, &ve) {
		c := *ve
		c.Value = strings.Clone(ve.Value)
		c.Show = show
		return &c
	}
	return err
}

// encodeFunc returns the code of row i of a column (never null).
type encodeFunc func(i int) (int, universe.Repair, error)

// fill writes the codes of rows 0..n-1 of a column (field) for attribute
// attr; bad values go to w.bad.
func (w *worker) fill(attr, field int, arr arrow.Array, n int, enc encodeFunc) {
	a := w.attrs[attr]
	nulls := arr.NullN() > 0
	codes, width, rep := w.codes, w.width, &w.rep[attr]
	for i := range n {
		var (
			c   int
			r   universe.Repair
			err error
		)
		if nulls && arr.IsNull(i) {
			c, err = a.EncodeNull()
		} else {
			c, r, err = enc(i)
		}
		if err != nil {
			w.bad(i, attr, field, err)
			c = 0
		}
		codes[i*width+attr] = c
		rep[r]++
	}
}

// encodeColumn encodes rows 0..n-1 of a column (field) for attribute attr.
func (w *worker) encodeColumn(attr, field int, arr arrow.Array, n int) {
	a, p := w.attrs[attr], w.pol
	switch arr := arr.(type) {
	case *array.String:
		w.fill(attr, field, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeString(arr.Value(i), p) })
	case *array.LargeString:
		w.fill(attr, field, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeString(arr.Value(i), p) })
	case *array.StringView:
		w.fill(attr, field, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeString(arr.Value(i), p) })
	case *array.Int8:
		fillInts(w, attr, field, arr, n, arr.Int8Values())
	case *array.Int16:
		fillInts(w, attr, field, arr, n, arr.Int16Values())
	case *array.Int32:
		fillInts(w, attr, field, arr, n, arr.Int32Values())
	case *array.Int64:
		fillInts(w, attr, field, arr, n, arr.Int64Values())
	case *array.Uint8:
		fillInts(w, attr, field, arr, n, arr.Uint8Values())
	case *array.Uint16:
		fillInts(w, attr, field, arr, n, arr.Uint16Values())
	case *array.Uint32:
		fillInts(w, attr, field, arr, n, arr.Uint32Values())
	case *array.Uint64:
		v := arr.Uint64Values()
		w.fill(attr, field, arr, n, func(i int) (int, universe.Repair, error) {
			if v[i] > math.MaxInt64 {
				return a.EncodeFloat(float64(v[i]), p)
			}
			return a.EncodeInt(int64(v[i]), p)
		})
	case *array.Float32:
		v := arr.Float32Values()
		w.fill(attr, field, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeFloat(float64(v[i]), p) })
	case *array.Float64:
		v := arr.Float64Values()
		w.fill(attr, field, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeFloat(v[i], p) })
	case *array.Dictionary:
		w.fillDict(attr, field, arr, n)
	default:
		w.fill(attr, field, arr, n, func(i int) (int, universe.Repair, error) { return encodeTyped(a, arr, i, p) })
	}
}

// encodeTyped encodes row i of a boolean, date, timestamp or decimal
// column.
func encodeTyped(a *universe.Attribute, arr arrow.Array, i int, p universe.Policy) (int, universe.Repair, error) {
	switch arr := arr.(type) {
	case *array.Boolean:
		return a.EncodeBool(arr.Value(i))
	case *array.Date32:
		return a.EncodeDay(int64(arr.Value(i)), p)
	case *array.Date64:
		ms := int64(arr.Value(i))
		day := ms / 86400000
		if ms%86400000 < 0 {
			day--
		}
		return a.EncodeDay(day, p)
	case *array.Timestamp:
		tt := arr.DataType().(*arrow.TimestampType)
		t := arr.Value(i).ToTime(tt.Unit)
		if tt.TimeZone == "" {
			return a.EncodeWallClock(t, p)
		}
		return a.EncodeTime(t, p)
	case *array.Decimal32, *array.Decimal64, *array.Decimal128, *array.Decimal256:
		return a.EncodeFloat(decimalAt(arr, i), p)
	}
	panic(fmt.Sprintf("ingest: column type %s passed the type check", arr.DataType()))
}

// decimalAt returns value i of a decimal column as the nearest float64.
func decimalAt(arr arrow.Array, i int) float64 {
	switch arr := arr.(type) {
	case *array.Decimal32:
		return arr.Value(i).ToFloat64(arr.DataType().(arrow.DecimalType).GetScale())
	case *array.Decimal64:
		return arr.Value(i).ToFloat64(arr.DataType().(arrow.DecimalType).GetScale())
	case *array.Decimal128:
		return arr.Value(i).ToFloat64(arr.DataType().(arrow.DecimalType).GetScale())
	case *array.Decimal256:
		return arr.Value(i).ToFloat64(arr.DataType().(arrow.DecimalType).GetScale())
	}
	panic("ingest: not a decimal column")
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32
}

func fillInts[T integer](w *worker, attr, field int, arr arrow.Array, n int, v []T) {
	a, p := w.attrs[attr], w.pol
	w.fill(attr, field, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeInt(int64(v[i]), p) })
}

// fillDict encodes a dictionary column: each dictionary entry is encoded
// once, on first use, so entries no row uses are never checked.
func (w *worker) fillDict(attr, field int, arr *array.Dictionary, n int) {
	a, p := w.attrs[attr], w.pol
	dict := arr.Dictionary()
	m := dict.Len()
	if cap(w.dict) < m {
		w.dict, w.dictRep = make([]int, m), make([]universe.Repair, m)
	}
	dc, dr := w.dict[:m], w.dictRep[:m]
	for k := range dc {
		dc[k] = -1
	}
	w.fill(attr, field, arr, n, func(i int) (int, universe.Repair, error) {
		k := arr.GetValueIndex(i)
		if dc[k] < 0 {
			c, r, err := encodeAt(a, dict, k, p)
			if err != nil {
				return c, r, err
			}
			dc[k], dr[k] = c, r
		}
		return dc[k], dr[k], nil
	})
}

// encodeAt encodes value i of any supported column (the slow path, used
// for dictionary entries).
func encodeAt(a *universe.Attribute, arr arrow.Array, i int, p universe.Policy) (int, universe.Repair, error) {
	if arr.IsNull(i) {
		c, err := a.EncodeNull()
		return c, universe.NoRepair, err
	}
	switch arr := arr.(type) {
	case *array.String:
		return a.EncodeString(arr.Value(i), p)
	case *array.LargeString:
		return a.EncodeString(arr.Value(i), p)
	case *array.StringView:
		return a.EncodeString(arr.Value(i), p)
	case *array.Uint64:
		if v := arr.Value(i); v > math.MaxInt64 {
			return a.EncodeFloat(float64(v), p)
		}
		return a.EncodeInt(int64(arr.Value(i)), p)
	case *array.Float32:
		return a.EncodeFloat(float64(arr.Value(i)), p)
	case *array.Float64:
		return a.EncodeFloat(arr.Value(i), p)
	}
	if v, ok := intAt(arr, i); ok {
		return a.EncodeInt(v, p)
	}
	return encodeTyped(a, arr, i, p)
}

func intAt(arr arrow.Array, i int) (int64, bool) {
	switch arr := arr.(type) {
	case *array.Int8:
		return int64(arr.Value(i)), true
	case *array.Int16:
		return int64(arr.Value(i)), true
	case *array.Int32:
		return int64(arr.Value(i)), true
	case *array.Int64:
		return arr.Value(i), true
	case *array.Uint8:
		return int64(arr.Value(i)), true
	case *array.Uint16:
		return int64(arr.Value(i)), true
	case *array.Uint32:
		return int64(arr.Value(i)), true
	}
	return 0, false
}

// encodeCounts reads rows 0..n-1 of the count column (field) into
// w.weights; bad counts go to w.bad.
func (w *worker) encodeCounts(field int, arr arrow.Array, n int) {
	d, isDict := arr.(*array.Dictionary)
	for i := range n {
		var (
			c   int64
			err error
		)
		switch {
		case isDict && d.IsNull(i):
			err = badCount("", true)
		case isDict:
			c, err = countAt(d.Dictionary(), d.GetValueIndex(i))
		default:
			c, err = countAt(arr, i)
		}
		if err != nil {
			w.bad(i, -1, field, err)
			c = 0
		}
		w.weights[i] = c
	}
}

// countAt returns the count in value i of a count column.
func countAt(arr arrow.Array, i int) (int64, error) {
	if arr.IsNull(i) {
		return 0, badCount("", true)
	}
	switch arr := arr.(type) {
	case *array.String:
		return parseCount(arr.Value(i))
	case *array.LargeString:
		return parseCount(arr.Value(i))
	case *array.StringView:
		return parseCount(arr.Value(i))
	case *array.Uint64:
		if v := arr.Value(i); v > math.MaxInt64 {
			return 0, badCount(strconv.FormatUint(v, 10), false)
		}
		return int64(arr.Value(i)), nil
	case *array.Float32:
		return floatCount(float64(arr.Value(i)))
	case *array.Float64:
		return floatCount(arr.Value(i))
	}
	if v, ok := intAt(arr, i); ok {
		if v < 0 {
			return 0, badCount(strconv.FormatInt(v, 10), false)
		}
		return v, nil
	}
	panic(fmt.Sprintf("ingest: column type %s passed the type check", arr.DataType()))
}

// parseCount parses a textual count: a non-negative integer, written as
// an integer or as an integral float ("12", "12.0", "1.2e1").
func parseCount(s string) (int64, error) {
	t := strings.Trim(s, " \t") // the slow path: counts are few next to values
	if v, err := strconv.ParseInt(t, 10, 64); err == nil {
		if v < 0 {
			return 0, badCount(s, false)
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" {
		return 0, badCount(s, t == "")
	}
	c, err := floatCount(f)
	if err != nil {
		return 0, badCount(s, false)
	}
	return c, nil
}

func floatCount(f float64) (int64, error) {
	if !(f >= 0) || f != math.Trunc(f) || f >= 9.2233720368547758e18 {
		return 0, badCount(strconv.FormatFloat(f, 'g', -1, 64), false)
	}
	return int64(f), nil
}

func badCount(v string, missing bool) error {
	if missing {
		return fmt.Errorf("%w, got a missing value", ErrBadCount)
	}
	return fmt.Errorf("%w, got %q", ErrBadCount, strings.Clone(v))
}
