package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"
)

// ManifestSchema names the manifest format and its version. A change that
// removes or renames a field, or changes a field's meaning, bumps the
// version; new optional fields do not.
const ManifestSchema = "synth.manifest/v1"

// SeededNote is the randomness note of a run with a user seed.
const SeededNote = "seeded: not private against anyone who knows the seed"

// Manifest records how a release was made: the tool, the solver, every
// privacy charge and the totals, the neighbouring relation, the randomness,
// the public inputs' hashes, what was written and when. It is written as
// manifest.json (last, marking a complete release) and stored in
// synthetic.parquet under ManifestKey.
//
// The manifest is public: it holds only public facts (settings, budget,
// hashes of the public domain and workload files, the row count written).
// It never holds a hash of the private data (which would let anyone confirm
// a guess of the whole data set) nor the seed of a seeded run (which would
// make the noise reproducible by every reader).
//
// The JSON form (Manifest.JSON) is stable: fields appear in the order of
// the struct, every field is always present except the optional ones
// marked omitempty, and floats are written in Go's shortest form. Example:
//
//	{
//	  "schema": "synth.manifest/v1",
//	  "tool": {"name": "synth", "version": "v0.3.0", "commit": "0a1b2c3"},
//	  "started": "2026-01-02T03:04:05Z",
//	  "finished": "2026-01-02T03:04:09Z",
//	  "solver": {"name": "dpfw", "setting": "tuned", "iterations": 400},
//	  "privacy": {
//	    "neighbouring": "add or remove one privacy unit (one row); n private",
//	    "relation": "add-remove",
//	    "unit": {"max_rows": 1},
//	    "accounting": "zCDP",
//	    "budget": {"epsilon": 1, "delta": 1e-9},
//	    "charges": [{"label": "selection 1/400", "rho": 1.1e-5}, …],
//	    "total": {"rho": 0.0044, "epsilon": 0.9998, "delta": 1e-9}
//	  },
//	  "randomness": {"source": "secure"},
//	  "inputs": [{"role": "domain", "path": "adult-domain.json", "sha256": "…"}, …],
//	  "output": {"rows": 48842, "sampling": "systematic", "integer_values": "point", "numeric_values": "point", "files": […]},
//	  "warnings": []
//	}
type Manifest struct {
	Schema     string      `json:"schema"`
	Tool       ToolInfo    `json:"tool"`
	Started    string      `json:"started"`  // RFC 3339, UTC (Timestamp)
	Finished   string      `json:"finished"` // RFC 3339, UTC
	Solver     SolverInfo  `json:"solver"`
	Privacy    PrivacyInfo `json:"privacy"`
	Randomness Randomness  `json:"randomness"`
	Inputs     []InputFile `json:"inputs"`
	Output     OutputInfo  `json:"output"`
	Warnings   []string    `json:"warnings"`
}

// ToolInfo identifies the program that made the release.
type ToolInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Commit  string `json:"commit"`
}

// SolverInfo names the solver and its setting ("paper" or "tuned").
type SolverInfo struct {
	Name       string `json:"name"`
	Setting    string `json:"setting"`
	Iterations int    `json:"iterations"`
	// Model is the representation of D: "explicit" or "factored" (absent
	// in manifests of earlier versions, which were explicit).
	Model string `json:"model,omitempty"`
	// Cliques are the factored model's junction-tree cliques (attribute
	// names). They follow from the measured sets, which the adaptive rounds
	// choose privately: a noisy output.
	Cliques [][]string `json:"cliques,omitempty"`
}

// PrivacyInfo is the privacy statement of the release.
type PrivacyInfo struct {
	// Neighbouring states the neighbouring relation and its privacy unit,
	// e.g. "add or remove one privacy unit (one row); n private"
	// (NeighbourText).
	Neighbouring string `json:"neighbouring"`
	// Relation is the relation's name: "add-remove" or "replace-one"
	// (absent in manifests written before it was recorded: read
	// Neighbouring).
	Relation string `json:"relation,omitempty"`
	// Unit is the privacy unit: the column identifying it (none: one row)
	// and K, the most rows one unit contributes (absent in manifests written
	// before it was recorded: one row).
	Unit *UnitInfo `json:"unit,omitempty"`
	// Accounting names the composition: zCDP, the exact privacy-loss
	// distribution of a plan of discrete Gaussians (no ρ is stated then), or
	// the seeds' "advanced composition (paper)".
	Accounting string `json:"accounting"`
	// Budget is what the user asked for.
	Budget Budget `json:"budget"`
	// Charges lists every mechanism run, in order.
	Charges []Charge `json:"charges"`
	// Total is the composed cost: ρ (zCDP; absent for the paper and the
	// exact accounting) and its (ε, δ) conversion.
	Total Total `json:"total"`
}

// Budget is a requested (ε, δ).
type Budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// Charge is the cost of one mechanism: ρ (zCDP), or ε (pure DP) and
// optionally δ, or both forms.
type Charge struct {
	Label   string   `json:"label"`
	Rho     *float64 `json:"rho,omitempty"`
	Epsilon *float64 `json:"epsilon,omitempty"`
	Delta   *float64 `json:"delta,omitempty"`
}

// Total is the composed privacy cost.
type Total struct {
	Rho     *float64 `json:"rho,omitempty"`
	Epsilon float64  `json:"epsilon"`
	Delta   float64  `json:"delta"`
}

