package universe

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/dpsynth/synth/datasets"
)

func mustDomain(t testing.TB, src string) *Domain {
	t.Helper()
	d, err := ParseDomain([]byte(src))
	if err != nil {
		t.Fatalf("ParseDomain(%s): %v", src, err)
	}
	return d
}

func TestShippedDomains(t *testing.T) {
	tests := []struct {
		name  string
		attrs int
		exact string // exact size, "" to skip
		log10 float64
	}{
		{"adult-reduced", 7, "336000", 5.526},
		{"adult", 14, "641263392000000000", 17.807},
		{"adult-gem", 13, "594397440000", 11.774},
		{"titanic", 9, "89159616", 7.950},
		{"nltcs", 16, "65536", 4.816},
	}
	for _, tt := range tests {
		ds, err := datasets.Lookup(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := datasets.ReadFile(ds.Domain)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseDomain(b)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if d.Len() != tt.attrs {
			t.Errorf("%s: Len() = %d, want %d", tt.name, d.Len(), tt.attrs)
		}
		if got := d.SizeBig().String(); got != tt.exact {
			t.Errorf("%s: SizeBig() = %s, want %s", tt.name, got, tt.exact)
		}
		if got := d.Log10Size(); math.Abs(got-tt.log10) > 1e-3 {
			t.Errorf("%s: Log10Size() = %.4f, want %.3f", tt.name, got, tt.log10)
		}
	}
}

func TestShorthandKeepsOrder(t *testing.T) {
	d := mustDomain(t, `{"education": 16, "marital-status": 7, "occupation": 15, "race": 5, "sex": 2, "income>50K": 2, "age": 10}`)
	want := []string{"education", "marital-status", "occupation", "race", "sex", "income>50K", "age"}
	if got := d.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if s := d.Strides(); s[len(s)-1] != 1 || s[0] != 336000/16 {
		t.Errorf("Strides() = %v, want last 1 and first %d", s, 336000/16)
	}
}

const fullDomain = `{"attributes": [
  {"name": "sex", "type": "categorical", "values": ["F", "M"]},
  {"name": "race", "type": "categorical", "values": ["a", "b", "z"], "other": "z", "null": "NA"},
  {"name": "age", "type": "integer", "min": 0, "max": 99, "width": 10},
  {"name": "income", "type": "numeric", "lower": 0, "upper": 100, "bins": 4},
  {"name": "hours", "type": "numeric", "edges": [0, 20, 40, 60, 100], "null": ""},
  {"name": "code", "type": "encoded", "size": 4}
]}`

func TestParseFull(t *testing.T) {
	d := mustDomain(t, fullDomain)
	wantSizes := []int{2, 4, 10, 4, 5, 4}
	for i, a := range d.Attrs() {
		if a.Size() != wantSizes[i] {
			t.Errorf("attribute %q: Size() = %d, want %d", a.Name, a.Size(), wantSizes[i])
		}
	}
	if k, ok := d.Size(); !ok || k != 2*4*10*4*5*4 {
		t.Errorf("Size() = %d, %v, want %d, true", k, ok, 2*4*10*4*5*4)
	}
	// Round trip through MarshalJSON.
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := ParseDomain(b)
	if err != nil {
		t.Fatalf("re-parse of %s: %v", b, err)
	}
	for i := range d.Attrs() {
		if a, b := d.Attr(i).Describe(), d2.Attr(i).Describe(); a != b {
			t.Errorf("round trip attribute %d: %s, want %s", i, b, a)
		}
	}
}

func TestParseDomainErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{``, "empty domain"},
		{`[1,2]`, "must be a JSON object"},
		{`{"a": 0}`, `attribute "a": size must be an integer in 1..`},
		{`{"a": -3}`, `size must be an integer`},
		{`{"a": 2.5}`, `size must be an integer`},
		{`{"a": "x"}`, `shorthand domains map each attribute to its size`},
		{`{"a": 2, "a": 3}`, `attribute "a" declared twice`},
		{`{"a": 2} x`, `trailing data`},
		{`{}`, `no attributes`},
		{`{"attributes": []}`, `no attributes`},
		{`{"attributes": [{"type": "encoded", "size": 2}]}`, `attribute 1 has no name`},
		{`{"attributes": [{"name": "a", "size": 2}]}`, `missing "type"`},
		{`{"attributes": [{"name": "a", "type": "text"}]}`, `unknown type "text"`},
		{`{"attributes": [{"name": "a", "type": "encoded", "size": 2, "colour": 1}]}`, `unknown field "colour"`},
		{`{"attributes": [{"name": "a", "type": "categorical", "values": []}]}`, `at least one value`},
		{`{"attributes": [{"name": "a", "type": "categorical", "values": ["x", "x"]}]}`, `value "x" declared twice`},
		{`{"attributes": [{"name": "a", "type": "categorical", "values": ["x"], "other": "y"}]}`, `other value "y" is not one of the declared values`},
		{`{"attributes": [{"name": "a", "type": "categorical", "values": ["x"], "null": "x"}]}`, `null token "x" is also a declared value`},
		{`{"attributes": [{"name": "a", "type": "categorical", "values": ["x"], "min": 1}]}`, `field "min" is not allowed for type categorical`},
		{`{"attributes": [{"name": "a", "type": "integer", "min": 5}]}`, `needs "min" and "max"`},
		{`{"attributes": [{"name": "a", "type": "integer", "min": 5, "max": 1}]}`, `min 5 is greater than max 1`},
		{`{"attributes": [{"name": "a", "type": "integer", "min": 0, "max": 9, "width": 0}]}`, `width must be positive`},
		{`{"attributes": [{"name": "a", "type": "integer", "min": 0, "max": 9999999999}]}`, `over the limit`},
		{`{"attributes": [{"name": "a", "type": "numeric", "lower": 0, "upper": 1}]}`, `needs "bins"`},
		{`{"attributes": [{"name": "a", "type": "numeric", "lower": 1, "upper": 1, "bins": 2}]}`, `need finite lower < upper`},
		{`{"attributes": [{"name": "a", "type": "numeric", "lower": 0, "upper": 1, "bins": 0}]}`, `bins must be positive`},
		{`{"attributes": [{"name": "a", "type": "numeric", "edges": [0, 1], "bins": 2}]}`, `either "bins" or "edges"`},
		{`{"attributes": [{"name": "a", "type": "numeric", "edges": [0, 2, 1]}]}`, `strictly increasing`},
		{`{"attributes": [{"name": "a", "type": "numeric", "edges": [0]}]}`, `at least two edges`},
		{`{"attributes": [{"name": "a", "type": "numeric", "edges": [0, 1], "lower": -1}]}`, `lower and upper must equal`},
		{`{"attributes": [{"name": "a", "type": "numeric", "edges": [0, 1e400]}]}`, `1:50: attribute "a": field "edges": want a list of numbers, got number 1e400`},
		{`{"attributes": [{"name": "a", "type": "encoded"}]}`, `needs "size"`},
		{`{"attributes": [{"name": "a", "type": "encoded", "size": 2}, {"name": "a", "type": "encoded", "size": 2}]}`, `declared twice`},
	}
	for _, tt := range tests {
		_, err := ParseDomain([]byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseDomain(%s) = %v, want error containing %q", tt.src, err, tt.want)
		}
	}
}

