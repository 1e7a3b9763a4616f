package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/sqlsrc"
	"github.com/dpsynth/synth/universe"
)

// sqlOptions are the flags of "synth sql".
type sqlOptions struct {
	Domain         string
	Dialect        string
	Table          string
	Query          string
	Clamp          bool
	UnknownToOther bool
	Check          bool
	Histogram      bool
	workloadOptions
}

func (o *sqlOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Domain, "domain", "", "domain file (JSON), the public description of the table")
	fs.StringVar(&o.Dialect, "dialect", "", "SQL dialect: "+strings.Join(sqlsrc.Dialects(), ", "))
	fs.StringVar(&o.Table, "table", "", "table to count (a dotted name is quoted part by part)")
	fs.StringVar(&o.Query, "query", "", "SELECT whose result is counted, instead of --table")
	fs.BoolVar(&o.Clamp, "clamp", false, "clamp integer and numeric values outside the declared bounds (in SQL)")
	fs.BoolVar(&o.UnknownToOther, "unknown-to-other", false, "map unknown categories to the attribute's declared \"other\" value (in SQL)")
	fs.BoolVar(&o.Check, "check", false, "print the validation query instead: rows, and per column the values outside the domain with an example")
	fs.BoolVar(&o.Histogram, "histogram", false, "print the full histogram query (one GROUP BY over every attribute) instead of marginals")
	o.workloadOptions.AddFlags(fs)
}

func init() {
	register(&command{
		name:    "sql",
		summary: "print the SQL that counts a table's marginals in a database",
		usage: `Prints the SQL that computes, where the data lives, the marginal count tables a
release needs: the domain compiled to one expression per attribute giving its
integer code exactly as "synth inspect --data" would encode the value (every
column read as text, as in a CSV file), and one GROUP BY GROUPING SETS (a
UNION ALL of GROUP BYs for ClickHouse) over the workload's marginals.

Save the result as CSV (with a header) or Parquet: one column per attribute
used, holding the code or empty/NULL when the attribute is grouped out of the
row's set, and the column "count". "synth release --marginal-counts FILE"
reads it. Values outside the domain get the code -1, which that file reader
rejects naming the column: run the --check query first, it counts them per
column with an example. Nothing here connects to a database.

Examples:
  synth sql --domain adult-domain.json --marginals 3 --dialect duckdb --table adult
  synth sql --domain people.json --workload workload.json --dialect bigquery \
      --query 'SELECT * FROM ds.people WHERE year = 2024' --unknown-to-other
  synth sql --domain people.json --dialect spark --table people --check
  synth sql --domain people.json --dialect trino --table hive.db.people --histogram`,
		setup: setupFor[sqlOptions](runSQL),
	})
}

func runSQL(ctx context.Context, e *env, o *sqlOptions) error {
	if o.Domain == "" {
		return usagef("--domain is required")
	}
	if o.Dialect == "" {
		return usagef("--dialect is required (%s)", strings.Join(sqlsrc.Dialects(), ", "))
	}
	d, err := sqlsrc.ParseDialect(o.Dialect)
	if err != nil {
		return usagef("--dialect: %v", err)
	}
	if (o.Table == "") == (o.Query == "") {
		return usagef("give one of --table and --query")
	}
	workload := o.Workload != "" || o.Marginals > 0
	modes := 0
	for _, m := range []bool{o.Check, o.Histogram, workload} {
		if m {
			modes++
		}
	}
	if modes != 1 {
		return usagef("give one of --workload / --marginals K, --histogram and --check")
	}
	dom, err := universe.LoadDomain(o.Domain)
	if err != nil {
		return err
	}
	p := universe.Policy{Clamp: o.Clamp, UnknownToOther: o.UnknownToOther}
	var q string
	switch {
	case o.Check:
		q, err = sqlsrc.CompileCheck(dom, d, o.Table, o.Query, p)
	case o.Histogram:
		q, err = sqlsrc.Compile(dom, d, o.Table, o.Query, nil, p)
	default:
		wl, _, werr := o.spec().Load(dom)
		if werr != nil {
			return werr
		}
		var sets [][]int
		for _, m := range wl.Marginals() {
			sets = append(sets, m.Attrs)
		}
		for _, f := range wl.Families() {
			if f.Kind != query.Marginals {
				fmt.Fprintf(e.stderr, "synth sql: the workload's %s family needs the full histogram (--histogram); printing the marginals only\n", f.Kind)
				break
			}
		}
		if len(sets) == 0 {
			return usagef("the workload has no marginals; use --histogram")
		}
		q, err = sqlsrc.Compile(dom, d, o.Table, o.Query, sets, p)
	}
	if err != nil {
		return usagef("%v", err)
	}
	_, err = fmt.Fprintf(e.stdout, "%s;\n", q)
	return err
}
