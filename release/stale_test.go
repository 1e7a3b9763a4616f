package release

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestCreateOutDirRemovesStale: the temporary files of a dead release (our
// pattern, for the names a release writes) are removed when a release
// opens the folder; every other file stays.
func TestCreateOutDirRemovesStale(t *testing.T) {
	dir := t.TempDir()
	ours := []string{".synthetic.parquet.tmp-123456", ".manifest.json.tmp-9", ".report.html.tmp-77", ".synthetic.csv.tmp-1",
		".domain.json.tmp-2", ".people.csv.gz.tmp-3", ".synth-probe-42"}
	others := []string{"keep.txt", ".synthetic.parquet.tmp-", ".synthetic.parquet.tmp", "synthetic.parquet.tmp-1",
		".other.csv.tmp-1", ".synthetic.parquet.bak-1", "notes.synth-probe-1"}
	touch(t, dir, ours...)
	touch(t, dir, others...)
	if err := os.Mkdir(filepath.Join(dir, ".report.json.tmp-5"), 0o755); err != nil { // not a regular file
		t.Fatal(err)
	}
	others = append(others, ".report.json.tmp-5")
	od, err := CreateOutDir(context.Background(), dir, &OutDirSettings{Files: []string{"people.csv.gz"}})
	if err != nil {
		t.Fatal(err)
	}
	defer od.Abort()
	got, want := listDir(t, dir), slices.Sorted(slices.Values(others))
	if !slices.Equal(got, want) {
		t.Errorf("after CreateOutDir the folder holds %q, want %q", got, want)
	}
	if st := od.Stale(); !slices.Equal(st, slices.Sorted(slices.Values(ours))) {
		t.Errorf("Stale() = %q, want %q", st, ours)
	}
}

// TestCreateOutDirKeepsLiveTemp: the temporary file of a release still
// running (written, not yet committed) is not removed by another release
// opening the same folder, and the first release still commits.
func TestCreateOutDirKeepsLiveTemp(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	first, err := CreateOutDir(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Abort()
	if err := first.Write(ctx, SyntheticFile, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "rows"); return err }); err != nil {
		t.Fatal(err)
	}
	second, err := CreateOutDir(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	second.Abort()
	if len(second.Stale()) != 0 {
		t.Errorf("the second release removed %q, a live release's files", second.Stale())
	}
	if err := first.Commit(ctx); err != nil {
		t.Fatalf("first release's commit after another opened the folder: %v", err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{SyntheticFile}) {
		t.Errorf("folder holds %q", got)
	}
}

// TestAbortRemovesMadeParents: a failed release removes the folders it
// created (the output folder and its new parents) and nothing above.
func TestAbortRemovesMadeParents(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "a", "b", "out")
	od, err := CreateOutDir(context.Background(), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	od.Abort()
	if _, err := os.Stat(filepath.Join(base, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Abort %s/a is there (%v)", base, err)
	}
	if _, err := os.Stat(base); err != nil {
		t.Errorf("the existing parent is gone: %v", err)
	}
	// A parent that gets another file meanwhile stays, with that file.
	od, err = CreateOutDir(context.Background(), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(base, "a"), "other.txt")
	od.Abort()
	if got := listDir(t, filepath.Join(base, "a")); !slices.Equal(got, []string{"other.txt"}) {
		t.Errorf("after Abort %s/a holds %q, want other.txt only", base, got)
	}
	// An existing empty folder stays.
	existing := filepath.Join(base, "existing")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	if od, err = CreateOutDir(context.Background(), existing, nil); err != nil {
		t.Fatal(err)
	}
	od.Abort()
	if _, err := os.Stat(existing); err != nil {
		t.Errorf("an existing folder was removed: %v", err)
	}
}
