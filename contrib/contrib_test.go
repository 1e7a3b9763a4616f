package contrib

import (
	"encoding/hex"
	"fmt"
	"math"
	"testing"
)

const testSalt Salt = "0123456789abcdef0123456789abcdef"

// The hashes are those of md5sum on the same text (as SQL's md5 computes
// them): printf '%s' "$salt$unit" | md5sum, then "$u|$cell|$j".
func TestHashesMatchMD5Text(t *testing.T) {
	u := UnitID(testSalt, "user-7")
	if got, want := u.Hex(), "b6f940869b624e7aac3ea5a8406f035b"; got != want {
		t.Errorf("UnitID(salt, %q) = %s, want %s", "user-7", got, want)
	}
	if got := UnitIDBytes(testSalt, []byte("user-7")); got != u {
		t.Errorf("UnitIDBytes = %s, want %s", got.Hex(), u.Hex())
	}
	p := PriorityOf(u, []byte(CellText([]int{3, 0, 12})), 2)
	if got, want := hex.EncodeToString(p[:]), "2b7bccfa7d2bf85d0e83eacf182bdf69"; got != want {
		t.Errorf("PriorityOf(u, \"3,0,12\", 2) = %s, want %s", got, want)
	}
}

func TestSalt(t *testing.T) {
	s := NewSalt(func() uint64 { return 0x0123456789abcdef })
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if got, want := string(s), "efcdab8967452301efcdab8967452301"; got != want {
		t.Errorf("NewSalt = %s, want %s", got, want)
	}
	for _, bad := range []Salt{"", "0123", "0123456789ABCDEF0123456789abcdef", "0123456789abcdef0123456789abcdeg"} {
		if bad.Check() == nil {
			t.Errorf("Salt(%q).Check() = nil, want an error", bad)
		}
	}
}

func TestKeepSmallUnitsKeepEverything(t *testing.T) {
	cells := []Cell{{[]byte("0,1"), 2}, {[]byte("1,1"), 1}}
	kept := make([]int64, 2)
	Keep(UnitID(testSalt, "a"), 3, cells, kept)
	if kept[0] != 2 || kept[1] != 1 {
		t.Errorf("Keep(K = 3) of 3 rows = %v, want [2 1]", kept)
	}
}

// TestKeepOrderFree: the kept rows do not depend on the order in which a
// unit's cells are listed.
func TestKeepOrderFree(t *testing.T) {
	for unit := range 50 {
		u := UnitID(testSalt, fmt.Sprint(unit))
		a := []Cell{{[]byte("0"), 3}, {[]byte("1"), 5}, {[]byte("2"), 1}, {[]byte("3"), 4}}
		b := []Cell{a[3], a[1], a[0], a[2]}
		ka, kb := make([]int64, 4), make([]int64, 4)
		Keep(u, 4, a, ka)
		Keep(u, 4, b, kb)
		if ka[0] != kb[2] || ka[1] != kb[1] || ka[2] != kb[3] || ka[3] != kb[0] {
			t.Fatalf("unit %d: Keep depends on the cells' order: %v vs %v (permuted)", unit, ka, kb)
		}
		if s := ka[0] + ka[1] + ka[2] + ka[3]; s != 4 {
			t.Fatalf("unit %d: kept %d rows, want 4", unit, s)
		}
	}
}

// TestKeepUniform: over many units with 3 rows in cell a and 1 in cell b,
// K = 1 keeps a row of a with probability 3/4 (a uniform draw of one row),
// not 1/2 (a draw of one cell). Sample size 20,000 units; the tolerance is
// 5 standard deviations (σ = √(3/16/20000) ≈ 0.0031): a false failure has
// probability below 10^-6.
func TestKeepUniform(t *testing.T) {
	const units = 20000
	cells := []Cell{{[]byte("7,1"), 3}, {[]byte("2,0"), 1}}
	kept := make([]int64, 2)
	hits := 0
	for i := range units {
		Keep(UnitID(testSalt, fmt.Sprint("u", i)), 1, cells, kept)
		if kept[0]+kept[1] != 1 {
			t.Fatalf("kept %v, want one row", kept)
		}
		hits += int(kept[0])
	}
	got := float64(hits) / units
	if sd := math.Sqrt(0.75 * 0.25 / units); math.Abs(got-0.75) > 5*sd {
		t.Errorf("share of units keeping cell a = %.4f, want 0.75 ± %.4f", got, 5*sd)
	}
}

func ExampleKeep() {
	salt := Salt("0123456789abcdef0123456789abcdef")
	u := UnitID(salt, "user-7")
	// user-7 has 5 rows: 3 in cell (3, 0, 12) and 2 in cell (1, 1, 0).
	cells := []Cell{{[]byte(CellText([]int{3, 0, 12})), 3}, {[]byte(CellText([]int{1, 1, 0})), 2}}
	kept := make([]int64, len(cells))
	Keep(u, 2, cells, kept)
	fmt.Println(kept[0]+kept[1], "rows kept of 5")
	// Output: 2 rows kept of 5
}
