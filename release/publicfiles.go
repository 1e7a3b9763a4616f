package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// PublicFiles reads every public file of the release in dir — the file
// names, manifest.json and its charge labels, the key-value metadata of
// the synthetic Parquet file and, when the release wrote a public report,
// report.json and report.html — with the fields that docs/PRIVACY.md
// ("Public files, field by field") documents as noisy outputs or
// timestamps masked. addRemove says the release was made under add/remove
// neighbours, where n is private and what follows its noisy estimate n̂ is
// masked too.
//
// It is what the whole-pipeline neighbour tests compare: releases of
// neighbouring datasets with the same seed must give identical maps, or a
// function of the private data escaped without noise. The synthetic rows and
// the internal reports are not public files in this sense (the rows are
// differentially private outputs; the internal reports are not DP).
func PublicFiles(dir string, addRemove bool) (map[string]string, error) {
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	out["file names"] = strings.Join(names, " ")
	man, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	if out["manifest.json"], err = maskManifest(man, addRemove); err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(man, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	var labels []string
	for _, c := range m.Privacy.Charges {
		labels = append(labels, c.Label)
	}
	out["charge labels"] = strings.Join(labels, "\n")
	if err := publicMetadata(out, dir, m.Output.Files, addRemove); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, ReportJSONFile)); err == nil && isPublicReport(dir) {
		for _, name := range []string{ReportJSONFile, ReportHTMLFile} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			s := string(b)
			if addRemove {
				// Under add/remove the row count and the bounds (noise scales
				// as fractions of the private n's estimate) are noisy outputs.
				s = numberRE.ReplaceAllString(s, "#")
			}
			out["public "+name] = s
		}
	}
	return out, nil
}

// isPublicReport reports whether dir's report.json is the public report.
func isPublicReport(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ReportJSONFile))
	if err != nil {
		return false
	}
	var v struct {
		Schema string `json:"schema"`
	}
	return json.Unmarshal(b, &v) == nil && strings.Contains(v.Schema, "public-report")
}

// publicMetadata adds the key-value metadata of the release's Parquet file
// (if it wrote one) to out, the manifest in it masked.
func publicMetadata(out map[string]string, dir string, files []string, addRemove bool) error {
	for _, name := range files {
		if !strings.HasSuffix(name, ".parquet") {
			continue
		}
		pq, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		f, err := parquet.OpenFile(bytes.NewReader(pq), int64(len(pq)))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, kv := range f.Metadata().KeyValueMetadata {
			v := kv.Value
			if kv.Key == ManifestKey {
				if v, err = maskManifest([]byte(v), addRemove); err != nil {
					return err
				}
			}
			out["parquet metadata "+kv.Key] = v
		}
	}
	return nil
}

var numberRE = regexp.MustCompile(`[0-9][0-9.eE+\-]*`)

// noisyWarning matches the warnings whose numbers follow the noisy n̂
// under add/remove: a solver's capped iteration count, a paper formula's
// condition on n, the δ ≥ 1/n check against n̂, the warning of a
// record count the budget does not resolve, and the staged plan's warning
// that its noisy count dropped the top order.
var noisyWarning = regexp.MustCompile(`capped [0-9]|: n = [0-9]|is at least 1/n \(n = |the noisy record count is [0-9]|the noisy record count \(-?[0-9]`)

// maskManifest removes the timestamps and the noisy outputs: the factored
// model's cliques and, under add/remove, the row count, the seed solvers'
// iteration counts and the numbers of the warnings that follow n̂.
func maskManifest(b []byte, addRemove bool) (string, error) {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("manifest: %w", err)
	}
	delete(v, "started")
	delete(v, "finished")
	// The factored model's cliques follow the sets the adaptive rounds
	// selected: a noisy output.
	if sv, ok := v["solver"].(map[string]any); ok {
		if _, ok := sv["cliques"]; ok {
			sv["cliques"] = "noisy"
		}
	}
	if addRemove {
		if o, ok := v["output"].(map[string]any); ok {
			o["rows"] = "noisy"
		}
		if sv, ok := v["solver"].(map[string]any); ok {
			sv["iterations"] = "noisy"
		}
		if ws, ok := v["warnings"].([]any); ok {
			for i, w := range ws {
				if s := fmt.Sprint(w); noisyWarning.MatchString(s) {
					ws[i] = numberRE.ReplaceAllString(s, "#")
				}
			}
		}
	}
	s, err := json.MarshalIndent(v, "", " ")
	return string(s), err
}
