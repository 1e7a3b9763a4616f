package universe

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestEncodeString(t *testing.T) {
	d := mustDomain(t, fullDomain)
	sex, race, age, income, hours, code := d.Attr(0), d.Attr(1), d.Attr(2), d.Attr(3), d.Attr(4), d.Attr(5)
	clamp := Policy{Clamp: true}
	other := Policy{UnknownToOther: true}
	tests := []struct {
		a      *Attribute
		in     string
		p      Policy
		want   int
		repair Repair
		reason string // "" for success
	}{
		{sex, "F", Policy{}, 0, NoRepair, ""},
		{sex, "M", Policy{}, 1, NoRepair, ""},
		{sex, "m", Policy{}, -1, NoRepair, ReasonUnknown},
		{sex, " M", Policy{}, -1, NoRepair, ReasonUnknown},
		{sex, "", Policy{}, -1, NoRepair, ReasonNull},
		{sex, "X", other, -1, NoRepair, ReasonUnknown}, // no other declared
		{race, "b", Policy{}, 1, NoRepair, ""},
		{race, "NA", Policy{}, 3, NoRepair, ""},
		{race, "q", other, 2, MappedToOther, ""},
		{race, "q", Policy{}, -1, NoRepair, ReasonUnknown},
		{age, "0", Policy{}, 0, NoRepair, ""},
		{age, "9", Policy{}, 0, NoRepair, ""},
		{age, "10", Policy{}, 1, NoRepair, ""},
		{age, " 99 ", Policy{}, 9, NoRepair, ""},
		{age, "42.0", Policy{}, 4, NoRepair, ""},
		{age, "42.5", Policy{}, -1, NoRepair, ReasonNotInteger},
		{age, "100", Policy{}, -1, NoRepair, ReasonRange},
		{age, "100", clamp, 9, Clamped, ""},
		{age, "-5", clamp, 0, Clamped, ""},
		{age, "1e30", clamp, 9, Clamped, ""},
		{age, "abc", Policy{}, -1, NoRepair, ReasonNotNumber},
		{age, "NaN", Policy{}, -1, NoRepair, ReasonNotFinite},
		{age, "", Policy{}, -1, NoRepair, ReasonNull},
		{income, "0", Policy{}, 0, NoRepair, ""},
		{income, "24.99", Policy{}, 0, NoRepair, ""},
		{income, "25", Policy{}, 1, NoRepair, ""},
		{income, "100", Policy{}, 3, NoRepair, ""},
		{income, "100.01", Policy{}, -1, NoRepair, ReasonRange},
		{income, "100.01", clamp, 3, Clamped, ""},
		{income, "-1", clamp, 0, Clamped, ""},
		{income, "Inf", clamp, -1, NoRepair, ReasonNotFinite},
		{income, "nan", Policy{}, -1, NoRepair, ReasonNotFinite},
		{income, "1,5", Policy{}, -1, NoRepair, ReasonNotNumber},
		{hours, "", Policy{}, 4, NoRepair, ""},
		{hours, "59.999", Policy{}, 2, NoRepair, ""},
		{hours, "60", Policy{}, 3, NoRepair, ""},
		{code, "3", Policy{}, 3, NoRepair, ""},
		{code, "4", Policy{}, -1, NoRepair, ReasonNotCode},
		{code, "4", clamp, -1, NoRepair, ReasonNotCode},
		{code, "-1", Policy{}, -1, NoRepair, ReasonNotCode},
	}
	for _, tt := range tests {
		got, rep, err := tt.a.EncodeString(tt.in, tt.p)
		if tt.reason == "" {
			if err != nil || got != tt.want || rep != tt.repair {
				t.Errorf("%s.EncodeString(%q, %+v) = %d, %v, %v, want %d, %v, nil", tt.a.Name, tt.in, tt.p, got, rep, err, tt.want, tt.repair)
			}
			continue
		}
		var ve *ValueError
		if !errors.As(err, &ve) || ve.Reason != tt.reason {
			t.Errorf("%s.EncodeString(%q, %+v) error = %v, want reason %q", tt.a.Name, tt.in, tt.p, err, tt.reason)
		}
	}
}

