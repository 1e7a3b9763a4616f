package universe

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones by IANA name on machines without a zoneinfo database
)

// CalUnit is the calendar unit that cuts a date or timestamp attribute into
// bins.
type CalUnit uint8

// Calendar units. Week bins start on Monday (ISO 8601); every bin starts at
// the unit's start in the attribute's time zone, except the first, which
// starts at the lower bound.
const (
	NoUnit CalUnit = iota
	Year
	Quarter
	Month
	Week
	Day
	Hour
	Minute
)

var unitNames = [...]string{NoUnit: "", Year: "year", Quarter: "quarter", Month: "month", Week: "week", Day: "day", Hour: "hour", Minute: "minute"}

// String returns the unit's name in domain files.
func (u CalUnit) String() string {
	if int(u) < len(unitNames) {
		return unitNames[u]
	}
	return fmt.Sprintf("CalUnit(%d)", u)
}

// ParseCalUnit returns the unit called s; dates allow year down to day,
// timestamps down to minute.
func ParseCalUnit(s string, timestamp bool) (CalUnit, error) {
	last := Day
	if timestamp {
		last = Minute
	}
	for u := Year; u <= last; u++ {
		if s == unitNames[u] {
			return u, nil
		}
	}
	names := make([]string, 0, last)
	for u := Year; u <= last; u++ {
		names = append(names, unitNames[u])
	}
	return NoUnit, fmt.Errorf("unknown bin %q (want one of %s)", s, strings.Join(names, ", "))
}

// maxCalBins bounds the bins of one date or timestamp attribute: every bin
// edge is held in memory.
const maxCalBins = 1 << 22

// unitSeconds is the shortest length of each unit, in seconds (a day of
// 23 hours when summer time starts).
var unitSeconds = [...]float64{Year: 365 * 86400, Quarter: 89 * 86400, Month: 28 * 86400, Week: 7 * 86400, Day: 23 * 3600, Hour: 3600, Minute: 60}

// DateLayout is the ISO 8601 date format of date values and bounds.
const DateLayout = "2006-01-02"

// ParseDate parses an ISO date (YYYY-MM-DD) and returns its day number:
// days since 1970-01-01.
func ParseDate(s string) (int64, error) {
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return 0, fmt.Errorf("not an ISO date (YYYY-MM-DD): %q", s)
	}
	return DayNumber(t), nil
}

// DayNumber returns the day number of t's calendar date (in t's location).
func DayNumber(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// DateOf returns the date of a day number, at midnight UTC.
func DateOf(day int64) time.Time { return time.Unix(day*86400, 0).UTC() }

// FormatDate writes a day number as YYYY-MM-DD.
func FormatDate(day int64) string { return DateOf(day).Format(DateLayout) }

// timestampLayouts are the accepted timestamp spellings besides RFC 3339:
// a space for the T, and no offset (read in the attribute's zone).
var timestampLayouts = []string{
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02 15:04:05.999999999Z07:00",
	DateLayout,
}

// ParseTimestamp parses a timestamp: RFC 3339 (with its offset), or the
// same without an offset (also with a space for the T, without seconds, or
// a bare date), read in loc.
func ParseTimestamp(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, l := range timestampLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not an RFC 3339 timestamp: %q", s)
}

// unixSeconds returns t as seconds since the epoch, fraction included.
func unixSeconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }

// TimeOf returns the instant of x seconds since the epoch, rounded to the
// microsecond, in the attribute's zone.
func (a *Attribute) TimeOf(x float64) time.Time {
	sec := int64(x)
	if float64(sec) > x {
		sec--
	}
	us := int64((x-float64(sec))*1e6 + 0.5)
	return time.Unix(sec, us*1000).In(a.Zone)
}

