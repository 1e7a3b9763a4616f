// Package pgtest starts a real PostgreSQL 15 server for tests, on
// 127.0.0.1 (a random free port, a temporary folder), and stops it when the
// test ends. Tests that need one call Start; when the server cannot be
// started the test fails if the environment variable CI is "true" and is
// skipped otherwise.
package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

const pgBin = "/usr/lib/postgresql/15/bin"

// Unavailable fails (CI) or skips the test: a server is missing.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI: %s", msg)
	}
	t.Skipf("%s (set CI=true to make this a failure)", msg)
}

// FreePort returns a TCP port free on 127.0.0.1 at the time of the call.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePorts(t, 1)[0]
}

// FreePorts returns n distinct TCP ports free on 127.0.0.1 at the time of
// the call: it holds each port's listener until it has them all, since
// separate FreePort calls may be given the same port again.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// asPostgres runs a PostgreSQL binary, under the postgres user when root.
func asPostgres(name string, args ...string) *exec.Cmd {
	bin := filepath.Join(pgBin, name)
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	}
	return exec.Command(bin, args...)
}

// Start starts a PostgreSQL 15 server and returns its DSN (user postgres,
// password Password, over TCP).
func Start(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(pgBin, "initdb")); err != nil {
		Unavailable(t, "PostgreSQL 15 is not installed (%s/initdb): apt-get install postgresql-15", pgBin)
	}
	dir, err := os.MkdirTemp("", "sqlsrc-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			Unavailable(t, "running as root but there is no postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(data, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	// Password authentication over TCP, so that tests can check where the
	// password comes from and that no message shows it.
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(Password+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := asPostgres("initdb", "-D", data, "--auth-host=scram-sha-256", "--auth-local=trust", "--pwfile="+pwfile,
		"-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput(); err != nil {
		Unavailable(t, "initdb failed: %v\n%s", err, out)
	}
	port := FreePort(t)
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off", port, dir)
	if out, err := asPostgres("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "30", "-o", opts, "start").CombinedOutput(); err != nil {
		logs, _ := os.ReadFile(filepath.Join(dir, "log"))
		Unavailable(t, "pg_ctl start failed: %v\n%s\n%s", err, out, logs)
	}
	t.Cleanup(func() {
		if out, err := asPostgres("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
			t.Logf("pg_ctl stop: %v\n%s", err, out)
		}
	})
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", Password, port)
}

// Password is the password of the test servers' postgres user.
const Password = "pg-Test-s3cret"
