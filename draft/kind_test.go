package draft

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/dpsynth/synth/universe"
	"time"

	"github.com/dpsynth/synth/privacy"
)

func TestClassifyText(t *testing.T) {
	loc, _ := time.LoadLocation("Europe/Paris")
	for _, c := range []struct {
		in   string
		want cellKind
	}{
		{"true", cBool}, {"FALSE", cBool}, {"t", cBool}, {"F", cBool}, {"Yes", cBool}, {"no", cBool}, {"y", cBool}, {"N", cBool},
		{"1", cInt}, {"0", cInt}, {" 42 ", cInt}, {"+7", cInt}, {"-3", cIntNeg},
		{"2.5", cReal}, {"1e3", cReal}, {"5.0", cReal}, {"-0.25", cRealNeg}, {"\t3.5", cReal},
		{"inf", cText}, {"0x10", cText}, {"1_000", cText}, {"1,5", cText},
		{"2024-02-29", cDate}, {"2023-02-29", cText}, {"2024-2-9", cText},
		{"2024-02-29T10:11:12Z", cTimestamp}, {"2024-02-29T10:11:12.123+01:00", cTimestamp},
		{"2024-02-29 10:11", cTimestamp}, {"2024-02-29 10:11:12", cTimestamp}, {"2024-02-29 10:11:12.5", cTimestamp},
		{"2024-02-29T10:11:12", cTimestamp}, {"2024-02-29T10:11", cTimestamp}, {"2024-02-29 10:11:12+02:00", cTimestamp},
		{"2024-02-29T25:11:12Z", cText}, {"2024-02-29X10:11", cText},
		{"hello", cText}, {"", cText},
	} {
		if got := classifyText(c.in, loc); got != c.want {
			t.Errorf("classifyText(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	// A timestamp without offset is read in the time zone.
	v, _ := parseTimestamp("2024-07-01 12:00", loc)
	if want := float64(time.Date(2024, 7, 1, 10, 0, 0, 0, time.UTC).Unix()); v != want {
		t.Errorf("parseTimestamp in Europe/Paris = %v, want %v", v, want)
	}
}

// TestDecide checks the post-processing of the vote on given noisy counts.
func TestDecide(t *testing.T) {
	st, _ := Settings{Epsilon: 1, Delta: 1e-9}.check()
	cells := layout(&column{src: srcText}, st)
	const sigma = 10.0
	vec := func(m map[cellKind]int64, spell map[string]int64) []int64 {
		out := make([]int64, len(cells))
		for i, c := range cells {
			if c.kind == cSpelling {
				out[i] = spell[st.nulls[c.spelling]]
			} else {
				out[i] = m[c.kind]
			}
		}
		return out
	}
	for _, c := range []struct {
		name  string
		kinds map[cellKind]int64
		spell map[string]int64
		want  kind
		null  string // "-" for none
	}{
		{"integers", map[cellKind]int64{cInt: 1000, cIntNeg: 20}, nil, kindInt, "-"},
		{"integers and a few reals", map[cellKind]int64{cInt: 1000, cReal: 15}, nil, kindInt, "-"},
		{"reals", map[cellKind]int64{cInt: 300, cReal: 700}, nil, kindReal, "-"},
		{"text wins", map[cellKind]int64{cInt: 800, cText: 200}, nil, kindText, "-"},
		{"dates", map[cellKind]int64{cDate: 1000, cText: 5}, map[string]int64{"NA": 100}, kindDate, "NA"},
		{"timestamps with dates", map[cellKind]int64{cDate: 300, cTimestamp: 700}, nil, kindTimestamp, "-"},
		{"dates and text", map[cellKind]int64{cDate: 700, cText: 300}, nil, kindText, "-"},
		{"booleans", map[cellKind]int64{cBool: 1000}, map[string]int64{"": 50, "?": 45}, kindBool, ""},
		{"booleans and ints", map[cellKind]int64{cBool: 500, cInt: 500}, nil, kindText, "-"},
		{"too few", map[cellKind]int64{cText: 60}, map[string]int64{"NA": 500}, kindNone, "NA"},
		{"null below 3σ", map[cellKind]int64{cInt: 1000}, map[string]int64{"NA": 30}, kindInt, "-"},
		{"weak signal is not boolean", map[cellKind]int64{cInt: 100, cBool: 14}, nil, kindInt, "-"},
	} {
		v := decide(srcText, cells, vec(c.kinds, c.spell), sigma, st)
		null := "-"
		if v.null != nil {
			null = *v.null
		}
		if v.kind != c.want || null != c.null {
			t.Errorf("%s: kind %v null %q, want %v %q", c.name, v.kind, null, c.want, c.null)
		}
	}
	// Two spellings above 4σ: the larger is the token, the other is noted.
	v := decide(srcText, cells, vec(map[cellKind]int64{cInt: 1000}, map[string]int64{"NA": 300, "": 100}), sigma, st)
	if v.null == nil || *v.null != "NA" || len(v.extraNulls) != 1 || v.extraNulls[0] != "" {
		t.Errorf("two spellings: null %v extra %q", v.null, v.extraNulls)
	}
}

// TestKindVoteCSV drafts a CSV file with a column of each kind, 15% of them
// "NA", at ε = 1, δ = 1e-9, n = 2,000.
//
// False failures: the columns are pure, so a wrong kind needs a sum of m
// noise draws (σ ≈ 29 here) above 4σ√m: with σ²-subgaussian noise that is
// at most e^-8 ≈ 3.4e-4 per comparison, and a column makes at most 6: at
// most 1.3% per draft (about 0.1% with Gaussian tails); a missed "NA"
// (300 rows against a threshold of 3σ ≈ 87) has probability below 1e-10.
// The seeds are fixed, so the test is deterministic.
func TestKindVoteCSV(t *testing.T) {
	const n = 2000
	g := privacy.NewSeeded(11)
	names := []string{"day", "when", "flag", "count", "price", "label"}
	cols := make([][]string, len(names))
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		at := base.Add(time.Duration(g.Uint64N(3*365*24*3600)) * time.Second)
		row := []string{
			at.Format(time.DateOnly),
			[]string{at.Format(time.RFC3339), at.Format("2006-01-02 15:04:05"), at.Format("2006-01-02 15:04")}[i%3],
			[]string{"true", "False", "YES", "no"}[g.Uint64N(4)],
			strconv.Itoa(int(g.Uint64N(50)) - 5),
			strconv.FormatFloat(float64(g.Uint64N(100000))/100, 'f', 2, 64),
			[]string{"red", "green", "blue"}[g.Uint64N(3)],
		}
		for j := range cols {
			if g.Uint64N(100) < 15 {
				row[j] = "NA"
			}
			cols[j] = append(cols[j], row[j])
		}
	}
	p := writeCSV(t, "kinds.csv", names, cols)
	want := map[string]string{"day": "date", "when": "timestamp", "flag": "boolean", "count": "integer", "price": "numeric", "label": "categorical"}
	for seed := uint64(1); seed <= 5; seed++ {
		d, err := File(context.Background(), p, Settings{Epsilon: 1, Delta: 1e-9}, privacy.NewSeeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		attrs := parseDomain(t, d.JSON).Attributes
		for _, a := range attrs {
			if a.Type != want[a.Name] || a.Null == nil || *a.Null != "NA" {
				t.Errorf("seed %d: column %s: type %s null %v, want %s null \"NA\"", seed, a.Name, a.Type, a.Null, want[a.Name])
			}
			if a.Name == "label" && fmt.Sprint(a.Values) != "[blue green red (other)]" {
				t.Errorf("seed %d: label values %q", seed, a.Values)
			}
		}
	}
}

// domainFile mirrors the draft's JSON; parseDomain rejects unknown fields,
// as the engine's parser does.
type domainFile struct {
	Draft struct {
		Epsilon        float64  `json:"epsilon"`
		Delta          float64  `json:"delta"`
		PrivacyUnit    string   `json:"privacy_unit"`
		MaxRowsPerUnit int      `json:"max_rows_per_unit"`
		Created        string   `json:"created"`
		Notes          []string `json:"notes"`
	} `json:"draft"`
	Attributes []domainAttr `json:"attributes"`
}

type domainAttr struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Values   []string `json:"values"`
	Other    string   `json:"other"`
	Min      *int64   `json:"min"`
	Max      *int64   `json:"max"`
	Width    *int64   `json:"width"`
	Lower    any      `json:"lower"`
	Upper    any      `json:"upper"`
	Bins     int      `json:"bins"`
	Bin      string   `json:"bin"`
	TimeZone string   `json:"timezone"`
	Null     *string  `json:"null"`
}

// allowed lists the fields each type may carry.
var allowed = map[string][]string{
	"categorical": {"name", "type", "values", "other", "null"},
	"boolean":     {"name", "type", "null"},
	"integer":     {"name", "type", "min", "max", "width", "null"},
	"numeric":     {"name", "type", "lower", "upper", "bins", "null"},
	"date":        {"name", "type", "lower", "upper", "bin", "null"},
	"timestamp":   {"name", "type", "lower", "upper", "bin", "timezone", "null"},
}

func parseDomain(t testing.TB, js []byte) domainFile {
	t.Helper()
	// The engine's own parser must accept every draft.
	if _, err := universe.ParseDomain(js); err != nil {
		t.Fatalf("universe.ParseDomain(draft) = %v\n%s", err, js)
	}
	var f domainFile
	dec := json.NewDecoder(bytesReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("draft JSON: %v\n%s", err, js)
	}
	var raw struct{ Attributes []map[string]json.RawMessage }
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	for i, a := range raw.Attributes {
		typ := f.Attributes[i].Type
		ok, known := allowed[typ]
		if !known {
			t.Fatalf("attribute %q: unknown type %q", f.Attributes[i].Name, typ)
		}
		for k := range a {
			if !containsString(ok, k) {
				t.Errorf("attribute %q (%s): field %q not allowed", f.Attributes[i].Name, typ, k)
			}
		}
		for _, k := range ok {
			if _, has := a[k]; !has && k != "null" && k != "other" {
				t.Errorf("attribute %q (%s): field %q missing", f.Attributes[i].Name, typ, k)
			}
		}
		if typ == "categorical" && len(f.Attributes[i].Values) == 0 {
			t.Errorf("attribute %q: no values", f.Attributes[i].Name)
		}
	}
	return f
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