// NewDate returns a date attribute over the days lower..upper (day numbers,
// inclusive) cut into bins of unit (Year..Day).
func NewDate(name string, lower, upper int64, unit CalUnit) (*Attribute, error) {
	if unit < Year || unit > Day {
		return nil, fmt.Errorf("attribute %q: a date bin is year, quarter, month, week or day, got %v", name, unit)
	}
	if lower > upper {
		return nil, fmt.Errorf("attribute %q: lower %s is after upper %s", name, FormatDate(lower), FormatDate(upper))
	}
	a := &Attribute{Name: name, Kind: Date, Unit: unit, Zone: time.UTC}
	edges, err := calEdges(name, unixSeconds(DateOf(lower)), unixSeconds(DateOf(upper+1)), unit, time.UTC)
	if err != nil {
		return nil, err
	}
	for i, e := range edges {
		edges[i] = e / 86400
	}
	a.Edges = edges
	return a, a.init()
}

// NewTimestamp returns a timestamp attribute over [lower, upper] cut into
// bins of unit, whose boundaries are those of the calendar in loc.
func NewTimestamp(name string, lower, upper time.Time, unit CalUnit, loc *time.Location) (*Attribute, error) {
	if unit < Year || unit > Minute {
		return nil, fmt.Errorf("attribute %q: a timestamp bin is year, quarter, month, week, day, hour or minute, got %v", name, unit)
	}
	if loc == nil {
		loc = time.UTC
	}
	if !lower.Before(upper) {
		return nil, fmt.Errorf("attribute %q: lower %s is not before upper %s", name, lower.Format(time.RFC3339), upper.Format(time.RFC3339))
	}
	a := &Attribute{Name: name, Kind: Timestamp, Unit: unit, Zone: loc}
	edges, err := calEdges(name, unixSeconds(lower), unixSeconds(upper), unit, loc)
	if err != nil {
		return nil, err
	}
	a.Edges = edges
	return a, a.init()
}

// NewBoolean returns a boolean attribute: code 0 is false, 1 is true.
func NewBoolean(name string) (*Attribute, error) {
	a := &Attribute{Name: name, Kind: Boolean, Values: []string{"false", "true"}}
	return a, a.init()
}

// calEdges returns the bin edges of [lo, hi) in seconds: lo, then every
// start of unit in loc after lo and before hi, then hi.
func calEdges(name string, lo, hi float64, unit CalUnit, loc *time.Location) ([]float64, error) {
	if (hi-lo)/unitSeconds[unit] > maxCalBins-2 {
		return nil, fmt.Errorf("attribute %q: more than %d bins of a %v; choose a coarser bin or narrower bounds", name, maxCalBins, unit)
	}
	edges := []float64{lo}
	sec := int64(lo)
	if float64(sec) > lo {
		sec--
	}
	t := time.Unix(sec, int64((lo-float64(sec))*1e9)).In(loc)
	for {
		t = nextStart(t, unit, loc)
		x := unixSeconds(t)
		if x >= hi {
			break
		}
		if len(edges) == maxCalBins {
			return nil, fmt.Errorf("attribute %q: more than %d bins of a %v; choose a coarser bin or narrower bounds", name, maxCalBins, unit)
		}
		edges = append(edges, x)
	}
	return append(edges, hi), nil
}

// nextStart returns the first start of unit in loc after t.
func nextStart(t time.Time, unit CalUnit, loc *time.Location) time.Time {
	t = t.In(loc)
	y, m, d := t.Date()
	var s time.Time
	switch unit {
	case Year:
		s = time.Date(y+1, 1, 1, 0, 0, 0, 0, loc)
	case Quarter:
		q := (int(m) - 1) / 3
		s = time.Date(y, time.Month(3*q+4), 1, 0, 0, 0, 0, loc)
	case Month:
		s = time.Date(y, m+1, 1, 0, 0, 0, 0, loc)
	case Week:
		wd := (int(t.Weekday()) + 6) % 7 // Monday = 0
		s = time.Date(y, m, d-wd+7, 0, 0, 0, 0, loc)
	case Day:
		s = time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	case Hour, Minute:
		// In absolute time from the wall clock's last full hour (minute), so
		// that the hour repeated when summer time ends is two bins.
		step := int64(3600)
		if unit == Minute {
			step = 60
		}
		_, off := t.Zone()
		local := t.Unix() + int64(off)
		s = time.Unix(t.Unix()-local%step+step, 0).In(loc)
		if local%step < 0 {
			s = s.Add(-time.Duration(step) * time.Second)
		}
	}
	for !s.After(t) { // a repeated wall-clock hour at the end of summer time
		switch unit {
		case Hour:
			s = s.Add(time.Hour)
		case Minute:
			s = s.Add(time.Minute)
		default:
			s = s.Add(time.Hour)
		}
	}
	return s
}

