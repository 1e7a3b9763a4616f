package main

import (
	"context"
	"errors"
	"io/fs"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/ledger"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/sqlsrc"
	"github.com/dpsynth/synth/universe"
)

// Exit codes (BSD sysexits where one fits). They are part of the CLI's
// contract: batch pipelines act on them.
const (
	ExitOK       = 0  // success
	ExitUsage    = 2  // bad flags or arguments
	ExitData     = 65 // bad input data, domain or workload (message names file, row, column)
	ExitNoInput  = 66 // an input file does not exist or cannot be opened
	ExitInternal = 70 // a bug: please report it
	ExitCantOut  = 73 // an output file or folder cannot be created
	ExitIO       = 74 // an I/O error while reading or writing
	ExitSource   = 69 // a data source (database) is unavailable or a query failed
	ExitBudget   = 77 // the privacy budget does not cover the requested release
	ExitMemory   = 78 // the release's estimated memory is over its cap (nothing was read; or, when the default row count, the noisy n̂, is what is over it, the budget was spent and nothing was written)
	ExitCanceled = 130
)

const exitCodeHelp = `Exit codes:
  0   success
  2   usage error (bad flags or arguments)
  65  bad input data, domain or workload (the message names file, row and column)
  66  an input file is missing or cannot be opened
  69  a data source or a PostgreSQL ledger (database) is unavailable or a
      query failed
  70  internal error (a bug)
  73  an output file or folder cannot be created
  74  I/O error while reading or writing
  77  the privacy budget, or the table's lifetime budget (--ledger), does not
      cover the request (nothing was read)
  78  the release's estimated memory is over --memory-cap or --max-model-size
      (nothing was read), or grouping the rows by --privacy-unit needs more
      memory than --memory-cap leaves
  130 interrupted (no partial output is left)
`

// usageError is a problem with the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: sprintf(format, args...)}
}

// exitError carries an explicit exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err so that exitCode returns code for it.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// exitCode maps an error returned by a command to its exit code.
func exitCode(err error) int {
	var (
		ee *exitError
		ue *usageError
		de *universe.DomainError
		ve *universe.ValueError
		ie *ingest.DataError
		re *ingest.ReadError
		pe *fs.PathError
		ce *release.ConfigError
		rd *release.DataError
		oc *release.CreateError
		ow *release.WriteError
		we *query.WorkloadError
		tl *universe.TooLargeError
		me *release.MemoryError
		ge *ingest.MemoryError
		sd *sqlsrc.DataError
		ss *sqlsrc.SourceError
		ls *ledger.StoreError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue), errors.As(err, &ce):
		return ExitUsage
	case errors.Is(err, privacy.ErrBudgetExceeded):
		return ExitBudget
	case errors.As(err, &me), errors.As(err, &ge):
		return ExitMemory
	case errors.As(err, &oc):
		return ExitCantOut
	case errors.As(err, &ow):
		return ExitIO
	case errors.As(err, &rd), errors.As(err, &we), errors.As(err, &tl), errors.As(err, &sd):
		return ExitData
	case errors.Is(err, context.Canceled):
		return ExitCanceled
	case errors.As(err, &ss), errors.As(err, &ls):
		return ExitSource
	case errors.As(err, &de), errors.As(err, &ve), errors.As(err, &ie):
		return ExitData
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission) && errors.As(err, &pe) && pe.Op == "open":
		return ExitNoInput
	case errors.As(err, &re), errors.As(err, &pe):
		return ExitIO
	}
	return ExitInternal
}
