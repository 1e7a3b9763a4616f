package main

import (
	"fmt"
	"math/big"

	"github.com/dpsynth/synth/universe"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func bigInt(v int64) *big.Int { return big.NewInt(v) }

// fmtInt renders an integer with thousands separators, e.g. "48,842".
func fmtInt(v int64) string { return universe.FormatCount(big.NewInt(v)) }
