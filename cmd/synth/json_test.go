package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestInspectJSON(t *testing.T) {
	data, domain := extract(t, "titanic")
	code, out, errs := run(t, "inspect", "--domain", domain, "--data", data, "--marginals", "2", "--json")
	if code != ExitOK || errs != "" {
		t.Fatalf("inspect --json: exit %d, stderr %q", code, errs)
	}
	var rep inspectReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("inspect --json printed %q: %v", out, err)
	}
	if len(rep.Attributes) != 9 || rep.Universe.Attributes != 9 || rep.Attributes[0].Name != "Survived" {
		t.Errorf("attributes = %+v, want the 9 of titanic", rep.Attributes)
	}
	if rep.Workload == nil || rep.Workload.MarginalSets != 36 || rep.Workload.Queries <= 0 {
		t.Errorf("workload = %+v, want 36 2-way sets", rep.Workload)
	}
	if rep.Estimate == nil || rep.Estimate.Memory == nil || rep.Estimate.Memory.PeakBytes == 0 {
		t.Errorf("release estimate = %+v, want a memory estimate", rep.Estimate)
	}
	if rep.Data == nil || !rep.Data.Valid || rep.Data.N != 1304 || !strings.Contains(rep.Data.Internal, "not DP") {
		t.Errorf("data = %+v, want valid, n = 1304, marked internal", rep.Data)
	}

	// A failed validation: the object says so, the error goes to stderr
	// without the value, and the exit code is the data error's.
	b, _ := os.ReadFile(data)
	bad := strings.Replace(string(b), "\n1,", "\n7,", 1)
	os.WriteFile("bad.csv", []byte(bad), 0o644)
	code, out, errs = run(t, "inspect", "--domain", domain, "--data", "bad.csv", "--json")
	if code != ExitData {
		t.Fatalf("inspect --json (bad data): exit %d, want %d; stderr %q", code, ExitData, errs)
	}
	rep = inspectReport{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Data == nil || rep.Data.Valid || rep.Data.Error == "" {
		t.Errorf("inspect --json (bad data) printed %q (%v), want data.valid false with the error", out, err)
	}
	if !strings.Contains(errs, "--show-values") {
		t.Errorf("stderr %q: want the hint that values are not printed", errs)
	}
}

func TestSQLJSON(t *testing.T) {
	_, domain := extract(t, "titanic")
	code, out, errs := run(t, "sql", "--domain", domain, "--dialect", "clickhouse", "--table", "t", "--marginals", "1",
		"--privacy-unit", "passenger", "--max-rows-per-unit", "2", "--json")
	if code != ExitOK || errs != "" {
		t.Fatalf("sql --json: exit %d, stderr %q", code, errs)
	}
	var v sqlJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("sql --json printed %q: %v", out, err)
	}
	if v.Dialect != "clickhouse" || v.Kind != "marginals" || len(v.Sets) != 9 || len(v.Columns) != 10 || v.Columns[9] != "count" {
		t.Errorf("sql --json = %+v, want clickhouse marginals over 9 sets, 10 columns ending with count", v)
	}
	if v.Unit == nil || v.Unit.Column != "passenger" || v.Unit.MaxRowsPerUnit != 2 || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(v.Unit.Salt) {
		t.Errorf("privacy_unit = %+v, want passenger, 2 and a 32-digit salt", v.Unit)
	}
	if !strings.HasPrefix(v.SQL, "SELECT") || !strings.HasSuffix(v.SQL, ";") || !strings.Contains(v.SQL, v.Unit.Salt) {
		t.Errorf("sql = %.80q…, want the query with its salt", v.SQL)
	}
	code, out, _ = run(t, "sql", "--domain", domain, "--dialect", "postgres", "--table", "t", "--check", "--json")
	if code != ExitOK || !strings.Contains(out, `"kind": "check"`) || !strings.Contains(out, `"bad0"`) {
		t.Errorf("sql --check --json: exit %d, %q", code, out)
	}
}
