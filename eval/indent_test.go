package eval

import (
	"bytes"
	"encoding/json"
	"testing"
)

var indentCases = []string{
	`{}`, `[]`, `{"a":[]}`, `{"a":{},"b":[1,2,{}]}`, `"x"`, `1.5e-7`, `null`,
	`{"label":"a=1,b=\"q\"","true":0.25,"list":[{"k":"\\","v":[true,false,null]}]}`,
	`[[[]],[[1]],{"":{"":""}}]`, `{"s":"{[,:]}\\\"}"}`,
}

// TestAppendIndentedMatchesIndent checks appendIndented against
// json.Indent(dst, src, "", "  ") on compact JSON.
func TestAppendIndentedMatchesIndent(t *testing.T) {
	for _, in := range indentCases {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(in), "", "  "); err != nil {
			t.Fatalf("json.Indent(%s): %v", in, err)
		}
		if got := appendIndented(nil, []byte(in)); string(got) != want.String() {
			t.Errorf("appendIndented(%s) = %q, want %q", in, got, want.String())
		}
	}
}

// TestReportJSONIndented checks that a report's JSON is what
// encoding/json writes with SetIndent("", "  ").
func TestReportJSONIndented(t *testing.T) {
	v := map[string]any{"schema": 3, "queries": []QueryError{{Label: "a=<1>&b", True: 0.5, Synthetic: 1e-9, AbsError: 0.5}}, "empty": []int{}, "obj": struct{}{}}
	got, err := marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Errorf("marshal = %q, want %q", got, want.String())
	}
}

func FuzzAppendIndented(f *testing.F) {
	for _, in := range indentCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, in); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := appendIndented(nil, compact.Bytes()); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("appendIndented(%q) = %q, want %q", compact.Bytes(), got, want.Bytes())
		}
	})
}
