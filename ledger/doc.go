// Package ledger keeps a table's lifetime privacy budget: the (ε, δ) its
// owners allow for every release of it, ever, and the entries that spent
// it. A release reserves its whole plan in the ledger before it reads a
// record; a reservation that does not fit, composed exactly with what the
// ledger already holds, is refused and the release reads nothing.
//
// A ledger lives in a JSON file (with a lock file beside it, so that
// concurrent releases on one machine or a shared file system are
// serialised, and atomic replacement, so that a crash never leaves it
// half-written) or in PostgreSQL (one row per ledger in a table it
// creates, locked with SELECT … FOR UPDATE), for pipelines on several
// machines.
//
// What is charged when:
//
//   - a release refused before it reads data (a bad flag, over budget, over
//     the memory cap) reserves nothing;
//   - a release that reserved and then fails before reading any record and
//     before drawing any noise (its output folder cannot be created) cancels
//     its entry: it is not charged;
//   - once a release has started to read data its entry stays charged,
//     whatever happens next: "complete" when its outputs are committed,
//     "failed" when an error stopped it, and "running" while it runs — or
//     forever, if it was killed (kill -9, a machine lost): Show reports such
//     an entry as incomplete, still charged, since nobody can tell what it
//     released;
//   - a retry, a --force re-release or tomorrow's run of a pipeline is a new
//     entry: it spends again.
//
// Composition: the entries' charges (zCDP ρ, pure ε, the seeds' paper
// (ε, δ)) are composed by privacy.Ledger with the ledger's budget and
// conversion, exactly as within one release: zCDP entries add up in ρ and
// are converted once.
//
// What a ledger holds is public: the budget, each entry's charges (labels
// and costs, functions of public inputs), times, the solver, the output
// folder and the relation. No statistic of the data is written to it.
package ledger
