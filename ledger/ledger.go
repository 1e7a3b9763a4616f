package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/dpsynth/synth/privacy"
)

// Schema names the ledger's JSON form (the file, and the PostgreSQL row).
const Schema = "synth.ledger/v1"

// Status is an entry's state.
type Status string

const (
	// Running: reserved, and the release has not finished (or was killed).
	Running Status = "running"
	// Complete: the release committed its outputs.
	Complete Status = "complete"
	// Failed: the release stopped on an error after it started to read data.
	Failed Status = "failed"
)

// State is a ledger: its budget and every entry that spent from it.
type State struct {
	Schema     string         `json:"schema"`
	Name       string         `json:"name"`
	Created    string         `json:"created"` // RFC 3339, UTC
	Budget     privacy.Budget `json:"budget"`
	Conversion string         `json:"conversion"` // "tight" or "standard"
	Entries    []Entry        `json:"entries"`
}

// Entry is one reservation.
type Entry struct {
	ID       string `json:"id"`
	Started  string `json:"started"`            // RFC 3339, UTC
	Finished string `json:"finished,omitempty"` // RFC 3339, UTC
	Status   Status `json:"status"`
	// What spent it (e.g. "release"), the solver, the output folder and the
	// neighbouring relation with its privacy unit.
	What       string `json:"what"`
	Solver     string `json:"solver,omitempty"`
	Out        string `json:"out,omitempty"`
	Neighbours string `json:"neighbours,omitempty"`
	// Host and PID of the process that reserved it (to tell a running
	// release from a killed one).
	Host    string   `json:"host,omitempty"`
	PID     int      `json:"pid,omitempty"`
	Charges []Charge `json:"charges"`
}

// Charge is a privacy charge in the ledger's JSON form.
type Charge struct {
	Label string  `json:"label"`
	Kind  string  `json:"kind"` // "zcdp", "pure" or "approx"
	Rho   float64 `json:"rho,omitempty"`
	Eps   float64 `json:"epsilon,omitempty"`
	Delta float64 `json:"delta,omitempty"`
	// Exact marks an (ε, δ) charge made by an exact accountant
	// (privacy.Charge.Exact).
	Exact bool `json:"exact,omitempty"`
}

func toCharges(cs []privacy.Charge) []Charge {
	out := make([]Charge, len(cs))
	for i, c := range cs {
		out[i] = Charge{Label: c.Label, Kind: c.Kind.String(), Rho: c.Rho, Eps: c.Eps, Delta: c.Delta, Exact: c.Exact}
	}
	return out
}

func (c Charge) privacy() (privacy.Charge, error) {
	pc := privacy.Charge{Label: c.Label, Cost: privacy.Cost{Rho: c.Rho, Eps: c.Eps, Delta: c.Delta}, Exact: c.Exact}
	switch c.Kind {
	case "zcdp":
		pc.Kind = privacy.ZCDP
	case "pure":
		pc.Kind = privacy.Pure
	case "approx":
		pc.Kind = privacy.Approx
	default:
		return pc, fmt.Errorf("charge %q: unknown kind %q", c.Label, c.Kind)
	}
	return pc, nil
}

// conversion parses the State's conversion.
func (s *State) conversion() (privacy.Conversion, error) {
	switch s.Conversion {
	case "tight":
		return privacy.Tight, nil
	case "standard":
		return privacy.Standard, nil
	}
	return 0, fmt.Errorf("ledger: unknown conversion %q", s.Conversion)
}

// compose returns a privacy.Ledger holding every entry's charges.
func (s *State) compose() (*privacy.Ledger, error) {
	conv, err := s.conversion()
	if err != nil {
		return nil, err
	}
	l, err := privacy.NewLedger(s.Budget, &privacy.LedgerSettings{Conversion: conv, Neighbours: "lifetime"})
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	for _, e := range s.Entries {
		cs := make([]privacy.Charge, len(e.Charges))
		for i, c := range e.Charges {
			if cs[i], err = c.privacy(); err != nil {
				return nil, fmt.Errorf("ledger: entry %s: %w", e.ID, err)
			}
		}
		// The entries were accepted one by one; composing them again only
		// adds them up (an over-full ledger, edited by hand, shows as spent
		// beyond its budget and fits nothing more).
		if err := l.Charge(cs...); err != nil {
			return l, &FullError{Entry: e.ID}
		}
	}
	return l, nil
}

// FullError reports a ledger whose entries already exceed its budget (it
// was edited by hand, or its budget lowered): it accepts nothing.
type FullError struct{ Entry string }

func (e *FullError) Error() string {
	return fmt.Sprintf("ledger: the entries up to %s already exceed the budget", e.Entry)
}

// Unwrap makes errors.Is(err, privacy.ErrBudgetExceeded) true.
func (e *FullError) Unwrap() error { return privacy.ErrBudgetExceeded }

