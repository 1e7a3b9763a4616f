package draft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dpsynth/synth/privacy"
)

// attribute is one drafted attribute of the domain file.
type attribute struct {
	Name     string
	Type     string // categorical, boolean, integer, numeric, date, timestamp
	Values   []string
	Min      *int64
	Max      *int64
	Width    *int64
	Lower    any // float64 (numeric) or string (date, timestamp)
	Upper    any
	Bins     int
	Bin      string
	TimeZone string
	Null     *string
	Other    string // categorical: the declared "other" value, one of Values
}

type kv struct {
	k string
	v any
}

// fields returns the attribute's fields in the domain file's order.
func (a attribute) fields() []kv {
	f := []kv{{"name", a.Name}, {"type", a.Type}}
	if a.Type == "categorical" {
		f = append(f, kv{"values", a.Values})
		if a.Other != "" {
			f = append(f, kv{"other", a.Other})
		}
	}
	if a.Min != nil {
		f = append(f, kv{"min", *a.Min}, kv{"max", *a.Max}, kv{"width", *a.Width})
	}
	if a.Lower != nil {
		f = append(f, kv{"lower", a.Lower}, kv{"upper", a.Upper})
	}
	if a.Bins > 0 {
		f = append(f, kv{"bins", a.Bins})
	}
	if a.Bin != "" {
		f = append(f, kv{"bin", a.Bin})
	}
	if a.TimeZone != "" {
		f = append(f, kv{"timezone", a.TimeZone})
	}
	if a.Null != nil {
		f = append(f, kv{"null", *a.Null})
	}
	return f
}

// marshal encodes v without HTML escaping.
func marshal(v any) (string, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func object(fields []kv) (string, error) {
	parts := make([]string, len(fields))
	for i, f := range fields {
		k, _ := marshal(f.k)
		v, err := marshal(f.v)
		if err != nil {
			return "", err
		}
		if ss, ok := f.v.([]string); ok {
			items := make([]string, len(ss))
			for j, x := range ss {
				items[j], _ = marshal(x)
			}
			v = "[" + strings.Join(items, ", ") + "]"
		}
		parts[i] = k + ": " + v
	}
	return "{" + strings.Join(parts, ", ") + "}", nil
}

// encode writes the domain file: the "draft" object (the budget, the
// privacy unit, the creation time and the notes), then one attribute per
// line.
func encode(st *settings, notes []string, attrs []attribute) ([]byte, error) {
	unit := "one row"
	if st.PrivacyUnit != "" {
		unit = st.PrivacyUnit
	}
	created := st.Created
	if created.IsZero() {
		created = time.Now()
	}
	delta := st.Delta
	if st.Epsilon == 0 {
		delta = 0
	}
	head, err := object([]kv{{"epsilon", st.Epsilon}, {"delta", delta}, {"privacy_unit", unit},
		{"max_rows_per_unit", st.k}, {"created", created.UTC().Format(time.RFC3339)}})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(`{"draft": ` + strings.TrimSuffix(head, "}") + `, "notes": [`)
	for i, n := range notes {
		s, _ := marshal(n)
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n   " + s)
	}
	b.WriteString("]},\n \"attributes\": [")
	for i, a := range attrs {
		s, err := object(a.fields())
		if err != nil {
			return nil, fmt.Errorf("draft: column %q: %w", a.Name, err)
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  " + s)
	}
	b.WriteString("\n ]}\n")
	return []byte(b.String()), nil
}

// schemaOnly drafts from the schema alone: no row is read, nothing is
// spent, and every column the schema does not settle gets a placeholder
// that a note asks to fill in.
func schemaOnly(t *table, st *settings) (*Draft, error) {
	notes := []string{
		"schema only (ε = 0): no row was read and nothing was spent; fill in every placeholder below from public knowledge (a code book, a schema, published ranges)",
	}
	var attrs []attribute
	for _, c := range t.cols {
		a := attribute{Name: c.name}
		if c.nullable {
			a.Null = ptr("")
		}
		switch c.src {
		case srcText:
			a.Type = "categorical"
			a.Values = []string{FillMe}
			notes = append(notes, fmt.Sprintf("column %q: text: replace the placeholder %q by the categories, or rewrite the attribute as integer (min, max, width), numeric (lower, upper, bins), date or timestamp (lower, upper, bin) or boolean; add \"null\" with its spelling if values are missing", c.name, FillMe))
		case srcBool:
			a.Type = "boolean"
		default:
			k := map[srcType]kind{srcInt: kindInt, srcFloat: kindReal, srcDate: kindDate, srcTimestamp: kindTimestamp}[c.src]
			placeholder(k, st, &a)
			notes = append(notes, fmt.Sprintf("column %q: %s from the schema (type %s): its bounds are placeholders to fill in", c.name, k, c.dt))
		}
		attrs = append(attrs, a)
	}
	notes = append(notes, t.skippedNotes()...)
	js, err := encode(st, notes, attrs)
	if err != nil {
		return nil, err
	}
	return &Draft{JSON: js, Spent: privacy.ApproxCost(0, 0), Notes: notes}, nil
}
