package sqlsrc

import (
	"strings"

	"github.com/dpsynth/synth/universe"
)

// Regular expressions of the texts ingest reads as dates and timestamps
// (after trimming): an ISO date; a date, a time to the minute, second or
// fraction, and an optional offset.
const (
	dateRE      = `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	timestampRE = `^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?)?(Z|[+-][0-9]{2}:[0-9]{2})?$`
	offsetRE    = `(Z|[+-][0-9]{2}:[0-9]{2})$`
)

// matches is true when the text t matches the regular expression re.
func (d Dialect) matches(t, re string) string {
	switch d {
	case Postgres:
		return t + " ~ " + d.str(re)
	case ClickHouse:
		return "match(" + t + ", " + d.str(re) + ")"
	case DuckDB:
		return "regexp_matches(" + t + ", " + d.str(re) + ")"
	case Spark:
		return t + " RLIKE " + d.str(re)
	case BigQuery:
		return "REGEXP_CONTAINS(" + t + ", " + d.str(re) + ")"
	default:
		return "regexp_like(" + t + ", " + d.str(re) + ")"
	}
}

// epochDays is the day number (days since 1970-01-01) of a DATE value.
func (d Dialect) epochDays(x string) string {
	switch d {
	case Postgres, DuckDB:
		return "(" + x + " - DATE '1970-01-01')"
	case ClickHouse:
		return "(toInt64(toRelativeDayNum(" + x + ")) - toInt64(toRelativeDayNum(toDate('1970-01-01'))))"
	case Spark:
		return "datediff(" + x + ", DATE '1970-01-01')"
	case BigQuery:
		return "UNIX_DATE(" + x + ")"
	default: // Trino
		return "date_diff('day', DATE '1970-01-01', " + x + ")"
	}
}

// textDate converts a text that matches dateRE to a DATE (NULL on failure
// where the dialect has a non-throwing cast).
func (d Dialect) textDate(t string) string {
	switch d {
	case Postgres:
		return "CAST(" + t + " AS DATE)"
	case ClickHouse:
		return "toDateOrZero(" + t + ")"
	case BigQuery:
		return "SAFE_CAST(" + t + " AS DATE)"
	case Spark:
		return "try_cast(" + t + " AS DATE)"
	default:
		return "TRY_CAST(" + t + " AS DATE)"
	}
}

// epochSeconds is the instant of a timestamp value in seconds since the
// epoch, as a double. wall says the value has no zone (SQL's TIMESTAMP
// WITHOUT TIME ZONE): its wall-clock reading is then read in zone.
func (d Dialect) epochSeconds(x string, wall bool, zone string) string {
	z := d.str(zone)
	switch d {
	case Postgres:
		if wall {
			x = "(" + x + " AT TIME ZONE " + z + ")"
		}
		return "CAST(EXTRACT(EPOCH FROM " + x + ") AS DOUBLE PRECISION)"
	case ClickHouse: // DateTime holds an instant
		return "toFloat64(toUnixTimestamp(" + x + "))"
	case DuckDB:
		if wall {
			x = "timezone(" + z + ", " + x + ")"
		}
		return "epoch(" + x + ")"
	case Spark:
		if wall {
			x = "to_utc_timestamp(" + x + ", " + z + ")"
		}
		return "(CAST(unix_micros(" + x + ") AS DOUBLE) / 1000000)"
	case BigQuery:
		if wall {
			x = "TIMESTAMP(" + x + ", " + z + ")"
		}
		return "(UNIX_MICROS(" + x + ") / 1000000)"
	default: // Trino
		if wall {
			x = "with_timezone(" + x + ", " + z + ")"
		}
		return "to_unixtime(" + x + ")"
	}
}

// textSeconds converts a text that matches timestampRE to seconds since
// the epoch: with its offset when it has one, else read in zone.
func (d Dialect) textSeconds(t, zone string) string {
	z := d.str(zone)
	switch d {
	case Postgres:
		return "CASE WHEN " + d.matches(t, offsetRE) + " THEN " + d.epochSeconds("CAST("+t+" AS TIMESTAMPTZ)", false, zone) +
			" ELSE " + d.epochSeconds("CAST("+t+" AS TIMESTAMP)", true, zone) + " END"
	case ClickHouse:
		return "toFloat64(toUnixTimestamp(parseDateTimeBestEffortOrZero(" + t + ", " + z + ")))"
	case DuckDB:
		return "CASE WHEN " + d.matches(t, offsetRE) + " THEN " + d.epochSeconds("TRY_CAST("+t+" AS TIMESTAMPTZ)", false, zone) +
			" ELSE " + d.epochSeconds("TRY_CAST("+t+" AS TIMESTAMP)", true, zone) + " END"
	case Spark:
		return "CASE WHEN " + d.matches(t, offsetRE) + " THEN " + d.epochSeconds("try_cast("+t+" AS TIMESTAMP)", false, zone) +
			" ELSE " + d.epochSeconds("try_cast("+t+" AS TIMESTAMP)", true, zone) + " END"
	case BigQuery:
		return "CASE WHEN " + d.matches(t, offsetRE) + " THEN " + d.epochSeconds("SAFE_CAST("+t+" AS TIMESTAMP)", false, zone) +
			" ELSE " + d.epochSeconds("SAFE_CAST("+t+" AS DATETIME)", true, zone) + " END"
	default: // Trino
		return "CASE WHEN " + d.matches(t, offsetRE) + " THEN to_unixtime(TRY(from_iso8601_timestamp(replace(" + t + ", ' ', 'T'))))" +
			" ELSE " + d.epochSeconds("TRY_CAST("+t+" AS TIMESTAMP)", true, zone) + " END"
	}
}

// lower is the lower-case text of t.
func (d Dialect) lower(t string) string {
	if d == ClickHouse {
		return "lower(" + t + ")"
	}
	return "LOWER(" + t + ")"
}

// inList is "x IN ('a', 'b', …)".
func (d Dialect) inList(x string, vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = d.str(v)
	}
	return x + " IN (" + strings.Join(q, ", ") + ")"
}

// timeCode finishes the CASE of a boolean, date or timestamp attribute
// whose column v has type t (nulls and, for text, the null token are
// already handled).
func (c *compiler) timeCode(w *caseWriter, a *universe.Attribute, v string, t colType, p universe.Policy) {
	d := c.d
	switch a.Kind {
	case universe.Boolean:
		switch t {
		case boolCol:
			w.when(v, d.intLit(1))
			w.otherwise(d.intLit(0))
		case intCol, floatCol:
			w.when(v+" = 1", d.intLit(1))
			w.when(v+" = 0", d.intLit(0))
			w.otherwise(d.intLit(-1))
		default:
			r := d.lower(d.trim(d.text(v)))
			w.when(d.inList(r, []string{"true", "t", "yes", "y", "1"}), d.intLit(1))
			w.when(d.inList(r, []string{"false", "f", "no", "n", "0"}), d.intLit(0))
			w.otherwise(d.intLit(-1))
		}
	case universe.Date:
		var x string
		switch t {
		case dateCol:
			x = d.epochDays(v)
		case tsCol, wallCol:
			// ingest takes an instant's date in UTC, a wall clock's date
			// as read.
			if d == ClickHouse {
				x = d.epochDays("toDate(" + v + ", 'UTC')")
			} else if d == Postgres && t == tsCol {
				x = d.epochDays("CAST(" + v + " AT TIME ZONE 'UTC' AS DATE)")
			} else {
				x = d.epochDays("CAST(" + v + " AS DATE)")
			}
		case textCol:
			r := d.trim(d.text(v))
			w.when("NOT ("+d.matches(r, dateRE)+")", d.intLit(-1))
			x = d.epochDays(d.textDate(r))
			if d.tryCast() {
				w.when(x+" IS NULL", d.intLit(-1))
			}
		default:
			w.otherwise(d.intLit(-1))
			return
		}
		c.dayBins(w, a, x, p)
	case universe.Timestamp:
		var x string
		zone := a.Zone.String()
		switch t {
		case tsCol:
			x = d.epochSeconds(v, false, zone)
		case wallCol:
			x = d.epochSeconds(v, true, zone)
		case dateCol:
			x = d.epochSeconds("CAST("+v+" AS TIMESTAMP)", true, zone)
			if d == ClickHouse {
				x = "toFloat64(toUnixTimestamp(toDateTime(" + v + ", " + d.str(zone) + ")))"
			}
		case textCol:
			r := d.trim(d.text(v))
			w.when("NOT ("+d.matches(r, timestampRE)+")", d.intLit(-1))
			x = d.textSeconds(r, zone)
			if d.tryCast() {
				w.when("("+x+") IS NULL", d.intLit(-1))
			}
		default:
			w.otherwise(d.intLit(-1))
			return
		}
		c.numericBins(w, a, "("+x+")", p)
	}
}

// dayBins finishes the CASE of a date attribute whose day number is x:
// bins [Edges[i], Edges[i+1]) of whole days, the last edge the day after
// the upper bound.
func (c *compiler) dayBins(w *caseWriter, a *universe.Attribute, x string, p universe.Policy) {
	d := c.d
	e := a.Edges
	bins := int64(len(e) - 1)
	day := func(f float64) string { return d.intLit(int64(f)) }
	lo, end := day(e[0]), day(e[len(e)-1])
	if p.Clamp {
		w.when(x+" < "+lo, d.intLit(0))
		w.when(x+" >= "+end, d.intLit(bins-1))
	} else {
		w.when(x+" < "+lo+" OR "+x+" >= "+end, d.intLit(-1))
	}
	for k := int64(0); k < bins-1; k++ {
		w.when(x+" < "+day(e[k+1]), d.intLit(k))
	}
	w.otherwise(d.intLit(bins - 1))
}

// classifyTime maps the database type names of booleans, dates and
// timestamps.
func classifyTime(t string) (colType, bool) {
	switch {
	case t == "BOOL" || t == "BOOLEAN":
		return boolCol, true
	case t == "DATE" || t == "DATE32":
		return dateCol, true
	case t == "TIMESTAMPTZ" || t == "TIMESTAMP WITH TIME ZONE" || t == "DATETIME" || strings.HasPrefix(t, "DATETIME("):
		return tsCol, true // a ClickHouse DateTime holds an instant
	case t == "TIMESTAMP" || t == "TIMESTAMP WITHOUT TIME ZONE":
		return wallCol, true
	}
	return textCol, false
}
