package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/contrib"
	"github.com/dpsynth/synth/privacy"
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
	PrivacyUnit    string
	MaxRowsPerUnit int
	JSON           bool
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
	fs.StringVar(&o.PrivacyUnit, "privacy-unit", "", "column identifying a privacy unit: count only the rows a release with --max-rows-per-unit K keeps (the same rule as synth release; with --check, also count NULL units)")
	fs.IntVar(&o.MaxRowsPerUnit, "max-rows-per-unit", 0, "K, with --privacy-unit: the most rows one unit contributes")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of the SQL text: the query, the dialect, what it computes, its attribute sets and the privacy unit's salt")
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
  synth sql --domain people.json --dialect trino --table hive.db.people --histogram
  synth sql --domain ratings.json --marginals 2 --dialect postgres --table ratings \
      --privacy-unit user_id --max-rows-per-unit 16

With --privacy-unit COLUMN --max-rows-per-unit K the SQL keeps at most K rows
of each unit (a person: every row with the same COLUMN) before counting, by
the rule synth release uses: it ranks each unit's rows by an MD5 keyed with a
salt and keeps the K first. The salt, a fresh random one on every run, is
written into the SQL as a literal; it makes the choice uniform and
reproducible, and the guarantee does not depend on its secrecy. Give the
counts to "synth release --marginal-counts FILE --privacy-unit COLUMN
--max-rows-per-unit K" so that the release calibrates its noise to K.`,
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
	co := &sqlsrc.CompileOptions{Table: o.Table, Query: o.Query, Policy: universe.Policy{Clamp: o.Clamp, UnknownToOther: o.UnknownToOther}}
	if co.Unit, err = o.unit(); err != nil {
		return err
	}
	var q string
	kind := "marginals"
	switch {
	case o.Check:
		kind = "check"
		q, err = sqlsrc.CompileCheckWith(dom, d, co)
	case o.Histogram:
		kind = "histogram"
		q, err = sqlsrc.CompileWith(dom, d, co)
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
		co.Sets = sets
		q, err = sqlsrc.CompileWith(dom, d, co)
	}
	if err != nil {
		return usagef("%v", err)
	}
	if o.JSON {
		return writeSQLJSON(e, dom, d, kind, q, co)
	}
	if co.Unit != nil {
		fmt.Fprintf(e.stdout, "-- Keeps at most %d rows of each privacy unit (%s) before counting. The salt '%s' was drawn at random\n"+
			"-- for this query: it makes the choice of rows uniform and reproducible; the guarantee does not depend on its secrecy.\n",
			co.Unit.MaxRows, o.PrivacyUnit, co.Unit.Salt)
	}
	_, err = fmt.Fprintf(e.stdout, "%s;\n", q)
	return err
}

// unit is the privacy unit's bound of the flags (nil without
// --privacy-unit), with a fresh salt from crypto/rand.
func (o *sqlOptions) unit() (*sqlsrc.Unit, error) {
	switch {
	case o.PrivacyUnit == "" && o.MaxRowsPerUnit == 0:
		return nil, nil
	case o.PrivacyUnit == "" || o.MaxRowsPerUnit < 1:
		return nil, usagef("--privacy-unit COLUMN and --max-rows-per-unit K (K >= 1) go together")
	}
	r, err := privacy.NewSecure()
	if err != nil {
		return nil, err
	}
	return &sqlsrc.Unit{Column: o.PrivacyUnit, MaxRows: o.MaxRowsPerUnit, Salt: contrib.NewSalt(r.Uint64)}, nil
}

// sqlJSON is what "synth sql --json" prints.
type sqlJSON struct {
	Dialect string `json:"dialect"`
	// Kind is "marginals", "histogram" or "check".
	Kind string `json:"kind"`
	// Sets are the attribute sets counted (marginals), by name.
	Sets [][]string `json:"sets,omitempty"`
	// Columns are the result's columns.
	Columns []string     `json:"columns"`
	Unit    *sqlUnitJSON `json:"privacy_unit,omitempty"`
	SQL     string       `json:"sql"`
}

type sqlUnitJSON struct {
	Column         string `json:"column"`
	MaxRowsPerUnit int    `json:"max_rows_per_unit"`
	// Salt was drawn for this query; the guarantee does not depend on its
	// secrecy.
	Salt string `json:"salt"`
}

func writeSQLJSON(e *env, dom *universe.Domain, d sqlsrc.Dialect, kind, q string, co *sqlsrc.CompileOptions) error {
	out := sqlJSON{Dialect: d.String(), Kind: kind, SQL: q + ";"}
	switch kind {
	case "check":
		// n, then per attribute i: badI, exampleI (and repairedI with a
		// repair policy), then null_units with a privacy unit.
		out.Columns = []string{"n"}
		for i := range dom.Len() {
			out.Columns = append(out.Columns, fmt.Sprintf("bad%d", i), fmt.Sprintf("example%d", i))
			if co.Policy.Clamp || co.Policy.UnknownToOther {
				out.Columns = append(out.Columns, fmt.Sprintf("repaired%d", i))
			}
		}
		if co.Unit != nil {
			out.Columns = append(out.Columns, "null_units")
		}
	case "histogram":
		out.Columns = append(dom.Names(), sqlsrc.CountColumn)
	default:
		used := make([]bool, dom.Len())
		for _, s := range co.Sets {
			names := make([]string, len(s))
			for i, a := range s {
				names[i] = dom.Attr(a).Name
				used[a] = true
			}
			out.Sets = append(out.Sets, names)
		}
		for i, u := range used {
			if u {
				out.Columns = append(out.Columns, dom.Attr(i).Name)
			}
		}
		out.Columns = append(out.Columns, sqlsrc.CountColumn)
	}
	if u := co.Unit; u != nil {
		out.Unit = &sqlUnitJSON{Column: u.Column, MaxRowsPerUnit: u.MaxRows, Salt: string(u.Salt)}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(append(b, '\n'))
	return err
}
