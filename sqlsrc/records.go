package sqlsrc

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Records reads the rows of a table or query as Arrow record batches of
// text columns, for a reader that decides itself what the values are (the
// domain draft). Every value is its text as ingest would read it in a CSV
// file: dates as YYYY-MM-DD, timestamps in RFC 3339, booleans as
// true/false, numbers in Go's shortest form; SQL NULL is a null.
//
// Unlike Source, whose queries keep the rows in the engine, Records moves
// every row of the selected columns to this process, batch by batch.
type Records struct {
	db     *sql.DB
	rows   *sql.Rows
	dsn    string
	scrub  scrubber
	schema *arrow.Schema
	types  []string
	batch  int
	vals   []any
	b      *array.RecordBuilder
	err    error
}

// OpenRecords runs SELECT * over the table or query (o.Table, o.Query) and
// returns its reader; columns, when not nil, selects the columns read
// (every one otherwise). With rows false it reads only the schema: Next
// returns io.EOF at once.
func OpenRecords(ctx context.Context, dsn string, o *Options, columns []string, rows bool) (*Records, error) {
	d := o.Dialect
	if d == Detect {
		var err error
		if d, err = DetectDialect(dsn); err != nil {
			return nil, err
		}
	}
	from, err := fromClause(d, o.Table, o.Query)
	if err != nil {
		return nil, err
	}
	r := &Records{dsn: RedactDSN(dsn), batch: 1 << 14}
	if r.db, r.scrub, err = openDB(dsn, d, r.dsn); err != nil {
		return nil, err
	}
	sel := "*"
	if columns != nil {
		q := make([]string, len(columns))
		for i, c := range columns {
			q[i] = d.ident(c)
		}
		sel = strings.Join(q, ", ")
	}
	q := "SELECT " + sel + " FROM " + from
	if !rows {
		q += " WHERE 1 = 0 LIMIT 0"
	}
	r.rows, err = r.db.QueryContext(ctx, q)
	if err != nil {
		r.db.Close()
		return nil, r.fail(ctx, "query", err)
	}
	cts, err := r.rows.ColumnTypes()
	if err != nil {
		r.Close()
		return nil, r.fail(ctx, "query (columns)", err)
	}
	fields := make([]arrow.Field, len(cts))
	for i, ct := range cts {
		fields[i] = arrow.Field{Name: ct.Name(), Type: arrow.BinaryTypes.String, Nullable: true}
		r.types = append(r.types, strings.ToUpper(ct.DatabaseTypeName()))
	}
	r.schema = arrow.NewSchema(fields, nil)
	r.vals = make([]any, len(cts))
	return r, nil
}

func (r *Records) fail(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &SourceError{Op: op, Source: r.dsn, Err: r.scrub.err(err)}
}

// Schema is the result's columns, every one a nullable string.
func (r *Records) Schema() *arrow.Schema { return r.schema }

// DatabaseTypes are the engine's type names of the columns.
func (r *Records) DatabaseTypes() []string { return r.types }

// Next returns the next batch of rows, or io.EOF after the last. The
// caller releases each batch.
func (r *Records) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.b == nil {
		r.b = array.NewRecordBuilder(memory.DefaultAllocator, r.schema)
	}
	ptrs := make([]any, len(r.vals))
	for i := range r.vals {
		ptrs[i] = &r.vals[i]
	}
	n := 0
	for n < r.batch && r.rows.Next() {
		if err := r.rows.Scan(ptrs...); err != nil {
			r.err = r.fail(ctx, "read", err)
			return nil, r.err
		}
		for i, v := range r.vals {
			sb := r.b.Field(i).(*array.StringBuilder)
			if t, ok := text(v, r.types[i]); ok {
				sb.Append(t)
			} else {
				sb.AppendNull()
			}
		}
		n++
	}
	if err := r.rows.Err(); err != nil {
		r.err = r.fail(ctx, "read", err)
		return nil, r.err
	}
	if n == 0 {
		r.err = io.EOF
		return nil, io.EOF
	}
	return r.b.NewRecordBatch(), nil
}

// text is the CSV text of a scanned value (false for NULL).
func text(v any, dbType string) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case []byte:
		return string(v), true
	case bool:
		return strconv.FormatBool(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case time.Time:
		if dbType == "DATE" || dbType == "DATE32" {
			return v.Format(time.DateOnly), true
		}
		if dbType == "TIMESTAMP" || dbType == "TIMESTAMP WITHOUT TIME ZONE" {
			// A wall clock: no offset (the draft reads it in its zone).
			return v.Format("2006-01-02T15:04:05.999999999"), true
		}
		return v.Format(time.RFC3339Nano), true
	}
	// Other driver types (ClickHouse gives its own widths, and pointers for
	// Nullable columns).
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return "", false
		}
		return text(rv.Elem().Interface(), dbType)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10), true
	case reflect.Float32:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 32), true
	case reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 64), true
	case reflect.String:
		return rv.String(), true
	}
	return fmt.Sprint(v), true
}

// Close ends the query and closes the connections.
func (r *Records) Close() error {
	if r.b != nil {
		r.b.Release()
	}
	if r.rows != nil {
		r.rows.Close()
	}
	return r.db.Close()
}