// boolWords are the accepted spellings of a boolean in text, lower case.
var boolWords = map[string]int{"false": 0, "f": 0, "no": 0, "n": 0, "0": 0, "true": 1, "t": 1, "yes": 1, "y": 1, "1": 1}

// ParseBool reads a boolean spelled true/false, t/f, yes/no, y/n or 1/0 in
// any case, surrounding blanks ignored.
func ParseBool(s string) (bool, bool) {
	t := trimBlanks(s)
	if len(t) > 5 {
		return false, false
	}
	v, ok := boolWords[strings.ToLower(t)]
	return v == 1, ok
}

// EncodeBool returns the code of a boolean (typed input).
func (a *Attribute) EncodeBool(v bool) (int, Repair, error) {
	if a.Kind == Categorical {
		return a.EncodeString(strconv.FormatBool(v), Policy{})
	}
	if a.Kind != Boolean {
		return -1, NoRepair, a.valueErr(strconv.FormatBool(v), ReasonNotCategory+" (a boolean)")
	}
	if v {
		return 1, NoRepair, nil
	}
	return 0, NoRepair, nil
}

// EncodeDay returns the code of a date given as its day number (typed
// input). A timestamp attribute takes the day's midnight in its zone.
func (a *Attribute) EncodeDay(day int64, p Policy) (int, Repair, error) {
	switch a.Kind {
	case Date:
		return a.encodeDay("", day, p)
	case Timestamp:
		y, m, d := DateOf(day).Date()
		return a.encodeTime("", time.Date(y, m, d, 0, 0, 0, 0, a.Zone), p)
	case Categorical:
		return a.EncodeString(FormatDate(day), p)
	}
	return -1, NoRepair, a.valueErr(FormatDate(day), ReasonNotTime)
}

// EncodeWallClock is EncodeTime for a time without a zone (a Parquet
// TIMESTAMP not adjusted to UTC, SQL's TIMESTAMP WITHOUT TIME ZONE): its
// wall-clock reading, given as UTC, is read in the attribute's zone.
func (a *Attribute) EncodeWallClock(t time.Time, p Policy) (int, Repair, error) {
	if a.Kind == Timestamp {
		y, m, d := t.Date()
		h, mi, s := t.Clock()
		t = time.Date(y, m, d, h, mi, s, t.Nanosecond(), a.Zone)
	}
	return a.EncodeTime(t, p)
}

// EncodeTime returns the code of an instant (typed input). A date
// attribute takes t's calendar date in t's own location.
func (a *Attribute) EncodeTime(t time.Time, p Policy) (int, Repair, error) {
	switch a.Kind {
	case Timestamp:
		return a.encodeTime("", t, p)
	case Date:
		return a.encodeDay("", DayNumber(t), p)
	case Categorical:
		return a.EncodeString(t.Format(time.RFC3339Nano), p)
	}
	return -1, NoRepair, a.valueErr(t.Format(time.RFC3339Nano), ReasonNotTime)
}

func (a *Attribute) encodeDay(raw string, day int64, p Policy) (int, Repair, error) {
	lo, end := int64(a.Edges[0]), int64(a.Edges[len(a.Edges)-1]) // end is the day after upper
	rep := NoRepair
	if day < lo || day >= end {
		if !p.Clamp {
			if raw == "" {
				raw = FormatDate(day)
			}
			return -1, NoRepair, a.valueErr(raw, ReasonRange)
		}
		rep = Clamped
		day = min(max(day, lo), end-1)
	}
	return a.calBin(float64(day)), rep, nil
}

