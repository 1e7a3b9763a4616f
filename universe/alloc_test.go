package universe

import (
	"strconv"
	"strings"
	"testing"
)

// Typed and textual encoding of valid values allocates nothing (ingest
// calls these once per value).
func TestEncodeAllocs(t *testing.T) {
	d := mustDomain(t, fullDomain)
	sex, age, income, code := d.Attr(0), d.Attr(2), d.Attr(3), d.Attr(5)
	p := Policy{}
	cases := []struct {
		name string
		f    func()
	}{
		{"EncodeInt", func() { age.EncodeInt(42, p) }},
		{"EncodeFloat", func() { income.EncodeFloat(61.5, p) }},
		{"EncodeFloat integer", func() { age.EncodeFloat(42, p) }},
		{"EncodeString categorical", func() { sex.EncodeString("M", p) }},
		{"EncodeString integer", func() { age.EncodeString(" 42 ", p) }},
		{"EncodeString numeric", func() { income.EncodeString("61.5", p) }},
		{"EncodeString encoded", func() { code.EncodeString("3", p) }},
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(100, c.f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", c.name, n)
		}
	}
}

func TestDigits(t *testing.T) {
	for _, s := range []string{"", "0", "7", "42", "007", "123456789012345678", "1234567890123456789", "-1", "+1", "1.0", "1e3", "1_0", "٣", "9a"} {
		v, ok := digits(s)
		want, err := strconv.ParseInt(s, 10, 64)
		short := len(s) > 0 && len(s) <= 18 && strings.Trim(s, "0123456789") == ""
		if ok != short || ok && (err != nil || v != want) {
			t.Errorf("digits(%q) = %d, %v; strconv gives %d, %v", s, v, ok, want, err)
		}
	}
}
