package release

import (
	"errors"
	"io"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

// Inputs are the settings of how the private table is read that the
// release and the evaluation share beyond its path, format, count column
// and repair policy: which attributes and columns are used, and where "-"
// reads from.
type Inputs struct {
	// Columns, when set, projects the domain onto these attributes (kept
	// in domain order); table columns not listed are ignored.
	Columns []string
	// ExcludeColumns drops these attributes from the domain; table columns
	// of these names are ignored.
	ExcludeColumns []string
	// IgnoreExtraColumns ignores table columns the domain does not list
	// (by default they are an error naming the column).
	IgnoreExtraColumns bool
	// Stdin is read for the data path "-" (nil: os.Stdin).
	Stdin io.Reader
	// ShowValues prints bad values in error messages (by default they are
	// left out: private data lands in logs).
	ShowValues bool
}

// options returns the ingest options of a read.
func (in *Inputs) options(format ingest.Format, countColumn string, p universe.Policy) ingest.Options {
	return ingest.Options{
		Format: format, CountColumn: countColumn, Policy: p,
		Columns: in.Columns, ExcludeColumns: in.ExcludeColumns, IgnoreExtraColumns: in.IgnoreExtraColumns,
		Stdin: in.Stdin, ShowValues: in.ShowValues,
	}
}

// domain applies the column selection to the domain; unknown names are
// settings errors.
func (in *Inputs) domain(dom *universe.Domain) (*universe.Domain, error) {
	o := in.options(ingest.Auto, "", universe.Policy{})
	d, err := o.Domain(dom)
	var ne *universe.NameError
	if errors.As(err, &ne) {
		return nil, &ConfigError{Msg: err.Error()}
	}
	return d, err
}
