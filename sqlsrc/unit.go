package sqlsrc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dpsynth/synth/contrib"
	"github.com/dpsynth/synth/universe"
)

// Unit bounds the contribution of a privacy unit in SQL, by the rule of
// package contrib, so that the engine counts exactly the rows the file
// reader keeps for the same rows and salt:
//
//	u   = md5(salt ‖ CAST(unit AS text))                 per row
//	cnt = rows of (u, codes)                              GROUP BY u, codes
//	j   = 1..cnt                                          the copies of a cell
//	p   = md5(u ‖ '|' ‖ codes joined by ',' ‖ '|' ‖ j)    each copy's priority
//	keep the K copies of smallest p of each u             ROW_NUMBER() ≤ K, or LIMIT K BY u
//	w   = kept copies per cell                            GROUP BY codes
//
// and the counting queries sum w instead of counting rows. Cost in the
// engine: one aggregation by (unit, cell), which distributes (partial
// aggregates on every shard of a ClickHouse Distributed table), then a sort
// of the expanded copies by unit and priority (at most the table's rows, on
// one node) and a second aggregation by cell. The unit's text is the
// engine's cast of the column to text: for text columns the value itself,
// for integer columns its decimal digits, as the file reader does.
type Unit struct {
	// Column is the column that identifies a unit; MaxRows is K.
	Column  string
	MaxRows int
	// Salt keys the unit IDs and priorities (contrib.Salt).
	Salt contrib.Salt
}

func (u *Unit) check(dom *universe.Domain) error {
	if u.MaxRows < 1 {
		return fmt.Errorf("privacy unit %q: the bound on rows per unit must be at least 1, got %d", u.Column, u.MaxRows)
	}
	if err := u.Salt.Check(); err != nil {
		return fmt.Errorf("privacy unit %q: %w", u.Column, err)
	}
	if strings.IndexByte(u.Column, 0) >= 0 {
		return fmt.Errorf("privacy unit %q: a column name with a NUL byte cannot be written in SQL", u.Column)
	}
	if _, ok := dom.Index(u.Column); ok {
		return fmt.Errorf("privacy unit %q is an attribute of the domain: a unit's identifier is read, never released; leave it out of the domain", u.Column)
	}
	if u.Column == CountColumn {
		return fmt.Errorf("privacy unit %q: the name is taken by the count column", u.Column)
	}
	return nil
}

// md5Hex is the lowercase hexadecimal MD5 of a text.
func (d Dialect) md5Hex(x string) string {
	switch d {
	case ClickHouse:
		return "lower(hex(MD5(" + x + ")))"
	case BigQuery:
		return "TO_HEX(MD5(" + x + "))"
	case Trino:
		return "lower(to_hex(md5(to_utf8(" + x + "))))"
	}
	return "md5(" + x + ")" // Postgres, DuckDB, Spark
}

// concat joins texts.
func (d Dialect) concat(parts ...string) string {
	return "concat(" + strings.Join(parts, ", ") + ")"
}

// sumOf is the sum of a count column as a 64-bit integer.
func (d Dialect) sumOf(x string) string {
	if d == ClickHouse {
		return "toInt64(sum(" + x + "))"
	}
	return d.bigint("SUM(" + x + ")")
}

// rowCount is what a counting query counts: rows, or the kept copies of
// the bounded relation.
func (c *compiler) rowCount() string {
	if c.unit != nil {
		return c.d.sumOf("w")
	}
	return c.d.count()
}

