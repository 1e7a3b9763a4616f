package ingest

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadCSV: ReadCSV never panics; its errors are data errors or I/O
// errors; a successful read counts every data record once; the result does
// not depend on the number of workers or the batch size, nor on whether
// the input is compressed (pack 1: gzip, 2: zstd). Raw compressed seeds
// let the fuzzer mutate the streams themselves.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("sex,race,age,income,job\nM,b,42,50,y\n"), "", uint8(0))
	f.Add([]byte("job,income,age,race,sex,n\nx,0,0,a,F,3\nNA,1,1,zz,M,0\n"), "n", uint8(1))
	f.Add([]byte("sex,race,age,income,job\nF,a,1,1,\"a\nb\"\n\nF,a,1,1,NA"), "", uint8(2))
	f.Add([]byte("sex,race,age,income,job\nF,a\"\n"), "", uint8(0))
	f.Add([]byte("\xef\xbb\xbfsex,race,age,income,job\r\nF,a,1e1,NaN,x\r\n"), "", uint8(0))
	f.Add([]byte("sex,race,age,income,job\nQ,zz,130,-1,x\nF,a,1,1\n"), "", uint8(0))
	f.Add(gzipped(f, []byte("sex,race,age,income,job\nM,b,42,50,y\n")), "", uint8(0))
	f.Add(zstded(f, []byte("sex,race,age,income,job\nM,b,42,50,y\nF,a,1,1,x\n")), "", uint8(0))
	files, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.csv"))
	for i, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "count", uint8(i%3))
		}
	}
	dom := testDom(f)
	f.Fuzz(func(t *testing.T, raw []byte, countCol string, pack uint8) {
		in := raw
		switch pack % 3 {
		case 1:
			in = gzipped(t, raw)
		case 2:
			in = zstded(t, raw)
		}
		one, st, err1 := ReadCSV(context.Background(), bytes.NewReader(in), "f.csv", dom, Options{CountColumn: countCol, Workers: 1})
		many, _, err2 := ReadCSV(context.Background(), bytes.NewReader(in), "f.csv", dom, Options{CountColumn: countCol, Workers: 3, BatchRows: 2})
		if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
			t.Fatalf("1 worker: %v; 3 workers: %v", err1, err2)
		}
		packed := bytes.HasPrefix(raw, gzipMagic) || bytes.HasPrefix(raw, zstdMagic)
		if pack%3 != 0 && !packed { // (a packed raw input is decompressed once only)
			plain, _, err3 := ReadCSV(context.Background(), bytes.NewReader(raw), "f.csv", dom, Options{CountColumn: countCol, Workers: 2})
			if (err1 == nil) != (err3 == nil) || err1 != nil && err1.Error() != err3.Error() || err1 == nil && table(one) != table(plain) {
				t.Fatalf("compressed: %v; plain: %v", err1, err3)
			}
		}
		if packed {
			return // a compressed stream: encoding/csv cannot check it
		}
		if err1 != nil {
			var de *DataError
			var re *ReadError
			if !errors.As(err1, &de) && !errors.As(err1, &re) {
				t.Fatalf("error %v (%T) is neither a *DataError nor a *ReadError", err1, err1)
			}
			return
		}
		if table(one) != table(many) {
			t.Fatalf("1 worker: %s; 3 workers: %s", table(one), table(many))
		}
		recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
		if err != nil {
			t.Fatalf("ReadCSV accepted input that encoding/csv rejects: %v", err)
		}
		if st.Rows != int64(len(recs)-1) {
			t.Fatalf("read %d rows, encoding/csv sees %d data records", st.Rows, len(recs)-1)
		}
		if countCol == "" && one.Total() != st.Rows {
			t.Fatalf("total %d, want one record per row (%d)", one.Total(), st.Rows)
		}
		if st.N != one.Total() || st.Distinct != one.Distinct() {
			t.Fatalf("stats %+v disagree with counts (total %d, distinct %d)", st, one.Total(), one.Distinct())
		}
	})
}
