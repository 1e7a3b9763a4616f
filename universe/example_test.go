package universe_test

import (
	"fmt"

	"github.com/dpsynth/synth/universe"
)

func Example() {
	d, err := universe.ParseDomain([]byte(`{"attributes": [
	  {"name": "sex", "type": "categorical", "values": ["F", "M"]},
	  {"name": "age", "type": "integer", "min": 0, "max": 99, "width": 10},
	  {"name": "income", "type": "numeric", "lower": 0, "upper": 100000, "bins": 4}
	]}`))
	if err != nil {
		panic(err)
	}
	k, _ := d.Size()
	fmt.Println("cells:", k)

	codes := make([]int, d.Len())
	for i, v := range []string{"M", "37", "61000"} {
		codes[i], _, err = d.Attr(i).EncodeString(v, universe.Policy{})
		if err != nil {
			panic(err)
		}
	}
	idx := d.Encode(codes)
	fmt.Println("index:", idx)
	d.Decode(idx, codes)
	for i, a := range d.Attrs() {
		fmt.Printf("%s = %s\n", a.Name, a.Label(codes[i]))
	}
	// Output:
	// cells: 80
	// index: 54
	// sex = M
	// age = 30..39
	// income = [50000, 75000)
}
