package release_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dpsynth/synth/bench"
	"github.com/dpsynth/synth/release"
)

// TestTimeModelCalibration guards the time model from drifting: the dry
// run's estimate of each release in testdata/timecost.csv (the accuracy
// suite's tables and the width table's small ones, each a bench protocol at
// one ε; n guessed from the file's size, as a user's dry run would) must be
// within 3× of the whole release's wall time measured when the model was
// calibrated (`synth bench`, seed 1, a quiet 2-core machine). It times
// nothing: a change of the plan's parameters, the model's kernels or the
// record guess that moves an estimate out of that range fails it, and the
// measured figures are refreshed with the model.
func TestTimeModelCalibration(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "timecost.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	type prepared struct{ data, domain string }
	cache := map[string]prepared{}
	for _, rec := range recs[1:] {
		name := rec[0]
		eps, err1 := strconv.ParseFloat(rec[1], 64)
		measured, err2 := strconv.ParseFloat(rec[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("testdata/timecost.csv: bad row %q", rec)
		}
		p, err := bench.LookupProtocol(name)
		if err != nil {
			t.Fatal(err)
		}
		pr, ok := cache[name]
		if !ok {
			if pr.data, pr.domain, err = p.Prepare(dir); err != nil {
				t.Fatal(err)
			}
			cache[name] = pr
		}
		cfg := &release.Config{Data: pr.data, Domain: pr.domain, Marginals: p.Marginals, Sample: p.Sample,
			WorkloadSeed: p.WorkloadSeed, Epsilon: eps, Delta: 1e-9, Out: filepath.Join(dir, "out")}
		pv, err := release.DryRun(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r := pv.Time.Seconds / measured; !(r >= 1.0/3 && r <= 3) {
			t.Errorf("%s at ε = %g: estimate %.3g s (%+v), measured %.3g s: ratio %.2f, want within 3×", name, eps, pv.Time.Seconds, pv.Time.Stages, measured, r)
		}
		if pv.Time.Records <= 0 {
			t.Errorf("%s: no record count guessed from %s", name, pr.data)
		}
	}
}

// TestGuessRecords: the dry run's record count, guessed from a CSV file's
// size and the domain's typical values, is within 1.5× of the true count
// on the shipped tables, within 2× on fertility's, which is gzip-compressed.
func TestGuessRecords(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"adult", "adult-reduced", "titanic", "nltcs", "cps1988", "fertility", "healthins", "slid", "smokeban", "gssvocab", "wide16-2way"} {
		p, err := bench.LookupProtocol(name)
		if err != nil {
			t.Fatal(err)
		}
		data, domain, err := p.Prepare(dir)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := countLines(data)
		if err != nil {
			t.Fatal(err)
		}
		cfg := &release.Config{Data: data, Domain: domain, Marginals: 1, Epsilon: 1, Delta: 1e-9, Out: filepath.Join(dir, "out")}
		pv, err := release.DryRun(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		want, tol := float64(lines-1), 1.5
		if strings.HasSuffix(data, ".gz") {
			tol = 2 // the compression ratio is assumed
		}
		r := pv.Time.Records / want
		if !(math.Abs(math.Log(r)) <= math.Log(tol)) {
			t.Errorf("%s: guessed %.0f records, the file has %.0f (ratio %.2f), want within %g×", name, pv.Time.Records, want, r, tol)
		}
		t.Logf("%s: guessed %.0f records of %.0f (ratio %.2f)", name, pv.Time.Records, want, r)
	}
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			return 0, err
		}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	return bytes.Count(b, []byte{'\n'}), nil
}
