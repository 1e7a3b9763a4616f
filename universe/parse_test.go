package universe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDomainPositions(t *testing.T) {
	tests := []struct{ src, want string }{
		// JSON syntax: where the syntax breaks.
		{"{\"attributes\": [\n  {\"name\": \"a\", \"type\": \"encoded\", \"size\": 2},\n  {\"name\": \"b\" \"type\": \"encoded\"}\n]}",
			`3:16: invalid character '"' after object key:value pair`},
		{"{\"a\": 2,\n \"b\": 3,\n}", `3:1: invalid character '}' looking for beginning of object key string`},
		{"{\"a\": 2", `1:8: unexpected end of JSON input`},
		{"{\"a\": 2}\n{", `2:1: trailing data`},
		{"[1, 2]", `1:1: a domain must be a JSON object`},
		// Field errors name the attribute and point at the key.
		{"{\"attributes\": [\n  {\"name\": \"age\", \"type\": \"integer\",\n   \"min\": 0, \"max\": 99, \"widht\": 10}\n]}",
			`3:25: attribute "age": unknown field "widht" (did you mean "width"?); fields of an integer attribute: name, type, min, max, width, null`},
		{"{\"attributes\": [{\"name\": \"inc\", \"type\": \"numeric\", \"lower\": 0, \"upper\": 1, \"bin\": 4}]}",
			`1:76: attribute "inc": field "bin" is not allowed for type numeric (did you mean "bins"?)`},
		{"{\"attributes\": [{\"name\": \"a\", \"type\": \"encoded\", \"colour\": 1, \"size\": 2}]}",
			`1:50: attribute "a": unknown field "colour"; fields of an encoded attribute: name, type, size, null`},
		{"{\"attributes\": [{\"name\": \"a\", \"type\": \"integer\", \"min\": \"0\", \"max\": 9}]}",
			`1:50: attribute "a": field "min": want an integer, got string (write it without quotes)`},
		{"{\"attributes\": [{\"name\": \"a\", \"type\": \"categorical\", \"values\": [1, 2]}]}",
			`1:54: attribute "a": field "values": want a list of strings, got number (write the categories as strings: ["1", "2"])`},
		{"{\"attributes\": [{\"name\": \"a\", \"type\": \"encoded\", \"size\": 2, \"size\": 3}]}",
			`1:61: attribute "a": field "size" given twice`},
		{"{\"attributes\": [{\"name\": \"a\", \"type\": \"categorical\", \"values\": [\"x\"], \"min\": 1}]}",
			`1:71: attribute "a": field "min" is not allowed for type categorical (allowed: name, type, values, other, null)`},
		{"{\"attributes\": [{\"name\": \"a\", \"type\": \"txt\"}]}", `1:31: attribute "a": unknown type "txt"`},
		{"{\"attributes\": [\n {\"name\": \"a\", \"type\": \"integer\", \"min\": 5, \"max\": 1}]}",
			`2:2: attribute "a": min 5 is greater than max 1`},
		{"{\"attributes\": [\"a\"]}", `1:17: attribute 1: want an object`},
		{"{\"attributes\": [{\"name\": \"a\", \"type\": \"encoded\", \"size\": 2}], \"version\": 1}",
			`1:63: unknown field "version" (the full form has only "attributes" and "draft")`},
		{"{\n  \"a\": 2,\n  \"b\": {\"type\": \"integer\"}}", `3:8: attribute "b": shorthand domains map each attribute to its size`},
		{"{\"sex\": 2, \"age\": 0}", `1:19: attribute "age": size must be an integer in 1..`},
		// Multi-byte characters count as one column.
		{"{\"é\": 2, \"ü\": x}", `1:15: invalid character 'x'`},
	}
	for _, tt := range tests {
		_, err := ParseDomain([]byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseDomain(%q) = %v, want error containing %q", tt.src, err, tt.want)
		}
		var pe *PositionError
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("ParseDomain(%q) = %T, want a *PositionError", tt.src, err)
		}
	}
}

func TestLoadDomainNamesFileAndPosition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "domain.json")
	src := "{\"attributes\": [\n  {\"name\": \"sex\", \"type\": \"categorical\", \"values\": [\"F\", \"M\"]},\n  {\"name\": \"age\", \"type\": \"integer\", \"min\": 0, \"max\": 99, \"widht\": 10}\n]}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDomain(path)
	want := path + `:3:59: attribute "age": unknown field "widht"`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("LoadDomain = %v, want prefix %q", err, want)
	}
	var de *DomainError
	if !errors.As(err, &de) {
		t.Fatalf("LoadDomain = %T, want a *DomainError", err)
	}
	// Errors without a position keep "file: message".
	if err := os.WriteFile(path, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDomain(path); err == nil || err.Error() != path+": domain has no attributes" {
		t.Errorf("LoadDomain({}) = %v, want %q", err, path+": domain has no attributes")
	}
}

func TestProject(t *testing.T) {
	d := mustDomain(t, fullDomain) // sex race age income hours code
	tests := []struct {
		names   []string
		exclude bool
		want    string // names kept, or the error
	}{
		{[]string{"age", "sex"}, false, "sex,age"},
		{[]string{"code"}, false, "code"},
		{[]string{"sex", "race", "age", "income", "hours", "code"}, false, "sex,race,age,income,hours,code"},
		{[]string{"agee", "sex", "zip"}, false, `"agee", "zip" are not attributes of the domain (domain attributes: "sex", "race"`},
		{[]string{"sex", "sex"}, false, `"sex" named twice`},
		{nil, false, "leaves no attribute"},
		{[]string{"income", "hours"}, true, "sex,race,age,code"},
		{nil, true, "sex,race,age,income,hours,code"},
		{[]string{"zip"}, true, `"zip" is not an attribute of the domain`},
		{[]string{"sex", "race", "age", "income", "hours", "code"}, true, "nothing would be left"},
	}
	for _, tt := range tests {
		var (
			p   *Domain
			err error
		)
		if tt.exclude {
			p, err = d.Exclude(tt.names)
		} else {
			p, err = d.Project(tt.names)
		}
		got := ""
		if err != nil {
			var ne *NameError
			if !errors.As(err, &ne) {
				t.Errorf("Project/Exclude(%v) error %T, want *NameError", tt.names, err)
			}
			got = err.Error()
		} else {
			got = strings.Join(p.Names(), ",")
			// Attributes keep their declarations; strides follow the new order.
			k := uint64(1)
			for _, a := range p.Attrs() {
				i, _ := d.Index(a.Name)
				if d.Attr(i) != a {
					t.Errorf("attribute %q is not the domain's", a.Name)
				}
				k *= uint64(a.Size())
			}
			if size, _ := p.Size(); size != k {
				t.Errorf("projected size %d, want %d", size, k)
			}
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("Project/Exclude(%v, exclude %v) = %q, want %q", tt.names, tt.exclude, got, tt.want)
		}
	}
}
