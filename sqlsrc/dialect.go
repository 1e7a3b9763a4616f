package sqlsrc

import (
	"fmt"
	"strconv"
	"strings"
)

// Dialect is the SQL dialect of an engine.
type Dialect uint8

// Dialects. Postgres and ClickHouse have drivers here (Open); the others
// are only compiled (Compile, "synth sql") for engines run elsewhere.
const (
	// Detect means: detect the dialect from the DSN's scheme (Open only).
	Detect Dialect = iota
	Postgres
	ClickHouse
	DuckDB
	Spark
	BigQuery
	Trino
)

var dialectNames = [...]string{Detect: "detect", Postgres: "postgres", ClickHouse: "clickhouse", DuckDB: "duckdb",
	Spark: "spark", BigQuery: "bigquery", Trino: "trino"}

func (d Dialect) String() string {
	if int(d) < len(dialectNames) {
		return dialectNames[d]
	}
	return fmt.Sprintf("Dialect(%d)", d)
}

// Dialects lists the names of the dialects Compile knows.
func Dialects() []string { return append([]string(nil), dialectNames[1:]...) }

// ParseDialect returns the dialect called s (case-insensitive; "postgresql"
// and "pg" are accepted for postgres).
func ParseDialect(s string) (Dialect, error) {
	switch strings.ToLower(s) {
	case "postgresql", "pg":
		return Postgres, nil
	}
	for i, n := range dialectNames {
		if i > 0 && strings.EqualFold(s, n) {
			return Dialect(i), nil
		}
	}
	return Detect, fmt.Errorf("unknown SQL dialect %q (want one of %s)", s, strings.Join(Dialects(), ", "))
}

// groupingSets reports whether the dialect has GROUPING SETS. ClickHouse
// has it since 20.x, but the 18.16 of Debian does not, so ClickHouse gets
// a UNION ALL of GROUP BYs.
func (d Dialect) groupingSets() bool { return d != ClickHouse }

