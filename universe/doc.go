// Package universe turns a public domain description into a data universe.
//
// A Domain is an ordered list of attributes. Each attribute maps the values a
// column may hold onto the codes 0..Size()-1:
//
//   - Categorical: an explicit list of strings, optionally with a declared
//     "other" value that unknown strings map to when the caller asks for it.
//   - Integer: an inclusive range min..max, optionally bucketed by width.
//   - Numeric: a closed interval [lower, upper] cut into equal-width bins or at
//     explicit edges; NaN and ±Inf are rejected.
//   - Encoded: values that are already codes 0..size-1 (the {"attr": size}
//     shorthand used by the benchmark datasets).
//
// Any attribute may declare a null token; missing values then have a cell of
// their own (the last code). Without a declaration a missing value is an
// error.
//
// The universe is the product of the attribute domains. A record's cell is
// its mixed-radix index: the last attribute varies fastest. Sizes are
// computed exactly with math/big so that universes far beyond 2^64 cells can
// be reported and refused; an explicit float64 vector over the universe is
// only possible when the size fits the memory cap (see Domain.CheckExplicit).
//
// Counts holds a sparse histogram over the universe: at most one entry per
// distinct cell seen, so the universe may be far larger than memory.
//
// Privacy: the domain is public input. Nothing in this package looks at
// private data to choose categories, bounds or bins; values outside the
// declared domain are errors unless the caller asked for an explicit,
// row-wise Policy (clamp numeric values, map unknown categories to the
// declared other value).
package universe
