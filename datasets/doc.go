// Package datasets embeds the public benchmark datasets that ship with synth,
// so that the demo, the examples and the tests run on a fresh machine without
// any download.
//
// The benchmark tables from the DP literature (adult, adult-gem,
// adult-reduced, nltcs, titanic) are pre-encoded CSVs (integer codes, header
// row) with a domain in the {"attr": size} shorthand. The tables exported from
// R packages (affairs, arrests, beps, ces11, collegedistance, cps1988, cpssw8, doctorvisits,
// fertility, gss7402, gssvocab, healthins, hmda, mplsstops, psid1982, resumenames, slid,
// smokeban, star, wvs)
// keep their values as the package prints them, with a full-form domain
// written from the package's documentation, not from the data (r/export.R
// exports them; fertility and mplsstops are gzip-compressed). Sources, licences and counts are in
// each folder's README.md and in README.md next to this file.
package datasets
