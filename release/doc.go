// Package release is the pipeline that turns data, a public domain, a
// workload and a privacy budget into a released synthetic data set, its
// error reports and its manifest.
//
// This file documents the output side, which the pipeline calls once the
// solver has produced a distribution D over the universe:
//
//   - Sample draws the cells of N synthetic records from D, by controlled
//     rounding of N·D with systematic sampling of the remainders (the
//     default, Systematic: every count within one of N·D(z), unbiased) or
//     by i.i.d. draws (IID). Rows expands the cells into one cell per row
//     in a uniformly random order; Histogram gives the synthetic P_n for
//     scoring the workload on the released rows.
//   - Decoder turns a cell into attribute values through the domain:
//     categorical strings, integers (bucket middle integer or a uniform draw
//     in the bucket), reals (bin midpoint or a uniform draw in the bin),
//     encoded codes, and nulls.
//   - ParquetWriter (WriteParquet) streams the rows into synthetic.parquet
//     with the domain's column names and types (Schema), row group by row
//     group, with the manifest in the key-value metadata (ManifestKey).
//   - OutDir is the transaction on the output folder: temporary files in
//     the folder, fsync, rename with manifest.json last, folder fsync;
//     nothing final is left on error, cancellation or signal. CreateError
//     (exit 73) and WriteError (exit 74) tell "cannot create" from "I/O".
//   - Manifest is the public record of the release (tool, solver, privacy
//     charges and totals, neighbouring relation, randomness, hashes of the
//     public inputs, rows written, timestamps, warnings).
//
// Privacy: everything here is post-processing of D, which the solver has
// already made differentially private. Sampling any number of rows,
// decoding (uniform draws inside a bucket or bin come from the random
// source, not the data) and writing cost no budget. The error reports that
// compare the output with the private data are not part of this; they are
// made by package eval and are internal.
package release