func (a *Attribute) encodeTime(raw string, t time.Time, p Policy) (int, Repair, error) {
	x := unixSeconds(t)
	lo, hi := a.Edges[0], a.Edges[len(a.Edges)-1]
	rep := NoRepair
	if x < lo || x > hi {
		if !p.Clamp {
			if raw == "" {
				raw = t.Format(time.RFC3339Nano)
			}
			return -1, NoRepair, a.valueErr(raw, ReasonRange)
		}
		rep = Clamped
		x = min(max(x, lo), hi)
	}
	return a.calBin(x), rep, nil
}

// calBin returns the bin of x inside the bounds: bin i holds
// [Edges[i], Edges[i+1]), the last bin also its upper edge.
func (a *Attribute) calBin(x float64) int {
	i := sort.SearchFloat64s(a.Edges, x)
	if i < len(a.Edges) && a.Edges[i] == x {
		i++
	}
	return max(min(i-1, len(a.Edges)-2), 0)
}

// encodeCalString encodes the text of a date or timestamp.
func (a *Attribute) encodeCalString(s string, p Policy) (int, Repair, error) {
	t := trimBlanks(s)
	if t == "" {
		return -1, NoRepair, a.valueErr(s, ReasonNull)
	}
	if a.Kind == Date {
		d, err := ParseDate(t)
		if err != nil {
			if ts, terr := ParseTimestamp(t, time.UTC); terr == nil {
				// A timestamp in a date column: its date, if it is midnight.
				if h, m, sec := ts.Clock(); h == 0 && m == 0 && sec == 0 && ts.Nanosecond() == 0 {
					return a.encodeDay(s, DayNumber(ts), p)
				}
				return -1, NoRepair, a.valueErr(s, ReasonNotDate+" (a timestamp with a time of day)")
			}
			return -1, NoRepair, a.valueErr(s, ReasonNotDate)
		}
		return a.encodeDay(s, d, p)
	}
	ts, err := ParseTimestamp(t, a.Zone)
	if err != nil {
		return -1, NoRepair, a.valueErr(s, ReasonNotTimestamp)
	}
	return a.encodeTime(s, ts, p)
}

// CalBin returns the bounds of a date or timestamp attribute's bin: for a
// date the first and last day (day numbers, inclusive), for a timestamp
// the start and end instants in seconds (the end is the next bin's start,
// or the upper bound for the last bin).
func (a *Attribute) CalBin(code int) (lo, hi float64) {
	lo, hi = a.Edges[code], a.Edges[code+1]
	if a.Kind == Date {
		hi--
	}
	return lo, hi
}

// calLabel names a date or timestamp bin by the calendar unit that holds
// it: "2020", "2020-Q1", "2020-03", "2020-W10" (ISO week), "2020-03-04",
// "2020-03-04 13:00", "2020-03-04 13:05".
func (a *Attribute) calLabel(code int) string {
	var t time.Time
	if a.Kind == Date {
		t = DateOf(int64(a.Edges[code]))
	} else {
		t = a.TimeOf(a.Edges[code])
	}
	switch a.Unit {
	case Year:
		return strconv.Itoa(t.Year())
	case Quarter:
		return fmt.Sprintf("%d-Q%d", t.Year(), (int(t.Month())+2)/3)
	case Month:
		return t.Format("2006-01")
	case Week:
		y, w := t.ISOWeek()
		return fmt.Sprintf("%d-W%02d", y, w)
	case Day:
		return t.Format(DateLayout)
	case Hour:
		return t.Format("2006-01-02 15:00")
	default:
		return t.Format("2006-01-02 15:04")
	}
}

// Lower and upper bounds as written in domain files.
func (a *Attribute) calBounds() (lo, hi string) {
	if a.Kind == Date {
		return FormatDate(int64(a.Edges[0])), FormatDate(int64(a.Edges[len(a.Edges)-1]) - 1)
	}
	return a.TimeOf(a.Edges[0]).Format(time.RFC3339Nano), a.TimeOf(a.Edges[len(a.Edges)-1]).Format(time.RFC3339Nano)
}
