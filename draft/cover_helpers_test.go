package draft

import (
	"encoding/json"
	"testing"
	"time"
)

// coverage returns the share of vals inside the first attribute's bounds.
func coverage(t testing.TB, d *Draft, vals []string) float64 {
	t.Helper()
	var f struct {
		Attributes []struct {
			Type         string
			Min, Max     *int64
			Lower, Upper any
			TimeZone     string
		}
	}
	if err := json.Unmarshal(d.JSON, &f); err != nil {
		t.Fatal(err)
	}
	a := f.Attributes[0]
	in := 0
	for _, s := range vals {
		ok := false
		switch a.Type {
		case "integer":
			v, _ := parseInt(s)
			ok = *a.Min <= v && v <= *a.Max
		case "numeric":
			v, _ := parseReal(s)
			ok = a.Lower.(float64) <= v && v <= a.Upper.(float64)
		case "date":
			ok = a.Lower.(string) <= s && s <= a.Upper.(string)
		case "timestamp":
			lo, _ := time.Parse(time.RFC3339, a.Lower.(string))
			hi, _ := time.Parse(time.RFC3339, a.Upper.(string))
			v, _ := time.Parse(time.RFC3339, s)
			ok = !v.Before(lo) && !v.After(hi)
		default:
			t.Fatalf("type %s", a.Type)
		}
		if ok {
			in++
		}
	}
	return float64(in) / float64(len(vals))
}
