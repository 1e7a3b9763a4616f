package sqlsrc_test

import (
	"fmt"

	"github.com/dpsynth/synth/sqlsrc"
	"github.com/dpsynth/synth/universe"
)

// The counting SQL of two marginals of a small domain, for DuckDB.
func ExampleCompile() {
	sex, _ := universe.NewCategorical("sex", []string{"F", "M"})
	age, _ := universe.NewInteger("age", 0, 99, 50)
	dom, _ := universe.NewDomain(sex, age)
	q, err := sqlsrc.Compile(dom, sqlsrc.DuckDB, "people", "", [][]int{{0}, {0, 1}}, universe.Policy{})
	if err != nil {
		panic(err)
	}
	fmt.Println(q)
	// Output:
	// SELECT c0 AS "sex", c1 AS "age", COUNT(*) AS "count"
	// FROM (SELECT
	//     CASE WHEN "sex" IS NULL THEN (-1) WHEN CAST("sex" AS VARCHAR) = 'F' THEN 0 WHEN CAST("sex" AS VARCHAR) = 'M' THEN 1 ELSE (-1) END AS c0,
	//     CASE WHEN "age" IS NULL THEN (-1) WHEN NOT (regexp_full_match(TRIM(BOTH ' 	' FROM CAST("age" AS VARCHAR)), '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$')) THEN (-1) WHEN TRY_CAST(TRIM(BOTH ' 	' FROM CAST("age" AS VARCHAR)) AS DOUBLE) IS NULL THEN (-1) WHEN abs(TRY_CAST(TRIM(BOTH ' 	' FROM CAST("age" AS VARCHAR)) AS DOUBLE)) > CAST(1.7976931348623157e+308 AS DOUBLE) THEN (-1) WHEN TRY_CAST(TRIM(BOTH ' 	' FROM CAST("age" AS VARCHAR)) AS DOUBLE) <> FLOOR(TRY_CAST(TRIM(BOTH ' 	' FROM CAST("age" AS VARCHAR)) AS DOUBLE)) THEN (-1) WHEN TRY_CAST(TRIM(BOTH ' 	' FROM CAST("age" AS VARCHAR)) AS DOUBLE) < 0 OR TRY_CAST(TRIM(BOTH ' 	' FROM CAST("age" AS VARCHAR)) AS DOUBLE) > 99 THEN (-1) ELSE (CAST(TRY_CAST(TRIM(BOTH ' 	' FROM CAST("age" AS VARCHAR)) AS DOUBLE) AS BIGINT) - 0) // 50 END AS c1
	//   FROM "people") AS codes
	// GROUP BY GROUPING SETS ((c0), (c0, c1))
}
