// Package ingest reads a table and counts it over a data universe.
//
// It streams CSV files (with a header row) and Parquet files through Apache
// Arrow record batches, checks every value against the public
// universe.Domain, encodes each row to its cell and accumulates a sparse
// universe.Counts histogram. Memory stays bounded by the batch size, the
// number of workers and the number of distinct cells seen, whatever the
// number of rows.
//
// ReadFile also reads inputs as warehouses and Spark write them: a folder
// or a glob pattern of part files (CSV or Parquet, one format; _SUCCESS and
// other names starting with "_" or "." ignored; read in name order), and
// "-" for CSV on standard input. CSV compressed with gzip or zstd is
// recognised by its first bytes, whatever its name.
//
// Columns are matched to attributes by header (or Parquet field) name, in
// any order. A missing or duplicate column is an error, and so is an extra
// column unless Options ignore it (IgnoreExtraColumns, or Columns and
// ExcludeColumns, which also select the attributes through
// Options.Domain). Parquet columns that are not used are not read. With
// Options.CountColumn set, the input is pre-aggregated: the attribute columns
// plus a column of non-negative integer counts, as produced by
//
//	SELECT a, b, c, COUNT(*) AS count FROM t GROUP BY a, b, c
//
// in any SQL engine; duplicate cells across rows add up and zero counts are
// allowed (they are checked but add no cell).
//
// Typed columns (Parquet or Arrow) are encoded with the matching
// universe.Attribute method: strings (also dictionary-encoded) with
// EncodeString, integers with EncodeInt, floats with EncodeFloat. An Arrow
// null goes to Attribute.EncodeNull, which is an error unless the attribute
// declares a null token. In CSV every field is text: the declared null token
// is the only missing value.
//
// Bad values do not stop the read: every value is checked, and the read
// fails with one *DataError that names the file, the 1-based data row (the
// header is not counted, blank CSV lines are skipped) and the column of the
// first bad value, lists the next ones in More (the first MaxReported of
// the input in all, in file, row and column order whatever the number of
// workers), counts them all in Total and suggests the repairs that would
// apply in Hints. A malformed row or a problem with the columns ends the
// read at once. Failures of the underlying reader are *ReadError values,
// so that callers can tell bad data from a bad disk. Nothing is dropped
// silently: the only repairs are the explicit, row-wise ones of
// universe.Policy (clamp numeric values, map unknown categories to the
// declared other value), and Stats counts them per column.
//
// Privacy: ingest never learns categories, bounds or bins from the data; it
// only checks the data against the public domain. The counts it returns are
// the private input of every mechanism downstream.
package ingest