// Randomness says where the noise came from.
type Randomness struct {
	// Source is "secure" (crypto/rand, or ChaCha8 seeded from it) or
	// "seeded" (a user seed: tests and demos only).
	Source string `json:"source"`
	// Note is SeededNote for a seeded run, empty otherwise.
	Note string `json:"note,omitempty"`
}

// SecureRandomness is the randomness record of a run whose noise comes from
// crypto/rand.
func SecureRandomness() Randomness { return Randomness{Source: "secure"} }

// SeededRandomness is the randomness record of a run with a user seed. The
// seed itself is not recorded.
func SeededRandomness() Randomness { return Randomness{Source: "seeded", Note: SeededNote} }

// InputFile is a public input and its SHA-256 (HashFile).
type InputFile struct {
	Role   string `json:"role"` // "domain", "workload", "config"
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// OutputInfo describes what was written.
type OutputInfo struct {
	Rows          int64  `json:"rows"`
	Sampling      string `json:"sampling"`       // SampleMethod.String()
	IntegerValues string `json:"integer_values"` // ValueRule.String()
	NumericValues string `json:"numeric_values"` // ValueRule.String()
	// TimeValues is the rule of date and timestamp bins (absent when the
	// domain has none).
	TimeValues string `json:"time_values,omitempty"`
	// Format is the synthetic data's format, "parquet" or "csv" (absent
	// in manifests written before it was recorded: parquet).
	Format string   `json:"format,omitempty"`
	Files  []string `json:"files"`
}

// Timestamp formats t for the manifest: RFC 3339 in UTC, whole seconds.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// HashFile returns the hex SHA-256 of the file at path.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Validate checks the manifest's invariants: schema, UTC RFC 3339
// timestamps in order, a known randomness source with its note, finite
// non-negative costs, every charge with a cost, 64-hex-digit hashes and a
// non-negative row count.
func (m *Manifest) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if m.Schema != ManifestSchema {
		bad("schema %q, want %q", m.Schema, ManifestSchema)
	}
	var times [2]time.Time
	for i, ts := range []string{m.Started, m.Finished} {
		t, err := time.Parse(time.RFC3339, ts)
		switch {
		case err != nil:
			bad("timestamp %q is not RFC 3339", ts)
		case len(ts) == 0 || ts[len(ts)-1] != 'Z':
			bad("timestamp %q is not in UTC", ts)
		}
		times[i] = t
	}
	if times[1].Before(times[0]) {
		bad("finished %s before started %s", m.Finished, m.Started)
	}
	switch m.Randomness.Source {
	case "secure":
		if m.Randomness.Note != "" {
			bad("secure randomness with a note %q", m.Randomness.Note)
		}
	case "seeded":
		if m.Randomness.Note != SeededNote {
			bad("seeded randomness must carry the note %q", SeededNote)
		}
	default:
		bad("randomness source %q, want secure or seeded", m.Randomness.Source)
	}
	cost := func(what string, p *float64) {
		if p != nil && !(*p >= 0 && !math.IsInf(*p, 1)) {
			bad("%s is %v, want finite and non-negative", what, *p)
		}
	}
	if m.Privacy.Neighbouring == "" {
		bad("no neighbouring relation")
	}
	switch m.Privacy.Relation {
	case "", "add-remove", "replace-one":
	default:
		bad("relation %q, want add-remove or replace-one", m.Privacy.Relation)
	}
	if u := m.Privacy.Unit; u != nil && (u.MaxRows < 1 || u.Column == "" && u.MaxRows != 1) {
		bad("privacy unit %+v: max_rows must be at least 1, and 1 without a column", *u)
	}
	for i, c := range m.Privacy.Charges {
		if c.Rho == nil && c.Epsilon == nil {
			bad("charge %d (%q) has neither rho nor epsilon", i+1, c.Label)
		}
		cost(fmt.Sprintf("charge %q rho", c.Label), c.Rho)
		cost(fmt.Sprintf("charge %q epsilon", c.Label), c.Epsilon)
		cost(fmt.Sprintf("charge %q delta", c.Label), c.Delta)
	}
	cost("total rho", m.Privacy.Total.Rho)
	cost("total epsilon", &m.Privacy.Total.Epsilon)
	cost("total delta", &m.Privacy.Total.Delta)
	cost("budget epsilon", &m.Privacy.Budget.Epsilon)
	cost("budget delta", &m.Privacy.Budget.Delta)
	for _, in := range m.Inputs {
		if b, err := hex.DecodeString(in.SHA256); err != nil || len(b) != sha256.Size {
			bad("input %s: sha256 %q is not 64 hex digits", in.Path, in.SHA256)
		}
	}
	if m.Output.Rows < 0 {
		bad("negative row count %d", m.Output.Rows)
	}
	if len(errs) > 0 {
		return fmt.Errorf("manifest: %w", errors.Join(errs...))
	}
	return nil
}

// JSON validates the manifest and returns its stable JSON form (indented,
// with a final newline). Nil slices are written as empty lists.
func (m *Manifest) JSON() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	c := *m
	if c.Privacy.Charges == nil {
		c.Privacy.Charges = []Charge{}
	}
	if c.Inputs == nil {
		c.Inputs = []InputFile{}
	}
	if c.Output.Files == nil {
		c.Output.Files = []string{}
	}
	if c.Warnings == nil {
		c.Warnings = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ParseManifest reads a manifest (manifest.json or the Parquet metadata
// value), rejecting unknown fields and invalid content.
func ParseManifest(data []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if dec.More() {
		return nil, errors.New("manifest: trailing data after the JSON object")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}
