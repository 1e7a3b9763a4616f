// Package privacy holds what every private release stands on: randomness,
// noise samplers, selection mechanisms and the accounting of their cost.
// It knows nothing about solvers or data files.
//
// Randomness. Rand is a ChaCha8 stream keyed from crypto/rand (NewSecure) or
// from a user seed for tests and demos (NewSeeded, which Describe reports as
// "seeded: not private against anyone who knows the seed"). Split gives
// independent streams for parallel workers. Nothing here uses math/rand (v1)
// or a time-based seed.
//
// Released values. DiscreteLaplace and DiscreteGaussian are exact samplers
// on the integers (Canonne, Kamath and Steinke 2020): every coin is a
// comparison of uniform integers with exact rationals, so a released count
// carries no floating-point artefact (Mironov 2012). Real-valued statistics
// go through SnappedLaplace or SnappedGaussian, which round to a
// power-of-two grid and add grid-scaled discrete noise, with the sensitivity
// raised by the rounding.
//
// Selections. ExponentialMechanism (Gumbel-max) and ReportNoisyMaxLaplace
// (seed 001's Algorithm 1) release only an index. The caller states the
// scores' sensitivity and, for report-noisy-max, whether they are monotone.
//
// Internal noise. GaussianVector fills a vector with N(0, σ²) draws on all
// cores for solvers that privatise a histogram and release only a
// post-processing of it (DPAM); its documentation says why a float sampler
// is used there and what that means.
//
// Accounting. Each mechanism has a cost function returning a Cost: zCDP ρ
// (Gaussian Δ²/(2σ²); exponential mechanism ε0²/8 by bounded range), pure ε
// (with its zCDP equivalent), or (ε, δ) for the seeds' "paper" accounting
// (AdvancedComposition, PaperComposition). RhoToEps, RhoToDelta and EpsToRho
// convert between ρ and (ε, δ), tightly (CKS 2020, Proposition 12) by
// default or by the standard ρ + 2√(ρ ln(1/δ)). The Calibrate functions
// give the per-step parameter that meets a target, erring on the private
// side. A Ledger holds the budget, records labelled charges and refuses any
// that would exceed it, so a release can check its whole plan before it
// reads a record. StagedGaussian bounds the exact (ε, δ) of a plan made of
// discrete Gaussians alone (a count, then sets of tables chosen by it) from
// its privacy-loss distribution, for plans charged as one (ε, δ) instead of
// through zCDP.
//
// Neighbouring relation: unless a caller states otherwise, two datasets are
// neighbours when they differ by replacing one record, and n is public.
package privacy