// ident quotes an identifier.
func (d Dialect) ident(s string) string {
	switch d {
	case ClickHouse, BigQuery:
		return "`" + backslashEscape(s, '`') + "`"
	case Spark:
		return "`" + strings.ReplaceAll(s, "`", "``") + "`"
	default: // Postgres, DuckDB, Trino: standard SQL
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
}

// str quotes a string literal.
func (d Dialect) str(s string) string {
	switch d {
	case Postgres:
		// An escape string: its meaning does not depend on
		// standard_conforming_strings.
		if strings.ContainsRune(s, '\\') {
			return "E'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
		}
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	case ClickHouse, BigQuery, Spark:
		return "'" + backslashEscape(s, '\'') + "'"
	default: // DuckDB, Trino: standard SQL, no backslash escapes
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
}

// backslashEscape escapes backslashes, the quote q and control characters
// for dialects whose quoted strings take backslash escapes.
func backslashEscape(s string, q byte) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == q:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// text converts any value to its text.
func (d Dialect) text(x string) string {
	switch d {
	case Postgres:
		return "CAST(" + x + " AS TEXT)"
	case ClickHouse:
		return "toString(" + x + ")"
	case Spark, BigQuery:
		return "CAST(" + x + " AS STRING)"
	default:
		return "CAST(" + x + " AS VARCHAR)"
	}
}

// trim drops surrounding ASCII spaces and tabs (as ingest does for
// integer, numeric and encoded attributes).
func (d Dialect) trim(x string) string {
	switch d {
	case Postgres, DuckDB:
		return "TRIM(BOTH " + d.str(" \t") + " FROM " + x + ")"
	case ClickHouse:
		return "replaceRegexpAll(" + x + ", " + d.str("^[ \t]+|[ \t]+$") + ", '')"
	case BigQuery:
		return "TRIM(" + x + ", " + d.str(" \t") + ")"
	default: // Spark, Trino
		return "regexp_replace(" + x + ", " + d.str("^[ \t]+|[ \t]+$") + ", '')"
	}
}

// numberRE matches the decimal numbers ingest parses (after trimming).
const numberRE = `^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$`

// isNumber is true when the text t is a decimal number.
func (d Dialect) isNumber(t string) string {
	if d == DuckDB { // the anchored pattern, as the queries have always written it
		return "regexp_full_match(" + t + ", " + d.str(numberRE) + ")"
	}
	return d.matches(t, numberRE)
}

// number converts a text that isNumber accepts to a number: exact NUMERIC
// in PostgreSQL, a double elsewhere. ClickHouse evaluates every branch of
// a CASE, so its conversion must not throw on other texts; the dialects
// compiled for engines not run here use their non-throwing casts too
// (NULL on failure, see tryCast).
func (d Dialect) number(t string) string {
	if d == Postgres {
		return "CAST(" + t + " AS NUMERIC)"
	}
	return d.parseDouble(t)
}

// tryCast reports whether the dialect's text-to-number conversion gives
// NULL for a text it cannot convert (the CASE then needs an IS NULL branch
// so that codes are never NULL).
func (d Dialect) tryCast() bool { return d != Postgres && d != ClickHouse }

// parseDouble converts a text that isNumber accepts to a double, as Go's
// strconv.ParseFloat does (correctly rounded).
func (d Dialect) parseDouble(t string) string {
	switch d {
	case Postgres:
		return d.double(t)
	case ClickHouse:
		return "toFloat64OrZero(" + t + ")"
	case BigQuery:
		return "SAFE_CAST(" + t + " AS FLOAT64)"
	case Spark:
		return "try_cast(" + t + " AS DOUBLE)"
	}
	return "TRY_CAST(" + t + " AS DOUBLE)" // DuckDB, Trino
}

// double converts a number or text to a double.
func (d Dialect) double(x string) string {
	switch d {
	case Postgres:
		return "CAST(" + x + " AS DOUBLE PRECISION)"
	case ClickHouse:
		return "toFloat64(" + x + ")"
	case BigQuery:
		return "CAST(" + x + " AS FLOAT64)"
	default:
		return "CAST(" + x + " AS DOUBLE)"
	}
}

// bigint converts a number to a 64-bit integer.
func (d Dialect) bigint(x string) string {
	switch d {
	case ClickHouse:
		return "toInt64(" + x + ")"
	case BigQuery:
		return "CAST(" + x + " AS INT64)"
	}
	return "CAST(" + x + " AS BIGINT)"
}

// intLit writes an integer literal of the 64-bit integer type.
func (d Dialect) intLit(v int64) string {
	s := strconv.FormatInt(v, 10)
	if d == ClickHouse {
		return "toInt64(" + s + ")"
	}
	if v < 0 {
		return "(" + s + ")"
	}
	return s
}

// floatLit writes a double literal equal to f (finite).
func (d Dialect) floatLit(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if d == ClickHouse {
		return "toFloat64(" + s + ")"
	}
	if f < 0 {
		s = "(" + s + ")"
	}
	return d.double(s)
}

// intDiv is the integer quotient a / b of non-negative integers.
func (d Dialect) intDiv(a, b string) string {
	switch d {
	case ClickHouse:
		return "intDiv(" + a + ", " + b + ")"
	case DuckDB:
		return "(" + a + ") // " + b
	case Spark:
		return "(" + a + ") DIV " + b
	case BigQuery:
		return "DIV(" + a + ", " + b + ")"
	default: // Postgres, Trino: / on integers truncates
		return "(" + a + ") / " + b
	}
}

// nonFinite is true for NaN and infinite doubles.
func (d Dialect) nonFinite(x string) string {
	switch d {
	case Postgres:
		return x + " IN ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)"
	case ClickHouse:
		return "NOT isFinite(" + x + ")"
	case DuckDB:
		return "NOT isfinite(" + x + ")"
	case Spark:
		return "(isnan(" + x + ") OR abs(" + x + ") = double('infinity'))"
	case BigQuery:
		return "(IS_NAN(" + x + ") OR IS_INF(" + x + "))"
	default:
		return "NOT is_finite(" + x + ")"
	}
}

// count is the number of rows as a 64-bit integer; countOf counts the
// non-NULL values of x.
func (d Dialect) count() string {
	if d == ClickHouse {
		return "toInt64(count())"
	}
	return "COUNT(*)"
}

func (d Dialect) countOf(x string) string {
	if d == ClickHouse {
		return "toInt64(count(" + x + "))"
	}
	return "COUNT(" + x + ")"
}

// nullableCode casts a code column (or NULL) to the nullable 64-bit integer
// of a UNION ALL branch.
func (d Dialect) nullableCode(x string) string {
	if d == ClickHouse {
		return "CAST(" + x + " AS Nullable(Int64))"
	}
	return d.bigint(x)
}

// coalesceText returns the text of x, or marker for NULL.
func (d Dialect) coalesceText(x, marker string) string {
	if d == ClickHouse {
		return "ifNull(" + d.text(x) + ", " + d.str(marker) + ")"
	}
	return "COALESCE(" + d.text(x) + ", " + d.str(marker) + ")"
}
