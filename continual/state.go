package continual

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpsynth/synth/internal/atomicfile"
)

// The state folder of a continual release:
//
//	DIR/state.json              public: the plan and the committed periods
//	DIR/nodes/L<l>-<j>.i64      public: the noisy values of released nodes
//	DIR/private/carry-<t>.i64   PRIVATE: exact partial sums of the open nodes
//
// state.json is the commit point: a period is committed when state.json
// names it, written last by an atomic rename. Everything it names was
// written (and fsynced) before; files it does not name are leftovers of an
// interrupted add and are ignored, then replaced or removed.
//
// The carry is private: it holds, for each level whose node is not
// complete, the exact counts of the node's periods added so far, so that
// an add reads only its own period's rows. It is as sensitive as the data
// (mode 0600 in a 0700 folder); the public part of the state (the plan and
// the noisy nodes) is what a release would publish anyway.

// State is state.json.
type State struct {
	Plan    *Plan    `json:"plan"`
	Periods []Period `json:"periods"`
	// Carry names the private carry file after the last committed period
	// ("" before the first).
	Carry string `json:"carry,omitempty"`
}

// Period is one committed period.
type Period struct {
	Label     string `json:"label"`
	Index     int    `json:"index"` // 0-based
	Committed string `json:"committed"`
	// Nodes are the nodes released when the period was added.
	Nodes []Node `json:"nodes"`
}

const (
	stateFile  = "state.json"
	nodesDir   = "nodes"
	privateDir = "private"
)

// ErrNoState reports a folder without a continual state.
var ErrNoState = errors.New("no continual state (run synth continual init)")

// Create writes a new state for plan into dir, which must not hold one.
func Create(dir string, plan *Plan) error {
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err == nil {
		return fmt.Errorf("continual: %s already holds a state; use another folder", dir)
	}
	for _, d := range []struct {
		path string
		mode fs.FileMode
	}{{dir, 0o755}, {filepath.Join(dir, nodesDir), 0o755}, {filepath.Join(dir, privateDir), 0o700}} {
		if err := os.MkdirAll(d.path, d.mode); err != nil {
			return err
		}
	}
	return writeState(dir, &State{Plan: plan})
}

// Load reads dir's state.
func Load(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("continual: %s: %w", dir, ErrNoState)
	}
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("continual: %s: %w", filepath.Join(dir, stateFile), err)
	}
	if s.Plan == nil || s.Plan.Horizon < 1 || s.Plan.Levels != Levels(s.Plan.Horizon) || len(s.Plan.Sets) != len(s.Plan.Cells) {
		return nil, fmt.Errorf("continual: %s: not a valid state", filepath.Join(dir, stateFile))
	}
	return &s, nil
}

// Find returns the committed period of that label.
func (s *State) Find(label string) (Period, bool) {
	for _, p := range s.Periods {
		if p.Label == label {
			return p, true
		}
	}
	return Period{}, false
}

func writeState(dir string, s *State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, stateFile), append(b, '\n'), 0o644)
}

func nodePath(dir string, n Node) string {
	return filepath.Join(dir, nodesDir, fmt.Sprintf("L%d-%d.i64", n.Level, n.Index))
}

func carryPath(dir, name string) string { return filepath.Join(dir, privateDir, name) }

// readInts reads a file of little-endian int64s of the given length.
func readInts(path string, n int) ([]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 8*n {
		return nil, fmt.Errorf("continual: %s: %d bytes, want %d", path, len(b), 8*n)
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out, nil
}

func intsBytes(v []int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

// writeAtomic writes data to path atomically (internal/atomicfile).
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	return atomicfile.WriteFile(path, data, mode)
}

// cleanup removes leftovers of interrupted adds: temporary files and
// carries the state does not name.
func cleanup(dir string, s *State) {
	for _, sub := range []string{dir, filepath.Join(dir, nodesDir), filepath.Join(dir, privateDir)} {
		ents, _ := os.ReadDir(sub)
		for _, e := range ents {
			name := e.Name()
			stale := strings.Contains(name, ".tmp-")
			if sub == filepath.Join(dir, privateDir) && strings.HasPrefix(name, "carry-") && name != s.Carry {
				stale = true
			}
			if stale {
				os.Remove(filepath.Join(sub, name))
			}
		}
	}
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }
