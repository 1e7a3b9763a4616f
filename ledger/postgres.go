package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dpsynth/synth/sqlsrc"
)

// pgTable is the table that holds the ledgers of a database: one row per
// ledger name, its State as JSON text.
const pgTable = "synth_ledger"

// pgStore keeps a ledger in PostgreSQL. Every read-modify-write is one
// transaction that locks the ledger's row (SELECT … FOR UPDATE), so that
// releases on several machines are serialised; the update commits or
// nothing changes.
type pgStore struct {
	db       *sql.DB
	name     string
	redacted string
	secret   string
}

func openPostgres(ctx context.Context, dsn, name string) (*pgStore, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: bad PostgreSQL DSN", sqlsrc.RedactDSN(dsn))
	}
	s := &pgStore{db: stdlib.OpenDB(*cfg), name: name, redacted: sqlsrc.RedactDSN(dsn), secret: cfg.Password}
	if _, err := s.db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+pgTable+" (name TEXT PRIMARY KEY, state TEXT NOT NULL)"); err != nil {
		// Two first uses at once may race on the catalog: a unique
		// violation means the table now exists.
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" {
			s.db.Close()
			return nil, s.fail(err)
		}
	}
	return s, nil
}

func (p *pgStore) where() string { return p.redacted + " (ledger " + p.name + ")" }
func (p *pgStore) close() error  { return p.db.Close() }

// fail wraps a driver error without the password.
func (p *pgStore) fail(err error) error {
	msg := err.Error()
	if p.secret != "" {
		msg = strings.ReplaceAll(msg, p.secret, "xxxxx")
	}
	return &StoreError{Where: p.where(), Msg: msg}
}

// StoreError is a ledger store that cannot be reached or failed (a
// database error); the CLI exits 69, as for a data source.
type StoreError struct {
	Where, Msg string
}

func (e *StoreError) Error() string { return "ledger " + e.Where + ": " + e.Msg }

func (p *pgStore) create(ctx context.Context, s *State) error {
	b, err := s.json()
	if err != nil {
		return err
	}
	_, err = p.db.ExecContext(ctx, "INSERT INTO "+pgTable+" (name, state) VALUES ($1, $2)", p.name, string(b))
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return fmt.Errorf("ledger %s exists: a table has one lifetime budget (synth ledger show reads it)", p.where())
	}
	if err != nil {
		return p.fail(err)
	}
	return nil
}

func (p *pgStore) read(ctx context.Context) (*State, error) {
	var text string
	err := p.db.QueryRowContext(ctx, "SELECT state FROM "+pgTable+" WHERE name = $1", p.name).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("ledger %s does not exist (create it with synth ledger init)", p.where())
	}
	if err != nil {
		return nil, p.fail(err)
	}
	s, err := parseState([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.where(), err)
	}
	return s, nil
}

func (p *pgStore) update(ctx context.Context, fn func(*State) (bool, error)) error {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return p.fail(err)
	}
	defer tx.Rollback()
	var text string
	err = tx.QueryRowContext(ctx, "SELECT state FROM "+pgTable+" WHERE name = $1 FOR UPDATE", p.name).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("ledger %s does not exist (create it with synth ledger init)", p.where())
	}
	if err != nil {
		return p.fail(err)
	}
	s, err := parseState([]byte(text))
	if err != nil {
		return fmt.Errorf("%s: %w", p.where(), err)
	}
	changed, err := fn(s)
	if err != nil || !changed {
		return err
	}
	b, err := s.json()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+pgTable+" SET state = $2 WHERE name = $1", p.name, string(b)); err != nil {
		return p.fail(err)
	}
	if err := tx.Commit(); err != nil {
		return p.fail(err)
	}
	return nil
}