func TestHugeUniverse(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 30 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"a%02d": 1000`, i)
	}
	b.WriteString("}")
	d := mustDomain(t, b.String())
	if _, ok := d.Size(); ok {
		t.Errorf("Size() fits uint64 for 1000^30 cells")
	}
	want := new(big.Int).Exp(big.NewInt(1000), big.NewInt(30), nil)
	if d.SizeBig().Cmp(want) != 0 {
		t.Errorf("SizeBig() = %s, want %s", d.SizeBig(), want)
	}
	if d.Indexable() {
		t.Errorf("Indexable() = true for 10^90 cells")
	}
	_, err := d.CheckExplicit(0)
	if err == nil || !strings.Contains(err.Error(), "10^90.00") || !strings.Contains(err.Error(), "Hint:") {
		t.Errorf("CheckExplicit = %v, want a TooLargeError naming 10^90.00 with a hint", err)
	}
	// Counts still work, keyed by packed codes.
	c := NewCounts(d)
	codes := make([]int, 30)
	codes[3] = 999
	for range 3 {
		if err := c.Add(codes, 2); err != nil {
			t.Fatal(err)
		}
	}
	codes[3] = 1
	c.Add(codes, 1)
	if c.Total() != 7 || c.Distinct() != 2 {
		t.Errorf("Total, Distinct = %d, %d, want 7, 2", c.Total(), c.Distinct())
	}
}

func TestCheckExplicit(t *testing.T) {
	d := mustDomain(t, `{"a": 1000, "b": 336}`)
	k, err := d.CheckExplicit(0)
	if err != nil || k != 336000 {
		t.Errorf("CheckExplicit(0) = %d, %v, want 336000, nil", k, err)
	}
	if _, err := d.CheckExplicit(1 << 20); err == nil {
		t.Errorf("CheckExplicit(1 MiB) = nil error, want refusal of a 2.6 MiB vector")
	}
	if got := FormatBytes(d.ExplicitBytes()); got != "2.6 MiB" {
		t.Errorf("FormatBytes = %q, want %q", got, "2.6 MiB")
	}
	if got := FormatCount(d.SizeBig()); got != "336,000" {
		t.Errorf("FormatCount = %q, want %q", got, "336,000")
	}
}

func TestWithNullTokens(t *testing.T) {
	d, err := ParseDomain([]byte(`{"attributes": [
  {"name": "a", "type": "categorical", "values": ["x", "y"], "null": "NA"},
  {"name": "b", "type": "integer", "min": 0, "max": 9, "null": "?"},
  {"name": "c", "type": "encoded", "size": 3}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := d.WithNullTokens(func(*Attribute) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", "", ""} {
		if got := e.Attr(i).NullToken; got != want {
			t.Errorf("attribute %d: NullToken = %q, want %q", i, got, want)
		}
	}
	if d.Attr(0).NullToken != "NA" || e.Attr(0).Size() != 3 || e.Attr(1).Size() != 11 {
		t.Errorf("the original changed or the sizes did: %q, %d, %d", d.Attr(0).NullToken, e.Attr(0).Size(), e.Attr(1).Size())
	}
	if c, _, err := e.Attr(0).EncodeString("", Policy{}); err != nil || c != 2 {
		t.Errorf("EncodeString(\"\") = %d, %v; want the null code 2", c, err)
	}
	if _, err := d.WithNullTokens(func(*Attribute) string { return "x" }); err == nil {
		t.Error("a null token equal to a declared value: no error")
	}
}
