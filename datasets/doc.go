// Package datasets embeds the public benchmark datasets that ship with synth,
// so that the demo, the examples and the tests run on a fresh machine without
// any download.
//
// Each dataset is a pre-encoded CSV (integer codes, header row) and a domain
// file in the {"attr": size} shorthand. Sources, licences and counts are in
// each folder's README.md and in README.md next to this file.
package datasets
