package ingest_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

func Example() {
	dom, err := universe.ParseDomain([]byte(`{"attributes": [
	  {"name": "sex", "type": "categorical", "values": ["F", "M"]},
	  {"name": "age", "type": "integer", "min": 0, "max": 99, "width": 50}
	]}`))
	if err != nil {
		panic(err)
	}
	data := "age,sex\n37,F\n61,M\n12,F\n"
	counts, st, err := ingest.ReadCSV(context.Background(), strings.NewReader(data), "people.csv", dom, ingest.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("n:", st.N, "distinct cells:", st.Distinct)
	for i := range counts.Distinct() {
		c := counts.Codes(i)
		fmt.Printf("sex=%s age=%s: %d\n", dom.Attr(0).Label(int(c[0])), dom.Attr(1).Label(int(c[1])), counts.Count(i))
	}

	// Values outside the declared domain fail the read: the error lists
	// them (the first ingest.MaxReported) and the repairs that would apply.
	bad := "age,sex\n37,F\n130,M\n-1,X\n"
	_, _, err = ingest.ReadCSV(context.Background(), strings.NewReader(bad), "people.csv", dom, ingest.Options{})
	fmt.Println(err)
	// Output:
	// n: 3 distinct cells: 2
	// sex=F age=0..49: 2
	// sex=M age=50..99: 1
	// people.csv: row 2, column "age": out of range (declared: integer 0..99 (width 50))
	// people.csv: row 3, column "age": out of range (declared: integer 0..99 (width 50))
	// people.csv: row 3, column "sex": unknown category (declared: categorical {"F", "M"})
	// hint: --clamp moves numbers out of range ("age") to the nearest declared bound, row by row (the count goes to stderr and the internal report, never to a public file)
	// hint: unknown categories of "sex": declare them in the domain's "values", or declare an "other" value and use --unknown-to-other (docs/DOMAIN.md)
	// hint: the values themselves are not printed (they are private data, and messages land in logs); --show-values prints them
}

func ExampleOptions_preAggregated() {
	dom, _ := universe.ParseDomain([]byte(`{"sex": 2, "smoker": 2}`))
	// The output of SELECT sex, smoker, COUNT(*) AS n FROM t GROUP BY sex, smoker.
	data := "sex,smoker,n\n0,0,120\n0,1,30\n1,0,95\n1,1,0\n"
	_, st, err := ingest.ReadCSV(context.Background(), strings.NewReader(data), "counts.csv", dom, ingest.Options{CountColumn: "n"})
	if err != nil {
		panic(err)
	}
	fmt.Println("rows:", st.Rows, "n:", st.N, "distinct cells:", st.Distinct)
	// Output:
	// rows: 4 n: 245 distinct cells: 3
}
