// Package par runs data-parallel loops on a fixed team of goroutines
// without allocating per call, so that solver iterations stay
// allocation-free while using every core.
package par
