package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// entries lists the names in dir, sorted.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func writeRelease(ctx context.Context, od *OutDir, tag string) error {
	// Written out of order on purpose: the manifest still commits last.
	for _, name := range []string{ManifestFile, SyntheticFile, ReportJSONFile} {
		if err := od.Write(ctx, name, 0o644, writeString(tag+" "+name)); err != nil {
			return err
		}
	}
	return nil
}

func TestOutDirCommit(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a", "out") // parents created
	od, err := CreateOutDir(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer od.Abort()
	if err := writeRelease(ctx, od, "v1"); err != nil {
		t.Fatal(err)
	}
	// Before Commit only hidden temporary files exist.
	for _, n := range entries(t, dir) {
		if !strings.HasPrefix(n, ".") || !strings.Contains(n, ".tmp-") {
			t.Errorf("before Commit: %q in the folder, want only temporary files", n)
		}
	}
	if got := od.commitOrder(); got[len(got)-1].name != ManifestFile || got[0].name != SyntheticFile {
		t.Errorf("commit order = %v, want synthetic first and the manifest last", got)
	}
	if err := od.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{ManifestFile, ReportJSONFile, SyntheticFile}
	if got := entries(t, dir); !slices.Equal(got, want) {
		t.Errorf("after Commit: folder holds %v, want %v", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, SyntheticFile))
	if string(b) != "v1 "+SyntheticFile {
		t.Errorf("content = %q", b)
	}
	fi, _ := os.Stat(filepath.Join(dir, SyntheticFile))
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644", fi.Mode().Perm())
	}
	od.Abort() // no-op after Commit
	if got := entries(t, dir); !slices.Equal(got, want) {
		t.Errorf("Abort after Commit removed files: %v", got)
	}
}

func TestOutDirExisting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	// Unrelated files do not conflict.
	od, err := CreateOutDir(ctx, dir, nil)
	if err != nil {
		t.Fatalf("folder with an unrelated file: %v", err)
	}
	if err := writeRelease(ctx, od, "v1"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ReportHTMLFile), []byte("old html"), 0o644)
	if err := od.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// A second run is refused without Force...
	_, err = CreateOutDir(ctx, dir, nil)
	var ce *CreateError
	if !errors.As(err, &ce) || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateOutDir on a folder holding a release: error = %v, want *CreateError wrapping fs.ErrExist", err)
	}
	// ...and replaces the release with it; the stale report.html goes too.
	od, err = CreateOutDir(ctx, dir, &OutDirSettings{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := od.Write(ctx, SyntheticFile, 0o644, writeString("v2")); err != nil {
		t.Fatal(err)
	}
	if err := od.Write(ctx, ManifestFile, 0o644, writeString("v2 manifest")); err != nil {
		t.Fatal(err)
	}
	if err := od.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := entries(t, dir)
	if len(got) != 4 || got[0] != ManifestFile || !strings.HasPrefix(got[1], ReplacedManifestPrefix) || got[2] != "notes.txt" || got[3] != SyntheticFile {
		t.Errorf("after a forced release: %v, want manifest.json, the replaced manifest, notes.txt, synthetic.parquet", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, SyntheticFile)); string(b) != "v2" {
		t.Errorf("synthetic = %q, want v2", b)
	}
	// The record of the replaced release survives, whatever the number of
	// replacements (two in one second get distinct names).
	if b, _ := os.ReadFile(filepath.Join(dir, got[1])); string(b) != "v1 "+ManifestFile {
		t.Errorf("replaced manifest = %q, want the first release's", b)
	}
	od, err = CreateOutDir(ctx, dir, &OutDirSettings{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeRelease(ctx, od, "v3"); err != nil {
		t.Fatal(err)
	}
	if err := od.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, e := range entries(t, dir) {
		if strings.HasPrefix(e, ReplacedManifestPrefix) {
			b, _ := os.ReadFile(filepath.Join(dir, e))
			kept = append(kept, string(b))
		}
	}
	slices.Sort(kept)
	if want := []string{"v1 " + ManifestFile, "v2 manifest"}; !slices.Equal(kept, want) {
		t.Errorf("replaced manifests after two replacements: %q, want %q", kept, want)
	}
}

func TestOutDirCannotCreate(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, dir := range []string{file, filepath.Join(file, "sub")} {
		_, err := CreateOutDir(ctx, dir, nil)
		var ce *CreateError
		if !errors.As(err, &ce) {
			t.Errorf("CreateOutDir(%s) error = %v, want *CreateError", dir, err)
		}
	}
}

func TestOutDirUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permissions are not enforced")
	}
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	_, err := CreateOutDir(ctx, dir, nil)
	var ce *CreateError
	if !errors.As(err, &ce) || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("CreateOutDir on a read-only folder: error = %v, want *CreateError wrapping fs.ErrPermission", err)
	}
	_, err = CreateOutDir(ctx, filepath.Join(dir, "sub"), nil)
	if !errors.As(err, &ce) {
		t.Fatalf("CreateOutDir under a read-only folder: error = %v, want *CreateError", err)
	}
}

