package sqlsrc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpsynth/synth/internal/pgtest"
)

// Integration tests start their own servers on 127.0.0.1 (random free
// ports, temporary folders, stopped in t.Cleanup). When a server cannot be
// started the test fails if CI is "true" and is skipped otherwise.

const pgPassword = pgtest.Password

func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	pgtest.Unavailable(t, format, args...)
}

func freePort(t testing.TB) int {
	t.Helper()
	return pgtest.FreePort(t)
}

// startPostgres starts a PostgreSQL 15 server and returns its DSN.
func startPostgres(t *testing.T) string {
	t.Helper()
	return pgtest.Start(t)
}

// chServer is one ClickHouse server process.
type chServer struct {
	tcp, http int
}

// exec runs a statement through the HTTP interface (clickhouse-go's native
// INSERT does not work with 18.16; SELECTs do) with body as its data.
func (s chServer) exec(t testing.TB, query string, body []byte) {
	t.Helper()
	u := fmt.Sprintf("http://127.0.0.1:%d/?query=%s", s.http, url.QueryEscape(query))
	resp, err := http.Post(u, "text/plain", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("clickhouse %d: %v", s.http, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("clickhouse %d: %s: %s", s.http, query, msg)
	}
}

// chCluster is the name of the two-shard cluster in remote_servers.
const chCluster = "synth_test"

// startClickHouse starts two ClickHouse servers that form a cluster of two
// shards (one replica each) and returns them.
func startClickHouse(t *testing.T) [2]chServer {
	t.Helper()
	bin, err := exec.LookPath("clickhouse-server")
	for _, p := range []string{"/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"} {
		if err != nil {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
			}
		}
	}
	if err != nil {
		unavailable(t, "ClickHouse is not installed (clickhouse-server): apt-get install clickhouse-server")
	}
	dir, err := os.MkdirTemp("", "sqlsrc-ch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Four distinct ports: ports taken one at a time may repeat.
	ports := pgtest.FreePorts(t, 4)
	var srv [2]chServer
	for i := range srv {
		srv[i] = chServer{tcp: ports[2*i], http: ports[2*i+1]}
	}
	var remote strings.Builder
	for _, s := range srv {
		fmt.Fprintf(&remote, "<shard><replica><host>127.0.0.1</host><port>%d</port></replica></shard>", s.tcp)
	}
	users := `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage><max_threads>2</max_threads></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`
	for i, s := range srv {
		d := filepath.Join(dir, strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		cfg := fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>%[1]s/server.log</log><errorlog>%[1]s/error.log</errorlog></logger>
  <listen_host>127.0.0.1</listen_host>
  <tcp_port>%[2]d</tcp_port>
  <http_port>%[3]d</http_port>
  <path>%[1]s/data/</path>
  <tmp_path>%[1]s/tmp/</tmp_path>
  <user_files_path>%[1]s/user_files/</user_files_path>
  <format_schema_path>%[1]s/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <mlock_executable>false</mlock_executable>
  <remote_servers><%[4]s>%[5]s</%[4]s></remote_servers>
</yandex>
`, d, s.tcp, s.http, chCluster, remote.String())
		if err := os.WriteFile(filepath.Join(d, "config.xml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "users.xml"), []byte(users), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--config-file="+filepath.Join(d, "config.xml"))
		cmd.Dir = d
		out, err := os.Create(filepath.Join(d, "stdout.log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			unavailable(t, "starting clickhouse-server: %v", err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			out.Close()
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for i, s := range srv {
		for {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/ping", s.http))
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				logs, _ := os.ReadFile(filepath.Join(dir, strconv.Itoa(i), "error.log"))
				unavailable(t, "clickhouse-server %d did not answer on port %d within 30 s:\n%s", i, s.http, logs)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return srv
}

func (s chServer) dsn() string { return fmt.Sprintf("clickhouse://127.0.0.1:%d/default", s.tcp) }

var _ = context.Background
