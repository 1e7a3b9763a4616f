package draft_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpsynth/synth/draft"
	"github.com/dpsynth/synth/privacy"
)

// A draft of a 5,000-row table of people at ε = 2. A seeded Rand makes the
// example reproducible (and the draft not private against anyone who knows
// the seed): a release uses privacy.NewSecure.
func ExampleFile() {
	dir, _ := os.MkdirTemp("", "draft-example")
	defer os.RemoveAll(dir)
	var b strings.Builder
	b.WriteString("id,sex,age,income,joined,member\n")
	for i := range 5000 {
		age := fmt.Sprint(18 + i*37%62)
		if i%9 == 0 {
			age = "NA"
		}
		joined := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*7919%3650)
		fmt.Fprintf(&b, "%d,%s,%s,%d,%s,%s\n", i, []string{"F", "M"}[i%2], age, 1000*(i*104729%97),
			joined.Format(time.DateOnly), []string{"yes", "no"}[i%3/2])
	}
	path := filepath.Join(dir, "people.csv")
	os.WriteFile(path, []byte(b.String()), 0o600)

	d, err := draft.File(context.Background(), path, draft.Settings{
		Epsilon: 2, Delta: 1e-9,
		Exclude: []string{"id"},
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}, privacy.NewSeeded(42))
	if err != nil {
		fmt.Println(err)
		return
	}
	var f struct{ Attributes []json.RawMessage }
	json.Unmarshal(d.JSON, &f)
	for _, a := range f.Attributes {
		fmt.Println(string(a))
	}
	fmt.Println(d.Spent)
	// Output:
	// {"name": "sex", "type": "categorical", "values": ["F", "M", "(other)"], "other": "(other)"}
	// {"name": "age", "type": "integer", "min": 0, "max": 109, "width": 10, "null": "NA"}
	// {"name": "income", "type": "integer", "min": 0, "max": 129999, "width": 10000}
	// {"name": "joined", "type": "date", "lower": "2012-01-01", "upper": "2027-12-31", "bin": "quarter"}
	// {"name": "member", "type": "boolean"}
	// (ε, δ) = (2, 1e-09)
}
