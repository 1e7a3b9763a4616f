package universe

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

const calDomain = `{"attributes": [
  {"name": "day", "type": "date", "lower": "2020-01-15", "upper": "2020-12-31", "bin": "month", "null": "NA"},
  {"name": "seen", "type": "timestamp", "lower": "2024-03-30T00:00:00+01:00", "upper": "2024-04-02T00:00:00+02:00", "bin": "day", "timezone": "Europe/Paris"},
  {"name": "ok", "type": "boolean", "null": ""},
  {"name": "wk", "type": "date", "lower": "2024-01-03", "upper": "2024-01-31", "bin": "week"},
  {"name": "q", "type": "date", "lower": "2019-11-01", "upper": "2021-02-28", "bin": "quarter"},
  {"name": "h", "type": "timestamp", "lower": "2024-10-27T00:00:00+02:00", "upper": "2024-10-27T04:00:00+01:00", "bin": "hour", "timezone": "Europe/Paris"}
]}`

func TestCalendarEncode(t *testing.T) {
	d, err := ParseDomain([]byte(calDomain))
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{12 + 1, 3, 2 + 1, 5, 6, 5}
	for i, want := range sizes {
		if got := d.Attr(i).Size(); got != want {
			t.Errorf("%s.Size() = %d, want %d", d.Attr(i).Name, got, want)
		}
	}
	cases := []struct {
		attr  int
		in    string
		code  int
		label string
	}{
		{0, "2020-01-15", 0, "2020-01"},
		{0, "2020-01-31", 0, "2020-01"},
		{0, " 2020-02-01 ", 1, "2020-02"},
		{0, "2020-12-31", 11, "2020-12"},
		{0, "2020-12-31T00:00:00Z", 11, "2020-12"},
		{0, "NA", 12, "NA"},
		{0, "2020-01-14", -1, ""},
		{0, "2021-01-01", -1, ""},
		{0, "2020-02-30", -1, ""},
		{0, "2020-03-01T10:00:00Z", -1, ""},
		{0, "1583020800", -1, ""},
		{1, "2024-03-30T00:00:00+01:00", 0, "2024-03-30"},
		{1, "2024-03-30T23:59:59+01:00", 0, "2024-03-30"},
		{1, "2024-03-31T00:00:00+01:00", 1, "2024-03-31"},
		{1, "2024-03-30T23:30:00Z", 1, "2024-03-31"}, // 01:30 in Paris
		{1, "2024-03-31 23:59:59", 1, "2024-03-31"},  // read in Europe/Paris (UTC+2 by then)
		{1, "2024-04-01", 2, "2024-04-01"},
		{1, "2024-04-02T00:00:00+02:00", 2, "2024-04-01"}, // the closed upper bound
		{1, "2024-04-02T00:00:01+02:00", -1, ""},
		{1, "yesterday", -1, ""},
		{2, "TRUE", 1, "true"},
		{2, "no", 0, "false"},
		{2, " Y", 1, "true"},
		{2, "0", 0, "false"},
		{2, "", 2, ""},
		{2, "maybe", -1, ""},
		{3, "2024-01-03", 0, "2024-W01"},
		{3, "2024-01-07", 0, "2024-W01"},
		{3, "2024-01-08", 1, "2024-W02"},
		{3, "2024-01-31", 4, "2024-W05"},
		{4, "2019-11-01", 0, "2019-Q4"},
		{4, "2020-01-01", 1, "2020-Q1"},
		{4, "2021-02-28", 5, "2021-Q1"},
		// The night summer time ends: 02:00–03:00 happens twice.
		{5, "2024-10-27T02:30:00+02:00", 2, "2024-10-27 02:00"},
		{5, "2024-10-27T02:30:00+01:00", 3, "2024-10-27 02:00"},
		{5, "2024-10-27T03:30:00+01:00", 4, "2024-10-27 03:00"},
	}
	for _, c := range cases {
		a := d.Attr(c.attr)
		code, _, err := a.EncodeString(c.in, Policy{})
		if c.code < 0 {
			if err == nil {
				t.Errorf("%s.EncodeString(%q) = %d, want an error", a.Name, c.in, code)
			}
			continue
		}
		if err != nil || code != c.code {
			t.Errorf("%s.EncodeString(%q) = %d, %v, want %d", a.Name, c.in, code, err, c.code)
			continue
		}
		if got := a.Label(code); got != c.label {
			t.Errorf("%s.Label(%d) = %q, want %q", a.Name, code, got, c.label)
		}
	}
	// Typed input.
	day := d.Attr(0)
	if c, _, err := day.EncodeDay(DayNumber(time.Date(2020, 6, 15, 0, 0, 0, 0, time.UTC)), Policy{}); err != nil || c != 5 {
		t.Errorf("EncodeDay(2020-06-15) = %d, %v, want 5", c, err)
	}
	if c, r, err := day.EncodeDay(0, Policy{Clamp: true}); err != nil || c != 0 || r != Clamped {
		t.Errorf("EncodeDay(1970-01-01, clamp) = %d, %v, %v, want 0, clamped", c, r, err)
	}
	if _, _, err := day.EncodeInt(18000, Policy{}); err == nil {
		t.Error("EncodeInt on a date: no error")
	}
	seen := d.Attr(1)
	if c, _, err := seen.EncodeTime(time.Date(2024, 4, 1, 12, 0, 0, 0, time.UTC), Policy{}); err != nil || c != 2 {
		t.Errorf("EncodeTime(2024-04-01T12:00Z) = %d, %v, want 2", c, err)
	}
	if c, _, err := d.Attr(2).EncodeBool(true); err != nil || c != 1 {
		t.Errorf("EncodeBool(true) = %d, %v, want 1", c, err)
	}
	if lo, hi := day.CalBin(11); FormatDate(int64(lo)) != "2020-12-01" || FormatDate(int64(hi)) != "2020-12-31" {
		t.Errorf("CalBin(11) = %s..%s, want 2020-12-01..2020-12-31", FormatDate(int64(lo)), FormatDate(int64(hi)))
	}
}

