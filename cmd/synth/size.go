package main

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/dpsynth/synth/universe"
)

// sizeValue is a flag holding a number of bytes written like "512MiB",
// "8GiB", "1.5GB" or "64KiB"; a bare number is MiB (the unit of the flag's
// earlier versions). Values that overflow 2^64 bytes are errors.
type sizeValue struct{ bytes *uint64 }

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
}

// parseSize parses a size (see sizeValue).
func parseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	mult := float64(1 << 20)
	for _, u := range sizeUnits {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suffix)) && len(t) > len(u.suffix) {
			num := strings.TrimSpace(t[:len(t)-len(u.suffix)])
			if _, err := strconv.ParseFloat(num, 64); err == nil {
				t, mult = num, u.mult
				break
			}
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || v <= 0 {
		return 0, fmt.Errorf("%q is not a size (want a positive number with a unit, e.g. 512MiB or 8GiB; a bare number is MiB)", s)
	}
	b := v * mult
	if b >= math.MaxUint64 {
		return 0, fmt.Errorf("%q is larger than 2^64 bytes", s)
	}
	if b < 1 {
		return 0, fmt.Errorf("%q is less than one byte", s)
	}
	return uint64(b), nil
}

func (v sizeValue) String() string {
	if v.bytes == nil || *v.bytes == 0 {
		return ""
	}
	return universe.FormatBytes(new(big.Int).SetUint64(*v.bytes))
}

func (v sizeValue) Set(s string) error {
	b, err := parseSize(s)
	if err != nil {
		return err
	}
	*v.bytes = b
	return nil
}

func (v sizeValue) Type() string { return "size" }
