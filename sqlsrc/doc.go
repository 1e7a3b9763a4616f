// Package sqlsrc counts a table where it lives: in a SQL engine. The
// measurement-based solvers and the factored model need only marginal count
// tables, and every SQL engine computes them with GROUP BY; billions of rows
// stay in the engine and only count tables leave it.
//
// # Sources
//
// Open connects to PostgreSQL (postgres://…, driver pgx) or ClickHouse
// (clickhouse://…, native protocol, driver clickhouse-go v2; a Distributed
// table over a cluster works like any table) and reads a table or the result
// of a query. Source.Check validates every value in one query, Marginals
// counts a list of attribute sets in one query, Histogram counts the full
// histogram with one GROUP BY. Queries stop when the context is cancelled.
// Credentials come from the DSN or the drivers' environment (PGPASSWORD,
// PGUSER, … for PostgreSQL; CLICKHOUSE_USER, CLICKHOUSE_PASSWORD for
// ClickHouse when the DSN has no user); no message shows a password
// (RedactDSN).
//
// For engines without a driver here (DuckDB, Spark SQL, BigQuery, Trino, or
// any of the above run elsewhere), Compile prints the same SQL; its result,
// saved as CSV or Parquet, is read back by ReadMarginalCounts.
//
// # The domain in SQL
//
// The domain is public: it is compiled into one SQL expression per
// attribute that yields the attribute's integer code (0..size−1) exactly as
// package ingest encodes the same value, or −1 for a value outside the
// domain. Codes are never NULL: an SQL NULL gets the null code of a
// nullable attribute, and −1 otherwise.
//
//   - Categorical: the value's text compared with each declared value (no
//     trimming, as in ingest); the null token gives the null code; an
//     unknown non-empty value gives the declared "other" under
//     Policy.UnknownToOther, −1 otherwise.
//   - Integer, numeric, encoded: a text column is trimmed of ASCII spaces
//     and tabs and parsed as a decimal number (integers must be integral:
//     "5.0" and "1e3" are accepted as in ingest); integer and float columns
//     are used as they are. Values outside the bounds are clamped under
//     Policy.Clamp; integers fall into buckets (v − min) / width, reals into
//     the bins [Edges[i], Edges[i+1]) with the last bin closed, compared as
//     doubles like ingest's float64.
//   - Boolean: a text is trimmed, lower-cased and compared with true/t/yes/
//     y/1 and false/f/no/n/0; a boolean column is used as it is; an integer
//     column must hold 0 or 1.
//   - Date: a DATE column gives its day number (days since 1970-01-01); a
//     timestamp column its date (in UTC for an instant); a text must read
//     YYYY-MM-DD and is cast to DATE. Bins are compared on day numbers.
//   - Timestamp: an instant column (TIMESTAMP WITH TIME ZONE, ClickHouse's
//     DateTime) gives its seconds since the epoch; a wall-clock column
//     (TIMESTAMP WITHOUT TIME ZONE) and a text without an offset are read in
//     the attribute's time zone, a text with an offset (Z, +02:00) at that
//     offset. Bins are compared on seconds, as doubles.
//
// Compile knows no column types, so it treats every column as text (the
// rules of ingest's CSV path); a Source learns the column types when it
// opens and uses the typed rules (ingest's Parquet path) for integer and
// float columns. Known differences from ingest: categorical attributes
// accept the text of any column type (ingest rejects numbers for them);
// hexadecimal and "inf"/"nan" texts are not numbers in SQL (ingest rejects
// the latter too); a text that looks like a date but is not one (30
// February) fails the whole query in PostgreSQL (its cast throws) and is
// moved to the next valid day by ClickHouse's toDateOrZero; integer bounds
// must lie within ±2^52; outside PostgreSQL
// texts are parsed as doubles, so integers beyond 2^53 round.
// Identifiers and string literals are quoted per dialect, so any attribute
// name or category (quotes, backslashes, semicolons, unicode) is safe; NUL
// bytes are refused.
//
// # Counting
//
// Marginals of several sets run as one query: GROUP BY GROUPING SETS where
// the engine has it (PostgreSQL, DuckDB, Spark, BigQuery, Trino), a UNION
// ALL of one GROUP BY per set where not (ClickHouse: the 18.16 of Debian
// has no GROUPING SETS). Because codes are never NULL, a NULL code column
// in a result row means the attribute was grouped out: the set of a row is
// the set of its non-NULL columns, and no GROUPING() call is needed. Cells
// the engine does not return are zero.
//
// Bad data is caught in the engine: Check counts the out-of-domain values
// per column with one example, and a *DataError names the first bad column
// (the CLI exits with 65) unless the repairs of the Policy apply, which
// are done in SQL (Report counts them). Connection and query failures are
// *SourceError values (exit 69).
//
// # Marginal count files
//
// The result of a compiled query saved as CSV (with a header) or Parquet is
// a marginal count file, read by ReadMarginalCounts ("synth release
// --marginal-counts FILE"). Its columns:
//
//   - one column per attribute used by the sets, named as the attribute,
//     holding the integer code (0..size−1) of the row's cell, or an empty
//     field / NULL when the attribute is grouped out of the row's set (in
//     CSV, "", `\N`, "NULL" and "null" are all NULL);
//   - the column "count", a non-negative integer.
//
// Attributes without a column are grouped out of every row. A row's set
// is the set of its non-NULL columns; rows of the same cell add up. A set
// the file lacks is computed from the smallest superset it holds; every
// set must total the same n.
//
// Privacy: nothing here learns anything from the data but counts: the
// domain (categories, bounds, bins) is public input compiled into the SQL,
// and the counts returned are the private input of the mechanisms
// downstream, exactly like ingest's.
package sqlsrc