func TestValueErrorNamesDomain(t *testing.T) {
	d := mustDomain(t, fullDomain)
	cases := []struct {
		attr       int
		in         string
		hidden, to string // the message by default, and with Show
	}{
		{0, "X", `unknown category (declared: categorical {"F", "M"})`, `unknown category "X" (declared: categorical {"F", "M"})`},
		{2, "150", `out of range (declared: integer 0..99 (width 10))`, `out of range "150" (declared: integer 0..99 (width 10))`},
	}
	for _, c := range cases {
		_, _, err := d.Attr(c.attr).EncodeString(c.in, Policy{})
		var ve *ValueError
		if !errors.As(err, &ve) {
			t.Fatalf("EncodeString(%q) = %v, want a *ValueError", c.in, err)
		}
		if got := ve.Error(); got != c.hidden {
			t.Errorf("EncodeString(%q) error = %s, want %s (the private value left out)", c.in, got, c.hidden)
		}
		ve.Show = true
		if got := ve.Error(); got != c.to {
			t.Errorf("EncodeString(%q) error with Show = %s, want %s", c.in, got, c.to)
		}
	}
}

func TestEncodeTyped(t *testing.T) {
	d := mustDomain(t, fullDomain)
	age, income := d.Attr(2), d.Attr(3)
	if c, _, err := age.EncodeInt(57, Policy{}); err != nil || c != 5 {
		t.Errorf("EncodeInt(57) = %d, %v, want 5, nil", c, err)
	}
	if c, _, err := age.EncodeFloat(57, Policy{}); err != nil || c != 5 {
		t.Errorf("EncodeFloat(57) = %d, %v, want 5, nil", c, err)
	}
	if _, _, err := age.EncodeFloat(57.5, Policy{}); err == nil {
		t.Errorf("EncodeFloat(57.5) on integer attribute: nil error")
	}
	if _, _, err := income.EncodeFloat(math.NaN(), Policy{Clamp: true}); err == nil {
		t.Errorf("EncodeFloat(NaN): nil error")
	}
	if c, _, err := income.EncodeInt(50, Policy{}); err != nil || c != 2 {
		t.Errorf("EncodeInt(50) on numeric = %d, %v, want 2, nil", c, err)
	}
	if _, _, err := d.Attr(0).EncodeInt(1, Policy{}); err == nil {
		t.Errorf("EncodeInt on categorical: nil error")
	}
	if _, err := d.Attr(0).EncodeNull(); err == nil {
		t.Errorf("EncodeNull on non-nullable attribute: nil error")
	}
	if c, err := d.Attr(1).EncodeNull(); err != nil || c != 3 {
		t.Errorf("EncodeNull on nullable attribute = %d, %v, want 3, nil", c, err)
	}
}

func TestLabels(t *testing.T) {
	d := mustDomain(t, fullDomain)
	tests := []struct {
		attr, code int
		want       string
	}{
		{0, 1, "M"}, {1, 3, "NA"}, {2, 0, "0..9"}, {2, 9, "90..99"},
		{3, 0, "[0, 25)"}, {3, 3, "[75, 100]"}, {4, 4, ""}, {5, 2, "2"},
	}
	for _, tt := range tests {
		if got := d.Attr(tt.attr).Label(tt.code); got != tt.want {
			t.Errorf("%s.Label(%d) = %q, want %q", d.Attr(tt.attr).Name, tt.code, got, tt.want)
		}
	}
	a, _ := NewInteger("x", 0, 24, 10)
	if lo, hi := a.IntBucket(2); lo != 20 || hi != 24 {
		t.Errorf("IntBucket(2) = %d, %d, want 20, 24 (short last bucket)", lo, hi)
	}
	if a.Size() != 3 {
		t.Errorf("Size() = %d, want 3", a.Size())
	}
}

func TestDescribeTruncates(t *testing.T) {
	vals := make([]string, 40)
	for i := range vals {
		vals[i] = string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	a, err := NewCategorical("c", vals)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Describe(); !strings.Contains(got, "… 40 values in all") {
		t.Errorf("Describe() = %q, want a truncated list", got)
	}
}

func TestIntegerExtremes(t *testing.T) {
	a, err := NewInteger("x", math.MinInt64, math.MinInt64+9, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c, _, err := a.EncodeInt(math.MinInt64+3, Policy{}); err != nil || c != 3 {
		t.Errorf("EncodeInt(min+3) = %d, %v, want 3, nil", c, err)
	}
	if _, err := NewInteger("y", math.MinInt64, math.MaxInt64, 1); err == nil {
		t.Errorf("NewInteger over the whole int64 range: nil error, want a size error")
	}
}