// bounded is the subquery of the kept rows: every attribute's code column
// and w, the number of kept copies of that cell (AS codes).
func (c *compiler) bounded() string {
	d, u := c.d, c.unit
	n := c.dom.Len()
	codes := make([]string, n)
	for i := range codes {
		codes[i] = c.code(i)
	}
	list := strings.Join(codes, ", ")
	// Rows: the unit's ID and the codes.
	var rows strings.Builder
	rows.WriteString("SELECT " + d.md5Hex(d.concat(d.str(string(u.Salt)), d.text(d.ident(u.Column)))) + " AS u")
	for i := range n {
		rows.WriteString(",\n      " + c.codeExpr(i, c.p) + " AS " + c.code(i))
	}
	rows.WriteString("\n    FROM " + c.from)
	grouped := "SELECT u, " + list + ", " + d.count() + " AS cnt FROM (" + rows.String() + ") AS r GROUP BY u, " + list
	// The copies j = 1..cnt of each (unit, cell).
	var copies string
	switch d {
	case Postgres:
		copies = "SELECT u, " + list + ", generate_series(1, cnt) AS j FROM (" + grouped + ") AS g"
	case DuckDB:
		copies = "SELECT u, " + list + ", UNNEST(generate_series(1, cnt)) AS j FROM (" + grouped + ") AS g"
	case Spark:
		copies = "SELECT u, " + list + ", explode(sequence(CAST(1 AS BIGINT), cnt)) AS j FROM (" + grouped + ") AS g"
	case ClickHouse:
		copies = "SELECT u, " + list + ", arrayJoin(range(toUInt64(cnt))) + 1 AS j FROM (" + grouped + ") AS g"
	case BigQuery:
		copies = "SELECT u, " + list + ", j FROM (" + grouped + ") AS g CROSS JOIN UNNEST(GENERATE_ARRAY(1, cnt)) AS j"
	default: // Trino
		copies = "SELECT u, " + list + ", j FROM (" + grouped + ") AS g CROSS JOIN UNNEST(sequence(1, cnt)) AS t(j)"
	}
	// Each copy's priority.
	parts := []string{"u", d.str("|")}
	for i := range n {
		if i > 0 {
			parts = append(parts, d.str(","))
		}
		parts = append(parts, d.text(c.code(i)))
	}
	parts = append(parts, d.str("|"), d.text("j"))
	prio := "SELECT u, " + list + ", " + d.md5Hex(d.concat(parts...)) + " AS p FROM (" + copies + ") AS e"
	// The K copies of smallest priority of each unit.
	k := strconv.Itoa(u.MaxRows)
	var kept string
	if d == ClickHouse {
		kept = "SELECT " + list + " FROM (" + prio + ") AS q ORDER BY u, p LIMIT " + k + " BY u"
	} else {
		order := "p"
		if d == Postgres {
			order = `p COLLATE "C"` // bytewise, as the hexadecimal text sorts in Go
		}
		kept = "SELECT " + list + " FROM (SELECT " + list + ", ROW_NUMBER() OVER (PARTITION BY u ORDER BY " + order + ") AS rk FROM (" +
			prio + ") AS q) AS ranked WHERE rk <= " + k
	}
	return "(SELECT " + list + ", " + d.count() + " AS w\n  FROM (" + kept + ") AS kept\n  GROUP BY " + list + ") AS codes"
}

// unitSets counts several sets over the bounded relation in one pass on
// ClickHouse 18.16, which has no GROUPING SETS: every kept cell is repeated
// once per set (ARRAY JOIN), the codes outside the set are NULL, and the
// rows are grouped by set and codes. A UNION ALL would compute the bounded
// relation once per set.
func (c *compiler) unitSets(sets [][]int) string {
	d := c.d
	u := union(sets)
	idx := make([]string, len(sets))
	for j := range sets {
		idx[j] = strconv.Itoa(j)
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	for _, i := range u {
		var in []string
		for j, s := range sets {
			for _, a := range s {
				if a == i {
					in = append(in, strconv.Itoa(j))
				}
			}
		}
		fmt.Fprintf(&b, "nullIf(if(has([%s], s), toInt64(%s), toInt64(-1)), toInt64(-1)) AS %s, ", strings.Join(in, ", "), c.code(i), c.col(i))
	}
	b.WriteString(c.rowCount() + " AS " + d.ident(CountColumn) + "\nFROM " + c.bounded() + "\nARRAY JOIN [" + strings.Join(idx, ", ") + "] AS s\nGROUP BY s")
	for _, i := range u {
		b.WriteString(", " + c.col(i))
	}
	return b.String()
}

// nullUnits is the check query's count of rows whose unit (the column v)
// is NULL or empty.
func (c *compiler) nullUnits(v string) string {
	d := c.d
	return d.countOf("CASE WHEN " + v + " IS NULL OR " + d.text(v) + " = '' THEN 1 END")
}
