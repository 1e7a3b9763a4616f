//go:build longtest

package privacy

// longTests is true under -tags longtest (larger samples, fresh seeds).
const longTests = true