func TestOutDirCancelMidWrite(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	od, err := CreateOutDir(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := od.Write(ctx, ReportJSONFile, 0o600, writeString("{}")); err != nil {
		t.Fatal(err)
	}
	// fn ignores ctx: the writer itself fails once ctx is cancelled.
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	err = od.Write(ctx, SyntheticFile, 0o644, func(w io.Writer) error {
		for i := 0; ; i++ {
			if i == 40 {
				cancel()
			}
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Write cancelled midway: error = %v, want context.Canceled", err)
	}
	if got := entries(t, dir); len(got) != 0 {
		t.Errorf("after cancellation the folder holds %v, want nothing", got)
	}
}

func TestOutDirErrors(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "new")
	od, err := CreateOutDir(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := od.Write(ctx, ReportJSONFile, 0o600, writeString("{}")); err != nil {
		t.Fatal(err)
	}
	// fn's own error passes through and aborts everything, including the
	// folder this run created.
	boom := errors.New("boom")
	if err := od.Write(ctx, SyntheticFile, 0o644, func(io.Writer) error { return boom }); err != boom {
		t.Fatalf("Write error = %v, want fn's error", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the folder created by the failed run still exists (%v)", err)
	}
	// An I/O error of the file is a *WriteError: /dev/full as the folder's
	// file is not possible, so fail the rename instead: a folder appears
	// at the final name.
	dir = t.TempDir()
	od, _ = CreateOutDir(ctx, dir, &OutDirSettings{Force: true})
	od.Write(ctx, ReportJSONFile, 0o600, writeString("{}"))
	od.Write(ctx, SyntheticFile, 0o644, writeString("data"))
	os.MkdirAll(filepath.Join(dir, SyntheticFile, "x"), 0o755)
	err = od.Commit(ctx)
	var we *WriteError
	if !errors.As(err, &we) || we.Op != "rename" {
		t.Fatalf("Commit onto a non-empty folder: error = %v, want *WriteError rename", err)
	}
	if got := entries(t, dir); !slices.Equal(got, []string{SyntheticFile}) {
		t.Errorf("after a failed commit the folder holds %v, want only the obstacle", got)
	}
}

// TestOutDirSignal re-executes the test binary as a child that writes
// synthetic.parquet slowly, kills it with a signal mid-write and checks that
// neither synthetic.parquet nor manifest.json is left. With SIGINT the
// child's context is cancelled (as in the CLI) and it also removes its
// temporary files; SIGKILL cannot be caught, so they may remain.
func TestOutDirSignal(t *testing.T) {
	if dir := os.Getenv("SYNTH_OUTDIR_CHILD"); dir != "" {
		outDirChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("subprocess test")
	}
	for _, sig := range []os.Signal{os.Interrupt, os.Kill} {
		t.Run(fmt.Sprint(sig), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestOutDirSignal$")
			cmd.Env = append(os.Environ(), "SYNTH_OUTDIR_CHILD="+dir)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the child is writing synthetic.parquet's temp file
			// and the manifest's is written.
			deadline := time.Now().Add(20 * time.Second)
			for {
				names := entries(t, dir)
				n := 0
				for _, name := range names {
					if strings.HasPrefix(name, "."+SyntheticFile+".tmp-") || strings.HasPrefix(name, "."+ManifestFile+".tmp-") {
						n++
					}
				}
				if n == 2 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("child never started writing; folder %v; stderr %s", names, stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("child exited with %v, want a failure; stderr %s", err, stderr.String())
			}
			names := entries(t, dir)
			for _, final := range []string{SyntheticFile, ManifestFile} {
				if slices.Contains(names, final) {
					t.Errorf("after %v: %s exists", sig, final)
				}
			}
			if sig == os.Interrupt {
				if ee.ExitCode() != 130 {
					t.Errorf("child exit code %d, want 130; stderr %s", ee.ExitCode(), stderr.String())
				}
				if len(names) != 0 {
					t.Errorf("after SIGINT the folder holds %v, want nothing", names)
				}
			}
		})
	}
}

// outDirChild writes a manifest, then synthetic.parquet forever, until a
// signal cancels its context.
func outDirChild(dir string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	od, err := CreateOutDir(ctx, dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(73)
	}
	defer od.Abort()
	if err := od.Write(ctx, ManifestFile, 0o644, writeString("{}")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(74)
	}
	chunk := bytes.Repeat([]byte("y"), 4<<10)
	err = od.Write(ctx, SyntheticFile, 0o644, func(w io.Writer) error {
		for {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
			time.Sleep(time.Millisecond)
		}
	})
	if errors.Is(err, context.Canceled) {
		od.Abort()
		os.Exit(130)
	}
	fmt.Fprintln(os.Stderr, "unexpected:", err)
	os.Exit(1)
}
