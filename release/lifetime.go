package release

import (
	"context"
	"path/filepath"
	"time"

	"github.com/dpsynth/synth/ledger"
)

// The table's lifetime budget (Config.Ledger). The release reserves its
// whole plan in the ledger right after the plan is checked and before the
// output folder is created or any record is read; a reservation that does
// not fit is refused (exit 77) and nothing is read or written. An error
// before the read stage cancels the entry (nothing was spent); from the read
// stage on the entry stays charged: failed on an error, complete once the
// outputs are committed, and running forever if the process is killed.

func (cfg *Config) ledgerLocation() ledger.Location {
	return ledger.Location{Path: cfg.Ledger, Name: cfg.LedgerName}
}

// reserve opens the table's ledger and reserves the plan's charges.
func (r *runner) reserve() error {
	cfg := r.cfg
	if cfg.Ledger == "" {
		return nil
	}
	l, err := ledger.Open(r.ctx, cfg.ledgerLocation())
	if err != nil {
		return err
	}
	out := cfg.Out
	if abs, err := filepath.Abs(out); err == nil {
		out = abs
	}
	res, err := l.Reserve(r.ctx, ledger.Request{Charges: r.plan0.Charges, What: "release", Solver: r.solverName + " (" + r.setting.String() + ")",
		Out: out, Neighbours: cfg.neighbourText()})
	if err != nil {
		l.Close()
		return err
	}
	r.lifetime, r.reservation = l, res
	r.log.Debug("reserved in the table's lifetime budget", "ledger", l.Where(), "entry", res.ID)
	return nil
}

// settleReservation, when the release ends without committing, cancels its
// entry if no record was read (nothing was spent) or marks it failed.
func (r *runner) settleReservation() {
	if r.reservation == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if r.readStarted {
		err = r.reservation.Finish(ctx, ledger.Failed)
	} else {
		err = r.reservation.Cancel(ctx)
	}
	if err != nil {
		r.log.Warn("could not settle the lifetime budget's entry (it stays charged)", "ledger", r.lifetime.Where(), "entry", r.reservation.ID, "error", err)
	}
	r.lifetime.Close()
	r.reservation = nil
}

// completeReservation marks the entry complete once the outputs are
// committed; if the ledger cannot be reached the entry stays running, which
// ledger show reports as incomplete, still charged.
func (r *runner) completeReservation() {
	if r.reservation == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.reservation.Finish(ctx, ledger.Complete); err != nil {
		r.log.Warn("could not mark the lifetime budget's entry complete (it stays charged)", "ledger", r.lifetime.Where(), "entry", r.reservation.ID, "error", err)
	}
	r.lifetime.Close()
	r.reservation = nil
}

// checkLedger checks the plan against what the table's lifetime budget has
// left, without reserving (the dry run): over it, the dry run exits as the
// release would (77).
func (r *runner) checkLedger() (*PreviewLedger, error) {
	if r.cfg.Ledger == "" {
		return nil, nil
	}
	l, err := ledger.Open(r.ctx, r.cfg.ledgerLocation())
	if err != nil {
		return nil, err
	}
	defer l.Close()
	rem, err := l.Check(r.ctx, r.plan0.Charges)
	if err != nil {
		return nil, err
	}
	return &PreviewLedger{Where: l.Where(), RemainingEps: rem.Eps, RemainingRho: rem.Rho}, nil
}
