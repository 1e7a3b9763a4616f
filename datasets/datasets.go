package datasets

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed adult adult-gem adult-reduced affairs arrests beps ces11 collegedistance cps1988 cpssw8 doctorvisits fertility gss7402 gssvocab healthins hmda mplsstops nltcs psid1982 resumenames slid smokeban star titanic wvs
var files embed.FS

// Dataset names a shipped dataset and its files inside FS.
type Dataset struct {
	Name   string // e.g. "adult-reduced"
	Data   string // path of the CSV inside FS
	Domain string // path of the domain JSON inside FS
	Rows   int    // number of records (documented in the README)
}

// All lists the shipped datasets.
var All = []Dataset{
	{"adult", "adult/adult.csv", "adult/adult-domain.json", 48842},
	{"adult-gem", "adult-gem/adult.csv", "adult-gem/adult-domain.json", 48842},
	{"adult-reduced", "adult-reduced/adult-reduced.csv", "adult-reduced/adult-reduced-domain.json", 48842},
	{"affairs", "affairs/affairs.csv", "affairs/affairs-domain.json", 601},
	{"arrests", "arrests/arrests.csv", "arrests/arrests-domain.json", 5226},
	{"beps", "beps/beps.csv", "beps/beps-domain.json", 1525},
	{"ces11", "ces11/ces11.csv", "ces11/ces11-domain.json", 2231},
	{"collegedistance", "collegedistance/collegedistance.csv", "collegedistance/collegedistance-domain.json", 4739},
	{"cps1988", "cps1988/cps1988.csv", "cps1988/cps1988-domain.json", 28155},
	{"cpssw8", "cpssw8/cpssw8.csv", "cpssw8/cpssw8-domain.json", 61395},
	{"doctorvisits", "doctorvisits/doctorvisits.csv", "doctorvisits/doctorvisits-domain.json", 5190},
	{"fertility", "fertility/fertility.csv.gz", "fertility/fertility-domain.json", 254654},
	{"gss7402", "gss7402/gss7402.csv", "gss7402/gss7402-domain.json", 9120},
	{"gssvocab", "gssvocab/gssvocab.csv", "gssvocab/gssvocab-domain.json", 28867},
	{"healthins", "healthins/healthins.csv", "healthins/healthins-domain.json", 8802},
	{"hmda", "hmda/hmda.csv", "hmda/hmda-domain.json", 2380},
	{"mplsstops", "mplsstops/mplsstops.csv.gz", "mplsstops/mplsstops-domain.json", 51920},
	{"nltcs", "nltcs/nltcs.csv", "nltcs/nltcs-domain.json", 21574},
	{"psid1982", "psid1982/psid1982.csv", "psid1982/psid1982-domain.json", 595},
	{"resumenames", "resumenames/resumenames.csv", "resumenames/resumenames-domain.json", 4870},
	{"slid", "slid/slid.csv", "slid/slid-domain.json", 7425},
	{"smokeban", "smokeban/smokeban.csv", "smokeban/smokeban-domain.json", 10000},
	{"star", "star/star.csv", "star/star-domain.json", 11598},
	{"titanic", "titanic/titanic.csv", "titanic/titanic-domain.json", 1304},
	{"wvs", "wvs/wvs.csv", "wvs/wvs-domain.json", 5381},
}

// FS holds the dataset files.
func FS() fs.FS { return files }

// Lookup returns the dataset called name.
func Lookup(name string) (Dataset, error) {
	for _, d := range All {
		if d.Name == name {
			return d, nil
		}
	}
	return Dataset{}, fmt.Errorf("no shipped dataset %q", name)
}

// ReadFile returns the contents of a file inside FS.
func ReadFile(path string) ([]byte, error) { return files.ReadFile(path) }

// Extract writes the dataset's CSV and domain into dir (created if needed)
// and returns their paths.
func (d Dataset) Extract(dir string) (data, domain string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	for _, p := range []string{d.Data, d.Domain} {
		b, err := files.ReadFile(p)
		if err != nil {
			return "", "", err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644); err != nil {
			return "", "", err
		}
	}
	return filepath.Join(dir, filepath.Base(d.Data)), filepath.Join(dir, filepath.Base(d.Domain)), nil
}
