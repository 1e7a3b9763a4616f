package release

import (
	"context"
	"io"
	"runtime/metrics"
	"testing"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/universe"
)

// adultReduced returns the adult-reduced domain (k = 336,000) and a
// distribution over it with about two thirds of the cells positive.
func adultReduced(b *testing.B) (*universe.Domain, []float64) {
	src, err := datasets.ReadFile("adult-reduced/adult-reduced-domain.json")
	if err != nil {
		b.Fatal(err)
	}
	dom := mustDomain(b, string(src))
	k, _ := dom.Size()
	return dom, randomDist(seeded(1), int(k))
}

func BenchmarkSample(b *testing.B) {
	_, d := adultReduced(b)
	for _, c := range []struct {
		name string
		m    SampleMethod
		n    int64
	}{
		{"systematic/n=48842", Systematic, 48842},
		{"systematic/n=1e7", Systematic, 1e7},
		{"iid/n=48842", IID, 48842},
		{"iid/n=1e7", IID, 1e7},
	} {
		b.Run(c.name, func(b *testing.B) {
			dst := make([]CellCount, 0, len(d))
			r := seeded(2)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, err = Sample(dst[:0], d, c.n, c.m, r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(d)), "ns/cell")
		})
	}
}

func BenchmarkRows(b *testing.B) {
	_, d := adultReduced(b)
	r := seeded(3)
	cells, _ := Sample(nil, d, 1e7, Systematic, r)
	rows := make([]uint32, 0, 1e7)
	b.ReportAllocs()
	for b.Loop() {
		rows = Rows(rows[:0], cells, r)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e7, "ns/row")
}

// peakWriter discards the file and samples the live heap as it goes.
type peakWriter struct {
	sample []metrics.Sample
	peak   uint64
	size   int64
}

func (w *peakWriter) Write(p []byte) (int, error) {
	metrics.Read(w.sample)
	w.peak = max(w.peak, w.sample[0].Value.Uint64())
	w.size += int64(len(p))
	return len(p), nil
}

// BenchmarkParquet writes 10^7 rows of adult-reduced (7 columns) and
// reports ns per row and the peak live heap seen during the write
// (peak-heap-MiB, the rows slice of 40 MB included).
func BenchmarkParquet(b *testing.B) {
	dom, d := adultReduced(b)
	r := seeded(4)
	cells, _ := Sample(nil, d, 1e7, Systematic, r)
	rows := Rows(nil, cells, r)
	dec, err := NewDecoder(dom, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, comp := range []string{"snappy", "zstd", "none"} {
		b.Run(comp, func(b *testing.B) {
			w := &peakWriter{sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
			b.ReportAllocs()
			for b.Loop() {
				w.size = 0
				if _, err := WriteParquet(context.Background(), w, rows, dec, &ParquetSettings{Compression: comp}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(rows)), "ns/row")
			b.ReportMetric(float64(w.peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(w.size)/(1<<20), "file-MiB")
		})
	}
}

var _ io.Writer = (*peakWriter)(nil)
