// Package draft proposes a domain file (the JSON of docs/DOMAIN.md) for a
// table, with differential privacy, so that a data team never has to read
// its private data to write one.
//
// What it is for. The domain of a release is public input: synth never
// learns categories, bounds or bins from the data. Writing it by hand means
// knowing each column's kind, its categories or range and its spelling of a
// missing value; looking them up in the table would make the domain a
// function of the private data, outside any privacy budget. This package is
// the one place where the data is read for the domain, and it reads it only
// through the mechanisms below, each charged before the first record is
// read. Its output is a draft: every kind, category and bound is a noisy
// estimate to check against public knowledge before the domain is used.
//
// What it writes, per column:
//
//   - a kind (categorical, boolean, integer, numeric, date, timestamp) from
//     a noisy vote of the rows (kind.go), or from the Parquet schema for
//     typed columns; and a null token when enough missing values are found;
//   - for text columns, categories by DP partition selection
//     (categories.go): values held by too few units never appear;
//   - for numbers, dates and timestamps, bounds from DP quantiles over
//     public grids (bounds.go), rounded to nice values, with equal-width
//     bins (integers: a nice width; dates and timestamps: a bin unit from
//     the span).
//
// The "draft" object of the file records the budget, the privacy unit, the
// time and public notes (thresholds, placeholders to fill in). A
// schema-only draft (Settings.Epsilon == 0) reads the CSV header or the
// Parquet schema and no row, spends nothing, and marks every column's
// placeholder for the user to fill in.
//
// Privacy contract. Neighbouring tables differ by the addition or removal of
// one privacy unit: one row, or, with Settings.PrivacyUnit, every row that
// names the same value of that column, of which at most
// Settings.MaxRowsPerUnit = K are kept, chosen at random by package
// contrib's rule before any statistic (bound.go; a stable transformation).
// Every mechanism states its sensitivity under this relation in a
// "Privacy:" paragraph of its doc comment. The whole budget (ε, δ) is split
// among the columns and mechanisms by a plan computed from the schema and
// the settings only (budget.go), charged to a privacy.Ledger before any
// record is read; the total is δ_sel-approximately ρ-zCDP and is reported
// in Draft.Spent as privacy.ApproxCost(ε, δ), never above Settings.
// Randomness comes only from the privacy.Rand given (exact discrete
// Gaussian noise, Gumbel-max exponential mechanism); a seeded Rand makes a
// draft reproducible and not private against anyone who knows the seed.
//
// What is public in the output: the settings, the schema's column names
// and types, the noisy outputs (kinds, null tokens, kept categories,
// bounds) and functions of them and of public constants. No true count, no
// value of the unit column and no value that did not pass a mechanism is
// written. Errors about the data (a malformed CSV line, a missing unit)
// name the row, never a value of the unit column; like the engine's, they
// are not covered by the guarantee.
//
// What it does not do: it holds the drafted columns in memory (about 16
// bytes per text field and 8 per number), refusing a table over
// Settings.MemoryCap with a *MemoryError (before reading when a Parquet
// footer gives the row count); for very large tables, draft from some of
// the files (a choice of files made without looking at the data is a
// subset of the units, so the guarantee holds for the whole table). It
// reads one file or one stream of record batches.
package draft
