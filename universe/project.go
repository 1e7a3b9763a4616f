package universe

import (
	"fmt"
	"strconv"
	"strings"
)

// NameError reports attribute names a caller asked for that the domain
// does not declare (e.g. in --columns). It is a settings error, not a
// problem with the domain file.
type NameError struct {
	// Option is what named them, e.g. "--columns"; "" in Project's own use.
	Option string
	// Names are the unknown or repeated names, in the order given.
	Names []string
	// Reason says what is wrong with them.
	Reason string
	// Known are the domain's attribute names.
	Known []string
}

func (e *NameError) Error() string {
	var b strings.Builder
	if e.Option != "" {
		b.WriteString(e.Option)
		b.WriteString(": ")
	}
	q := make([]string, len(e.Names))
	for i, n := range e.Names {
		q[i] = strconv.Quote(n)
	}
	b.WriteString(strings.Join(q, ", "))
	b.WriteString(" ")
	b.WriteString(e.Reason)
	if len(e.Known) > 0 {
		kq := make([]string, len(e.Known))
		for i, n := range e.Known {
			kq[i] = strconv.Quote(n)
		}
		b.WriteString(" (domain attributes: ")
		b.WriteString(strings.Join(kq, ", "))
		b.WriteString(")")
	}
	return b.String()
}

// check returns a *NameError for names the domain does not have or that
// repeat.
func (d *Domain) check(names []string) error {
	var unknown, twice []string
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if _, ok := d.byName[n]; !ok {
			unknown = append(unknown, n)
		} else if seen[n] {
			twice = append(twice, n)
		}
		seen[n] = true
	}
	switch {
	case len(unknown) == 1:
		return &NameError{Names: unknown, Reason: "is not an attribute of the domain", Known: d.Names()}
	case len(unknown) > 1:
		return &NameError{Names: unknown, Reason: "are not attributes of the domain", Known: d.Names()}
	case len(twice) > 0:
		return &NameError{Names: twice, Reason: "named twice"}
	}
	return nil
}

// Project returns the domain restricted to the named attributes, kept in
// the domain's order (not the order of names), so that the mixed radix and
// the output columns follow the domain file. Unknown or repeated names are
// a *NameError. The attributes are shared with d (they are immutable).
func (d *Domain) Project(names []string) (*Domain, error) {
	if err := d.check(names); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, &NameError{Reason: "leaves no attribute: name at least one"}
	}
	keep := make(map[string]bool, len(names))
	for _, n := range names {
		keep[n] = true
	}
	return d.filter(func(a *Attribute) bool { return keep[a.Name] })
}

// Exclude returns the domain without the named attributes (the others
// keep their order). Unknown or repeated names are a *NameError, and so is
// excluding every attribute.
func (d *Domain) Exclude(names []string) (*Domain, error) {
	if err := d.check(names); err != nil {
		return nil, err
	}
	drop := make(map[string]bool, len(names))
	for _, n := range names {
		drop[n] = true
	}
	if len(drop) == len(d.attrs) {
		return nil, &NameError{Names: names, Reason: "are every attribute of the domain: nothing would be left"}
	}
	return d.filter(func(a *Attribute) bool { return !drop[a.Name] })
}

func (d *Domain) filter(keep func(*Attribute) bool) (*Domain, error) {
	var attrs []*Attribute
	for _, a := range d.attrs {
		if keep(a) {
			attrs = append(attrs, a)
		}
	}
	nd, err := NewDomain(attrs...)
	if err != nil {
		panic(fmt.Sprintf("universe: projection of a valid domain failed: %v", err))
	}
	return nd, nil
}