// validate checks a State read from storage.
func (s *State) validate() error {
	if s.Schema != Schema {
		return fmt.Errorf("ledger: schema %q, want %q", s.Schema, Schema)
	}
	if err := s.Budget.Validate(); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	ids := map[string]bool{}
	for _, e := range s.Entries {
		if e.ID == "" || ids[e.ID] {
			return fmt.Errorf("ledger: entry id %q missing or repeated", e.ID)
		}
		ids[e.ID] = true
		switch e.Status {
		case Running, Complete, Failed:
		default:
			return fmt.Errorf("ledger: entry %s: unknown status %q", e.ID, e.Status)
		}
	}
	_, err := s.compose()
	var fe *FullError
	if errors.As(err, &fe) {
		return nil // readable; it just accepts nothing more
	}
	return err
}

// parseState reads a ledger's JSON form, rejecting unknown fields.
func parseState(b []byte) (*State, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var s State
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if dec.More() {
		return nil, errors.New("ledger: trailing data after the JSON object")
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

func (s *State) json() ([]byte, error) {
	c := *s
	if c.Entries == nil {
		c.Entries = []Entry{}
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// store keeps one ledger's State.
type store interface {
	// create writes a new ledger; it fails if one exists.
	create(ctx context.Context, s *State) error
	// update runs f on the State under an exclusive lock and, if f returns
	// true, saves the State before releasing the lock.
	update(ctx context.Context, f func(*State) (bool, error)) error
	// read returns the State.
	read(ctx context.Context) (*State, error)
	close() error
	where() string // for messages (no password)
}

// Ledger is an open ledger.
type Ledger struct {
	st store
}

// Location names a ledger: a file path, or a PostgreSQL DSN (postgres://…)
// with the ledger's name within the database ("" is "default").
type Location struct {
	Path string
	Name string
}

func (loc Location) open(ctx context.Context) (store, error) {
	name := loc.Name
	if name == "" {
		name = "default"
	}
	if isPostgres(loc.Path) {
		return openPostgres(ctx, loc.Path, name)
	}
	if loc.Path == "" {
		return nil, errors.New("ledger: no ledger path or DSN")
	}
	return &fileStore{path: loc.Path, name: name}, nil
}

func isPostgres(p string) bool {
	return strings.HasPrefix(p, "postgres://") || strings.HasPrefix(p, "postgresql://")
}

// Init creates a ledger with a lifetime budget; it fails if the ledger
// exists.
func Init(ctx context.Context, loc Location, b privacy.Budget, conv privacy.Conversion) error {
	if err := b.Validate(); err != nil {
		return err
	}
	st, err := loc.open(ctx)
	if err != nil {
		return err
	}
	defer st.close()
	name := loc.Name
	if name == "" {
		name = "default"
	}
	return st.create(ctx, &State{Schema: Schema, Name: name, Created: now(), Budget: b, Conversion: conv.String()})
}

// Open opens an existing ledger.
func Open(ctx context.Context, loc Location) (*Ledger, error) {
	st, err := loc.open(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := st.read(ctx); err != nil {
		st.close()
		return nil, err
	}
	return &Ledger{st: st}, nil
}

// Close closes the ledger's connections.
func (l *Ledger) Close() error { return l.st.close() }

// Where names the ledger for messages (a DSN without its password).
func (l *Ledger) Where() string { return l.st.where() }

// Request is what a reservation spends and who spends it.
type Request struct {
	Charges    []privacy.Charge
	What       string // e.g. "release"
	Solver     string
	Out        string
	Neighbours string
}

// Reservation is an entry a release holds until it finishes.
type Reservation struct {
	l  *Ledger
	ID string
}

// RefusedError is a reservation that does not fit what the ledger has
// left. It wraps the *privacy.BudgetError (errors.Is privacy.ErrBudgetExceeded).
type RefusedError struct {
	Where     string
	Remaining privacy.Remaining
	// Budget is the ledger's lifetime budget.
	Budget privacy.Budget
	Err    error
}

func (e *RefusedError) Error() string {
	var be *privacy.BudgetError
	if errors.As(e.Err, &be) && be.Reason == "" {
		msg := fmt.Sprintf("the table's lifetime budget in %s does not allow this release: its %d charges would bring the table's ε to %.4g, over the lifetime ε = %g (%.4g spent); left: ε = %.4g (ρ = %.4g)",
			e.Where, len(be.Labels), be.Would, e.Budget.Eps, be.Spent, e.Remaining.Eps, e.Remaining.Rho)
		if e.Remaining.Rho > 0 && e.Budget.Delta > 0 {
			msg += fmt.Sprintf("; a release of at most ε ≈ %.3g at δ = %g would fit", privacy.RhoToEps(e.Remaining.Rho, e.Budget.Delta, privacy.Tight), e.Budget.Delta)
		}
		return msg + " (synth ledger show lists the entries)"
	}
	return fmt.Sprintf("the table's lifetime budget in %s does not allow this release (%v); left: ε = %.4g (ρ = %.4g)", e.Where, e.Err, e.Remaining.Eps, e.Remaining.Rho)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Check reports whether charges would fit what the ledger has left (nil),
// and what is left, without reserving anything.
func (l *Ledger) Check(ctx context.Context, charges []privacy.Charge) (privacy.Remaining, error) {
	s, err := l.st.read(ctx)
	if err != nil {
		return privacy.Remaining{}, err
	}
	pl, err := s.compose()
	if err != nil {
		return privacy.Remaining{}, &RefusedError{Where: l.Where(), Budget: s.Budget, Err: err}
	}
	rem := pl.Remaining()
	if err := pl.Check(charges...); err != nil {
		return rem, &RefusedError{Where: l.Where(), Remaining: rem, Budget: s.Budget, Err: err}
	}
	return rem, nil
}

// Reserve adds an entry for the request if its charges fit what the ledger
// has left, composed exactly with every entry (running, complete or
// failed); the entry is saved, running, before Reserve returns. A request
// that does not fit is a *RefusedError and changes nothing.
func (l *Ledger) Reserve(ctx context.Context, r Request) (*Reservation, error) {
	id, err := newID()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	err = l.st.update(ctx, func(s *State) (bool, error) {
		pl, err := s.compose()
		if err != nil {
			return false, &RefusedError{Where: l.Where(), Budget: s.Budget, Err: err}
		}
		if err := pl.Check(r.Charges...); err != nil {
			return false, &RefusedError{Where: l.Where(), Remaining: pl.Remaining(), Budget: s.Budget, Err: err}
		}
		s.Entries = append(s.Entries, Entry{ID: id, Started: now(), Status: Running, What: r.What, Solver: r.Solver, Out: r.Out,
			Neighbours: r.Neighbours, Host: host, PID: os.Getpid(), Charges: toCharges(r.Charges)})
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return &Reservation{l: l, ID: id}, nil
}

// Finish marks the entry complete or failed (it stays charged).
func (r *Reservation) Finish(ctx context.Context, st Status) error {
	if st != Complete && st != Failed {
		panic("ledger: Finish with status " + string(st))
	}
	return r.l.st.update(ctx, func(s *State) (bool, error) {
		for i := range s.Entries {
			if s.Entries[i].ID == r.ID {
				s.Entries[i].Status, s.Entries[i].Finished = st, now()
				return true, nil
			}
		}
		return false, fmt.Errorf("ledger: entry %s is gone", r.ID)
	})
}

// Cancel removes the entry: for a release that failed before it read any
// record or drew any noise, which spent nothing.
func (r *Reservation) Cancel(ctx context.Context) error {
	return r.l.st.update(ctx, func(s *State) (bool, error) {
		for i := range s.Entries {
			if s.Entries[i].ID == r.ID {
				s.Entries = append(s.Entries[:i], s.Entries[i+1:]...)
				return true, nil
			}
		}
		return false, nil
	})
}

func newID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

// Report is a ledger as synth ledger show prints it.
type Report struct {
	Schema     string         `json:"schema"` // "synth.ledger-report/v1"
	Where      string         `json:"ledger"`
	Name       string         `json:"name"`
	Created    string         `json:"created"`
	Budget     privacy.Budget `json:"budget"`
	Conversion string         `json:"conversion"`
	Entries    []EntryReport  `json:"entries"`
	// Spent composes every entry; Remaining is what a new reservation may
	// still take (ε at the budget's δ, and ρ).
	Spent     privacy.Spent     `json:"spent"`
	Remaining privacy.Remaining `json:"remaining"`
}

// EntryReport is an entry with its own cost and its shown status:
// "running" only while its process is alive on this host, else
// "incomplete" for a release that never finished (still charged).
type EntryReport struct {
	Entry
	Shown string `json:"shown_status"`
	// Eps and Rho are the entry's own charges composed alone (at the
	// ledger's δ).
	Eps float64 `json:"epsilon"`
	Rho float64 `json:"rho"`
}

// ReportSchema names the Report's JSON form.
const ReportSchema = "synth.ledger-report/v1"

// Show returns the ledger's entries and what remains.
func (l *Ledger) Show(ctx context.Context) (*Report, error) {
	s, err := l.st.read(ctx)
	if err != nil {
		return nil, err
	}
	rep := &Report{Schema: ReportSchema, Where: l.Where(), Name: s.Name, Created: s.Created, Budget: s.Budget, Conversion: s.Conversion}
	conv, err := s.conversion()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	for _, e := range s.Entries {
		er := EntryReport{Entry: e, Shown: string(e.Status)}
		if e.Status == Running && !(e.Host == host && alive(e.PID)) {
			er.Shown = "incomplete (charged)"
		}
		// The entry alone, on an unbounded budget at the ledger's δ.
		one, _ := privacy.NewLedger(privacy.Budget{Eps: 1e300, Delta: s.Budget.Delta}, &privacy.LedgerSettings{Conversion: conv})
		for _, c := range e.Charges {
			if pc, err := c.privacy(); err == nil && one.Charge(pc) == nil {
				continue
			}
		}
		sp := one.Spent()
		er.Eps, er.Rho = sp.Eps, sp.Rho
		rep.Entries = append(rep.Entries, er)
	}
	pl, err := s.compose()
	if pl != nil {
		rep.Spent, rep.Remaining = pl.Spent(), pl.Remaining()
	}
	var fe *FullError
	if err != nil && !errors.As(err, &fe) {
		return nil, err
	}
	return rep, nil
}

// alive reports whether a process is running on this host.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
