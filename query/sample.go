package query

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// sampleStream is the PCG stream constant of the marginal sampler ("synthq01").
const sampleStream = 0x73796e7468713031

// maxEnumerate bounds the number of k-subsets listed explicitly before
// sampling; larger families are sampled by rejection.
const maxEnumerate = 1 << 20

// sampleSets draws n distinct k-subsets of cands uniformly without
// replacement and returns them in lexicographic order.
//
// The draw is fully specified so that it is the same on every run, Go
// version and platform: the bits come from PCG (math/rand/v2's PCG-DXSM,
// seeded with (seed, sampleStream)) through Uint64 only, bounded integers use
// Lemire's multiply-and-reject method written out below, and the algorithm
// never iterates over a map. When C(len(cands), k) <= maxEnumerate the
// subsets are listed in lexicographic order and a partial Fisher–Yates
// shuffle picks n of them; otherwise each draw is a partial Fisher–Yates
// shuffle of cands, sorted, and repeats are drawn again.
func sampleSets(cands []int, k, n int, seed uint64) ([][]int, error) {
	total := binomial(len(cands), k)
	if total.IsInt64() && int64(n) > total.Int64() {
		return nil, fmt.Errorf("sample of %d is more than the %s possible %d-way marginals over %d attributes", n, total, k, len(cands))
	}
	if n > MaxQueries {
		return nil, fmt.Errorf("sample of %d marginals is too large", n)
	}
	r := &uniform{src: rand.NewPCG(seed, sampleStream)}
	var out [][]int
	if total.IsInt64() && total.Int64() <= maxEnumerate {
		all := combinations(cands, k)
		for i := range n {
			j := i + int(r.below(uint64(len(all)-i)))
			all[i], all[j] = all[j], all[i]
		}
		out = all[:n:n]
	} else {
		seen := make(map[string]bool, n)
		perm := slices.Clone(cands)
		for len(out) < n {
			for i := range k {
				j := i + int(r.below(uint64(len(perm)-i)))
				perm[i], perm[j] = perm[j], perm[i]
			}
			s := slices.Clone(perm[:k])
			slices.Sort(s)
			key := fmt.Sprint(s)
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, s)
		}
	}
	slices.SortFunc(out, slices.Compare)
	return out, nil
}

// uniform draws bounded integers from a 64-bit source.
type uniform struct{ src *rand.PCG }

// below returns a uniform integer in [0, n) (n > 0) by Lemire's method
// ("Fast random integer generation in an interval", 2019).
func (u *uniform) below(n uint64) uint64 {
	hi, lo := bits.Mul64(u.src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(u.src.Uint64(), n)
		}
	}
	return hi
}
