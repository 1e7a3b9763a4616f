package ingest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dpsynth/synth/universe"
)

// binding maps the input's columns to the domain's attributes.
type binding struct {
	attrCol  []int // attribute i is read from column attrCol[i]
	countCol int   // the count column, or -1
	unitCol  int   // the privacy unit's column, or -1
	names    []string
}

// bind matches column names to attributes. Every attribute needs exactly
// one column; the only other columns allowed are the count column and
// those the options ignore.
func bind(file string, names []string, dom *universe.Domain, opts *Options) (*binding, error) {
	countColumn := opts.CountColumn
	if countColumn != "" {
		if _, ok := dom.Index(countColumn); ok {
			return nil, &DataError{File: file, Column: countColumn, Err: fmt.Errorf("%w: %q names both the count column and an attribute of the domain", ErrCountConflict, countColumn)}
		}
	}
	b := &binding{attrCol: make([]int, dom.Len()), countCol: -1, unitCol: -1, names: names}
	for i := range b.attrCol {
		b.attrCol[i] = -1
	}
	attrs := "domain attributes: " + quoteList(dom.Names())
	if countColumn != "" {
		attrs += "; count column: " + strconv.Quote(countColumn)
	}
	if opts.PrivacyUnit != "" {
		attrs += "; privacy unit: " + strconv.Quote(opts.PrivacyUnit)
	}
	seen := make(map[string]int, len(names))
	var extra []string
	for j, n := range names {
		if k, dup := seen[n]; dup {
			return nil, &DataError{File: file, Column: n, Err: fmt.Errorf("%w: %q is column %d and column %d (%s)", ErrDuplicateCol, n, k+1, j+1, attrs)}
		}
		seen[n] = j
		if i, ok := dom.Index(n); ok {
			b.attrCol[i] = j
			continue
		}
		if countColumn != "" && n == countColumn {
			b.countCol = j
			continue
		}
		if opts.PrivacyUnit != "" && n == opts.PrivacyUnit {
			b.unitCol = j
			continue
		}
		if !opts.ignores(n) {
			extra = append(extra, n)
		}
	}
	var missing []string
	for i, c := range b.attrCol {
		if c < 0 {
			missing = append(missing, dom.Attr(i).Name)
		}
	}
	if countColumn != "" && b.countCol < 0 {
		missing = append(missing, countColumn)
	}
	if opts.PrivacyUnit != "" && b.unitCol < 0 {
		missing = append(missing, opts.PrivacyUnit)
	}
	switch {
	case len(extra) > 0:
		msg := quoteList(extra) + " is not an attribute of the domain"
		if len(extra) > 1 {
			msg = quoteList(extra) + " are not attributes of the domain"
		}
		if len(missing) > 0 {
			msg += "; missing " + quoteList(missing)
		}
		if countColumn == "" && len(extra) == 1 && (extra[0] == "count" || extra[0] == "n" || extra[0] == "weight") {
			msg += fmt.Sprintf("; for pre-aggregated input name the count column (--count-column %s)", extra[0])
		} else {
			it := "it"
			if len(extra) > 1 {
				it = "them"
			}
			// --exclude-columns names attributes of the domain to leave
			// out; a column the domain does not declare is skipped by
			// --ignore-extra-columns (or --columns, which keeps only the
			// attributes it names).
			msg += fmt.Sprintf("; to skip %s give --ignore-extra-columns", it)
		}
		return nil, &DataError{File: file, Column: extra[0], Err: fmt.Errorf("%w: %s (%s)", ErrExtraColumn, msg, attrs)}
	case len(missing) > 0:
		return nil, &DataError{File: file, Column: missing[0], Err: fmt.Errorf("%w: %s (%s; the input has %s)", ErrMissingColumn, quoteList(missing), attrs, quoteList(names))}
	}
	return b, nil
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}
