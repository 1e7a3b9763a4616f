// Command ingestbench measures ingest throughput and peak memory on a large
// generated pre-encoded table. It is a benchmark, not a test: the figures
// go to docs/BENCHMARKS.md.
//
//	go run ./ingest/internal/ingestbench -rows 10000000 -format csv
//	go run ./ingest/internal/ingestbench -rows 10000000 -format parquet
//
// The input is written once under -dir (by a child process, so that its
// memory does not count) and reused. The report gives rows per second and
// the peak resident set size (getrusage ru_maxrss) of the ingest process.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/ingest/internal/benchdata"
	"github.com/dpsynth/synth/universe"
)

func main() {
	var (
		rows    = flag.Int("rows", 10_000_000, "rows to generate and read")
		format  = flag.String("format", "csv", "csv or parquet")
		dataset = flag.String("dataset", "adult", "shipped dataset whose rows are resampled")
		dir     = flag.String("dir", filepath.Join(os.TempDir(), "synth-ingestbench"), "folder for the generated files")
		workers = flag.Int("workers", 0, "ingest workers (0: GOMAXPROCS)")
		batch   = flag.Int("batch", 0, "rows per record batch (0: default)")
		gen     = flag.Bool("gen", false, "only generate the input file")
		runs    = flag.Int("runs", 1, "timed reads; the median is reported")
		prof    = flag.String("cpuprofile", "", "write a CPU profile of the reads to this file")
	)
	flag.Parse()
	if *prof != "" {
		pf, err := os.Create(*prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ingestbench:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	if err := run(*rows, *format, *dataset, *dir, *workers, *batch, *gen, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "ingestbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(rows int, format, dataset, dir string, workers, batch int, gen bool, runs int) error {
	f, err := ingest.ParseFormat(format)
	if err != nil || f == ingest.Auto {
		return fmt.Errorf("-format must be csv or parquet")
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.%s", dataset, rows, f))
	if gen {
		return generate(path, dataset, rows, f)
	}
	if _, err := os.Stat(path); err != nil {
		// Generate in a child process so that its memory is not counted.
		cmd := exec.Command(os.Args[0], "-gen", "-rows", fmt.Sprint(rows), "-format", format, "-dataset", dataset, "-dir", dir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("generating %s: %w", path, err)
		}
	}
	t, err := benchdata.Load(dataset)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	opts := ingest.Options{Format: f, Workers: workers, BatchRows: batch}
	var times, cpus []time.Duration
	var st *ingest.Stats
	for range max(runs, 1) {
		cpu0 := cpuTime()
		start := time.Now()
		var c *universe.Counts
		c, st, err = ingest.ReadFile(context.Background(), path, t.Domain, opts)
		if err != nil {
			return err
		}
		times = append(times, time.Since(start))
		cpus = append(cpus, cpuTime()-cpu0)
		if c.Total() != int64(rows) {
			return fmt.Errorf("counted %d rows, want %d", c.Total(), rows)
		}
	}
	med := median(times)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	fmt.Printf("file       %s (%.1f MiB, %s)\n", path, float64(fi.Size())/(1<<20), f)
	fmt.Printf("rows       %d, distinct cells %d, attributes %d\n", st.Rows, st.Distinct, t.Domain.Len())
	fmt.Printf("workers    %d (GOMAXPROCS %d)\n", max(workers, runtime.GOMAXPROCS(0)*boolInt(workers == 0)), runtime.GOMAXPROCS(0))
	fmt.Printf("time       %v (median of %d)\n", med.Round(time.Millisecond), len(times))
	fmt.Printf("throughput %.0f rows/s, %.0f MiB/s\n", float64(rows)/med.Seconds(), float64(fi.Size())/(1<<20)/med.Seconds())
	cpu := median(cpus)
	fmt.Printf("CPU time   %v (user+sys, median), %.0f rows per CPU-second\n", cpu.Round(time.Millisecond), float64(rows)/cpu.Seconds())
	fmt.Printf("load       %s", loadavg())
	fmt.Printf("peak RSS   %.1f MiB\n", float64(ru.Maxrss)/1024) // ru_maxrss is in KiB on Linux
	return nil
}

// cpuTime is the user plus system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadavg returns the 1-minute load average line of /proc/loadavg (the
// machine is shared: a load above the core count means the wall-clock
// figures are pessimistic).
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown\n"
	}
	return string(b)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

func generate(path, dataset string, rows int, f ingest.Format) error {
	t, err := benchdata.Load(dataset)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if f == ingest.Parquet {
		err = t.WriteParquet(struct{ io.Writer }{out}, rows, 1<<20, 1) // hide Close: pqarrow closes an io.Closer sink
	} else {
		err = t.WriteCSV(out, rows, 1)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
