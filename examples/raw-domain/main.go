// Command raw-domain writes people.csv, a raw table with string categories,
// integer incomes, ages and missing values, made from six columns of the
// embedded adult-reduced dataset through a label map. It is the input of
// the raw-domain walk-through (README.md in this folder): the table is
// released through the hand-written domain.json.
//
// Usage:
//
//	go run ./examples/raw-domain DIR
//
// The embedded table stores integer codes. The label map below turns each
// code into the Adult category names in alphabetical order, income>50K
// into an income in thousands and the age group into an age in years. The
// labels are illustrative (they exercise every kind of attribute), not a
// documentation of the original encoding. The values are a deterministic
// function of the row number and the codes: no randomness is involved.
package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dpsynth/synth/datasets"
)

// labels maps the codes of the embedded categorical columns to strings.
// Occupation code 0 is the Adult file's "?", a missing value: it becomes
// an empty field, which domain.json declares as the null token.
var labels = map[string][]string{
	"sex":  {"Female", "Male"},
	"race": {"Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"},
	"occupation": {"", "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing",
		"Handlers-cleaners", "Machine-op-inspct", "Other-service", "Priv-house-serv", "Prof-specialty",
		"Protective-serv", "Sales", "Tech-support", "Transport-moving"},
	"education": {"10th", "11th", "12th", "1st-4th", "5th-6th", "7th-8th", "9th", "Assoc-acdm", "Assoc-voc",
		"Bachelors", "Doctorate", "HS-grad", "Masters", "Preschool", "Prof-school", "Some-college"},
}

// ageEdges are the age groups of the embedded codes 0..9.
var ageEdges = []float64{17, 20, 25, 30, 35, 40, 45, 50, 60, 70, 91}

// columns is the order of the raw file's columns (not the domain's: ingest
// matches columns by name).
var columns = []string{"age", "sex", "race", "education", "occupation", "income"}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: raw-domain DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "raw-domain:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	ds, err := datasets.Lookup("adult-reduced")
	if err != nil {
		return err
	}
	b, err := datasets.ReadFile(ds.Data)
	if err != nil {
		return err
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return err
	}
	col := map[string]int{}
	for j, name := range recs[0] {
		col[name] = j
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(columns)
	row := make([]string, len(columns))
	for i, rec := range recs[1:] {
		code := func(name string) int {
			c, err := strconv.Atoi(rec[col[name]])
			if err != nil {
				panic(fmt.Sprintf("embedded %s row %d: %v", name, i+1, err))
			}
			return c
		}
		for j, name := range columns {
			switch name {
			case "age":
				// A whole age inside the group: lo, lo+1, ..., hi-1.
				c := code("age")
				lo, hi := ageEdges[c], ageEdges[c+1]
				row[j] = strconv.FormatFloat(lo+float64((i*7)%int(hi-lo)), 'f', -1, 64)
			case "income":
				// Thousands: 0..49 below 50K, 50..199 above.
				if code("income>50K") == 0 {
					row[j] = strconv.Itoa((i * 13) % 50)
				} else {
					row[j] = strconv.Itoa(50 + (i*13)%150)
				}
			default:
				row[j] = labels[name][code(name)]
			}
		}
		w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "people.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d rows, columns %v\n", path, len(recs)-1, columns)
	return nil
}
