package sqlsrc

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// DataError reports values outside the declared domain found by the engine
// (Count of them in Column, Example being one), or a column the table lacks
// (Reason set, Count 0). The CLI exits with 65.
type DataError struct {
	Column  string
	Count   int64
	Example string
	// Domain describes the attribute's declared domain.
	Domain string
	// Reason, when set, replaces the out-of-domain message (e.g. "missing
	// column").
	Reason string
	// Show prints Example in the message; by default it is left out (a
	// value is private data, and messages land in logs).
	Show bool
}

func (e *DataError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("column %q: %s", e.Column, e.Reason)
	}
	ex := strconv.Quote(e.Example)
	switch {
	case e.Example == NullMarker:
		ex = "a SQL NULL (the attribute declares no null token)"
	case !e.Show:
		ex = "not printed (--show-values prints one)"
	}
	values := "values"
	if e.Count == 1 {
		values = "value"
	}
	return fmt.Sprintf("column %q: %d %s outside the declared domain (%s), e.g. %s; "+
		"fix the data, declare the values, or allow a repair (--clamp, --unknown-to-other)",
		e.Column, e.Count, values, e.Domain, ex)
}

// SourceError is a failure of the database: the connection, a query, or
// reading its result. Source is the DSN with its password redacted. The
// CLI exits with 69.
type SourceError struct {
	Op     string
	Source string
	Err    error
}

func (e *SourceError) Error() string {
	s := "database " + e.Op
	if e.Source != "" {
		s += " (" + e.Source + ")"
	}
	return s + ": " + e.Err.Error()
}

func (e *SourceError) Unwrap() error { return e.Err }

// RedactDSN returns dsn with its password (user info, a password= query
// parameter or key=value pair) replaced by "xxxxx", for messages and logs.
func RedactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.Host != "" {
		q := u.Query()
		changed := false
		for k := range q {
			if isSecretKey(k) {
				q.Set(k, "xxxxx")
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
		return u.Redacted()
	}
	if strings.Contains(dsn, "://") {
		// An unparsable URL: keep the scheme only.
		return dsn[:strings.Index(dsn, "://")+3] + "…"
	}
	return kvSecret.ReplaceAllString(dsn, "${1}=xxxxx")
}

// kvSecret matches password=value pairs of key=value DSNs (quoted or not).
var kvSecret = regexp.MustCompile(`(?i)\b(password|passwd|pwd)\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

func isSecretKey(k string) bool {
	switch strings.ToLower(k) {
	case "password", "passwd", "pwd", "sslpassword", "secret", "token":
		return true
	}
	return false
}

// scrubber removes a known secret from error messages.
type scrubber struct{ secret string }

func (s scrubber) err(err error) error {
	if err == nil || len(s.secret) < 4 || !strings.Contains(err.Error(), s.secret) {
		return err
	}
	return scrubbedError{msg: strings.ReplaceAll(err.Error(), s.secret, "xxxxx"), err: err}
}

// scrubbedError keeps the chain (errors.Is) but not the secret's text.
type scrubbedError struct {
	msg string
	err error
}

func (e scrubbedError) Error() string { return e.msg }
func (e scrubbedError) Unwrap() error { return e.err }
