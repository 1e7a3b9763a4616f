// Package examples holds runnable walk-throughs of synth, one folder each
// with a README.md (the commands to type and what they print) and a small
// program the walk-through uses. The package itself has no code: its test
// runs every README's commands against freshly built binaries and checks
// that they still print what the README shows.
package examples