func TestCalendarRoundTrip(t *testing.T) {
	d, err := ParseDomain([]byte(calDomain))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := ParseDomain(b)
	if err != nil {
		t.Fatalf("ParseDomain(MarshalJSON) = %v\n%s", err, b)
	}
	for i, a := range d.Attrs() {
		b := d2.Attr(i)
		if a.Describe() != b.Describe() || a.Size() != b.Size() {
			t.Errorf("attribute %d: %s (%d codes) read back as %s (%d codes)", i, a.Describe(), a.Size(), b.Describe(), b.Size())
		}
		for c := range a.Size() {
			if a.Label(c) != b.Label(c) {
				t.Errorf("%s.Label(%d) = %q read back as %q", a.Name, c, a.Label(c), b.Label(c))
			}
		}
	}
}

func TestCalendarDeclarationErrors(t *testing.T) {
	cases := []struct{ attr, want string }{
		{`{"name": "d", "type": "date", "lower": "2020-01-01", "upper": "2019-01-01", "bin": "day"}`, "after upper"},
		{`{"name": "d", "type": "date", "lower": "2020-01-01", "upper": "2020-12-31"}`, `needs "lower", "upper" and "bin"`},
		{`{"name": "d", "type": "date", "lower": "2020-01-01", "upper": "2020-12-31", "bin": "hour"}`, `unknown bin "hour"`},
		{`{"name": "d", "type": "date", "lower": 2020, "upper": "2020-12-31", "bin": "day"}`, `want a string (an ISO date`},
		{`{"name": "d", "type": "date", "lower": "01/02/2020", "upper": "2020-12-31", "bin": "day"}`, "not an ISO date"},
		{`{"name": "t", "type": "timestamp", "lower": "2020-01-01T00:00:00Z", "upper": "2021-01-01T00:00:00Z", "bin": "day", "timezone": "Mars/Olympus"}`, "unknown time zone"},
		{`{"name": "t", "type": "timestamp", "lower": "2020-01-01T00:00:00Z", "upper": "2120-01-01T00:00:00Z", "bin": "minute"}`, "choose a coarser bin"},
		{`{"name": "b", "type": "boolean", "null": "0"}`, "reads as a boolean"},
		{`{"name": "b", "type": "boolean", "values": ["no", "yes"]}`, `field "values" is not allowed for type boolean`},
		{`{"name": "d", "type": "date", "lower": "2020-01-01", "upper": "2020-12-31", "bin": "day", "timezone": "UTC"}`, `field "timezone" is not allowed for type date`},
	}
	for _, c := range cases {
		_, err := ParseDomain([]byte(`{"attributes": [` + c.attr + `]}`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseDomain(%s) = %v, want an error containing %q", c.attr, err, c.want)
		}
	}
}

func TestDraftKey(t *testing.T) {
	src := `{"draft": {"epsilon": 1, "notes": ["x"]}, "attributes": [{"name": "b", "type": "boolean"}]}`
	if _, err := ParseDomain([]byte(src)); err != nil {
		t.Errorf("ParseDomain(with draft) = %v", err)
	}
	if _, err := ParseDomain([]byte(`{"draft": {}, "b": 2}`)); err == nil {
		t.Error("ParseDomain(draft then shorthand): no error")
	}
}
