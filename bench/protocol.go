package bench

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// Protocol is one benchmark setup: a dataset, a workload and the grid of
// budgets and seeds it is run on.
type Protocol struct {
	// Name selects the protocol (--protocols) and names its plots.
	Name string
	// Dataset is the shipped dataset (package datasets).
	Dataset string
	// Attributes, when not nil, restricts the dataset to these attributes
	// (in the dataset's domain order), e.g. so that the universe fits an
	// explicit vector; the harness writes the chosen columns to a CSV file
	// and a shorthand domain.
	Attributes []string
	// Marginals is the marginal order k; Sample, when positive, draws that
	// many distinct k-way marginals with WorkloadSeed instead of taking all.
	Marginals    int
	Sample       int
	WorkloadSeed uint64
	// Epsilons, Delta and Seeds are the default grid.
	Epsilons []float64
	Delta    float64
	Seeds    int
	// Note is stated under the protocol's heading in the summary.
	Note string
	// References are figures of other methods on the same protocol, shown
	// next to synth's in the summary and the plots; ReferenceNote says how
	// they were obtained (a footnote under the summary's table).
	References    []Reference
	ReferenceNote string
	// Versus, when set, names the reference method (its Method) that the
	// summary compares synth with point by point: at or below it on max
	// error and on mean marginal L1 at each ε, its time over synth's, and
	// synth's peak memory.
	Versus string
	// Events, when positive, replaces the shipped dataset by the generated
	// event table (Dataset names it "events") of that many users (WriteEvents, seed EventsSeed): many rows per
	// person, released with the person as the privacy unit.
	Events int
	// UnitRows, when positive, releases with --privacy-unit EventsUnit
	// --max-rows-per-unit UnitRows (add/remove neighbours only).
	UnitRows int
	// Wide, when positive, replaces the shipped dataset by the generated
	// wide table (WriteWide, seed WideSeed) of that many columns and
	// WideRows rows (Dataset names it "wide").
	Wide, WideRows int
	// Rows, when positive, releases a random sample of that many of the
	// dataset's rows instead of all of them, drawn without replacement
	// with RowsSeed (a benchmark's public sample, not privacy randomness):
	// the protocol NAME@ROWS or NAME@ROWS:SEED (LookupProtocol), a table of
	// another size that no rule was tuned on. It has no references.
	Rows     int
	RowsSeed uint64
}

// EventsSeed fixes the event protocols' generated table.
const EventsSeed = 2026

// eventsUsers is the number of users of the event protocols' table.
const eventsUsers = 3000

// eventsNote is stated under every event protocol's heading.
const eventsNote = "The generated event table (bench/events.go, seed 2026): 3,000 users, 208,260 rows, a median user of 28 " +
	"rows and a heaviest of 2,612. Errors are against every row of the table (before bounding): a small K drops " +
	"the heavy users' rows (a bias), a large K multiplies the noise."

// Reference is one method's published or measured figures on a protocol.
type Reference struct {
	Method string
	// Wall is the wall time as reported (e.g. "56–112 s").
	Wall   string
	Points []RefPoint
}

// RefPoint is a reference method's figures at one ε: its max absolute
// error over the workload's queries and, where the reference reports them
// (zero: not reported), its mean absolute error, its mean per-marginal L1
// error (as the mean_marginal_l1 column: Σ_cells |true − synthetic| as
// fractions of n, averaged over the workload's marginals) and its wall time
// in seconds.
type RefPoint struct {
	Epsilon, Max, Mean float64
	L1, Seconds        float64
	// Runs is the number of runs averaged, when measured here (0: a
	// published figure).
	Runs int
	// MaxSD and L1SD are the runs' standard deviations of max error and
	// mean marginal L1 (NaN with fewer than two runs; zero for a published
	// figure, whose Runs is 0).
	MaxSD, L1SD float64
}

// grid5 is the ε grid of the GEM/PEP small-ADULT protocol.
var grid5 = []float64{0.1, 0.2, 0.5, 1, 2}

// adultReducedRefs are the methods users know, run on adult-reduced, all 35
// 3-way marginals, δ = 1e-9, mean of 3 seeds, absolute error of the released
// rows or distribution over all 14,955 cells, on a 2-core machine; AIM and
// MWEM use add/remove neighbours.
var adultReducedRefs = []Reference{
	{Method: "AIM (private-pgm)", Wall: "56–112 s", Points: []RefPoint{{Epsilon: 0.1, Max: 0.0256, Mean: 5.1e-4}, {Epsilon: 0.5, Max: 0.0083, Mean: 2.2e-4}, {Epsilon: 1, Max: 0.0038, Mean: 1.4e-4}}},
	{Method: "PEP", Wall: "~25 s", Points: []RefPoint{{Epsilon: 0.1, Max: 0.0386, Mean: 1.1e-3}, {Epsilon: 0.5, Max: 0.0103, Mean: 4.4e-4}, {Epsilon: 1, Max: 0.0063, Mean: 3.4e-4}}},
	{Method: "MWEM+PGM", Wall: "~18 s", Points: []RefPoint{{Epsilon: 0.1, Max: 0.0796, Mean: 9.0e-4}, {Epsilon: 0.5, Max: 0.0124, Mean: 2.8e-4}, {Epsilon: 1, Max: 0.0111, Mean: 2.0e-4}}},
	{Method: "MWEM", Wall: "~7 s", Points: []RefPoint{{Epsilon: 0.1, Max: 0.0755, Mean: 1.7e-3}, {Epsilon: 0.5, Max: 0.0266, Mean: 1.2e-3}, {Epsilon: 1, Max: 0.0227, Mean: 1.1e-3}}},
}

// adultReducedRefNote says how adultReducedRefs were obtained.
const adultReducedRefNote = "Reference figures, not run by this harness: the methods users know, on the same protocol (all 3-way " +
	"marginals, δ = 1e-9, mean of 3 seeds, absolute error of the released rows or distribution over all " +
	"marginal cells, on a 2-core machine; AIM and MWEM use add/remove neighbours)."

// adultRefs are private-pgm's AIM and MST on the full 14-attribute ADULT,
// all 364 3-way marginals, δ = 1e-9: private-pgm's own code and default
// settings, one seed, on a 2-core machine like the project's; max absolute
// error over all marginal cells, mean per-marginal L1 and wall time.
var adultRefs = []Reference{
	{Method: "AIM (private-pgm)", Wall: "134–263 s", Points: []RefPoint{
		{Epsilon: 0.1, Max: 0.0663, L1: 0.404, Seconds: 134},
		{Epsilon: 0.5, Max: 0.0199, L1: 0.211, Seconds: 199},
		{Epsilon: 1, Max: 0.0206, L1: 0.184, Seconds: 263}}},
	{Method: "MST (private-pgm)", Wall: "~38 s", Points: []RefPoint{
		{Epsilon: 0.1, Max: 0.0866, L1: 0.507},
		{Epsilon: 0.5, Max: 0.0293, L1: 0.263},
		{Epsilon: 1, Max: 0.0282, L1: 0.226}}},
}

// adultRefNote says how adultRefs were obtained.
const adultRefNote = "Reference figures, not run by this harness: private-pgm's AIM and MST with their own code and " +
	"default settings on the same protocol (all 364 3-way marginals, δ = 1e-9), one seed, on a 2-core machine " +
	"like this one; max absolute error over all marginal cells and mean per-marginal L1 of the released data, " +
	"and wall time (private-pgm measures with add/remove neighbours; their mean error was not recorded)."

// protocols are the built-in protocols, in the order the summary lists them:
// the tables' own, then the 2-way protocols of Suite2WayProtocols.
var protocols = withTwoWay([]*Protocol{
	{
		Name: "adult-reduced", Dataset: "adult-reduced", Marginals: 3,
		Epsilons: grid5, Delta: 1e-9, Seeds: 5,
		Note:          "The GEM/PEP small-ADULT protocol.",
		References:    adultReducedRefs,
		ReferenceNote: adultReducedRefNote,
	},
	{
		Name: "titanic", Dataset: "titanic", Marginals: 3,
		Epsilons: grid5, Delta: 1e-9, Seeds: 5,
		Note: "All 9 attributes: the universe (8.9e7 cells, 713 MB per float64 vector) is too large for a dense " +
			"vector to pay, so the release runs on the factored (junction-tree) model (--model auto). " +
			"titanic-no-age is the earlier explicit protocol without Age.",
	},
	{
		Name: "adult-gem", Dataset: "adult-gem", Marginals: 3, Sample: 64, WorkloadSeed: 0,
		Attributes: []string{"workclass", "marital-status", "relationship", "race", "sex", "income>50K", "age", "capital-loss", "hours-per-week"},
		Epsilons:   grid5, Delta: 1e-9, Seeds: 5,
		Note: "The data is restricted to these 9 attributes (the full 13-attribute universe has 5.9e11 cells) so " +
			"that the figures stay comparable with the earlier explicit runs; the 64 marginals are drawn from their " +
			"84 3-way marginals. The universe (4.5e6 cells) is within the explicit model's limit for --model auto " +
			"(2^23 cells), so project runs it on the explicit model.",
	},
	{
		Name: "adult", Dataset: "adult", Marginals: 3,
		Epsilons: []float64{0.1, 0.5, 1}, Delta: 1e-9, Seeds: 3,
		Note: "The full 14-attribute ADULT: its universe (6.4e17 cells) only fits the factored (junction-tree) " +
			"model, which the release picks (--model auto); solvers without a factored form are refused.",
		References:    adultRefs,
		ReferenceNote: adultRefNote,
		Versus:        "AIM (private-pgm)",
	},
	{
		Name: "titanic-no-age", Dataset: "titanic", Marginals: 3,
		Attributes: []string{"Survived", "Pclass", "Sex", "SibSp", "Parch", "Fare", "Embarked", "Cabin"},
		Epsilons:   grid5, Delta: 1e-9, Seeds: 5,
		Note: "Age (91 values) is dropped so that the universe stays explicit (979,776 cells): the protocol " +
			"called titanic before the factored model, kept so that earlier figures stay reproducible.",
	},
	{
		Name: "nltcs", Dataset: "nltcs", Marginals: 3,
		Epsilons: suiteEpsilons, Delta: 1e-9, Seeds: 3,
		Note: "National Long Term Care Survey: 16 binary disability measures, 21,574 people; all 560 3-way marginals.",
	},
	rProtocol("cps1988", "March 1988 Current Population Survey (R package AER): 28,155 men, wage, education, "+
		"experience, ethnicity, SMSA, region, part-time; all 35 3-way marginals."),
	rProtocol("fertility", "1980 US Census (R package AER): 254,654 married women aged 21–35 with two or more "+
		"children, 8 attributes; all 56 3-way marginals."),
	rProtocol("healthins", "1996 Medical Expenditure Panel Survey (R package AER): 8,802 people, 11 attributes; "+
		"all 165 3-way marginals."),
	rProtocol("slid", "1994 Survey of Labour and Income Dynamics, Ontario (R package carData): 7,425 people, "+
		"5 attributes with missing values as their own codes; all 10 3-way marginals."),
	rProtocol("smokeban", "National Health Interview Survey 1991 and 1993 (R package AER): 10,000 indoor workers, "+
		"smoker, workplace ban, age, education, ethnicity, gender; all 35 3-way marginals. Held out: added after "+
		"the suite's rules were settled."),
	rProtocol("gssvocab", "General Social Survey 1978–2016 (R package carData): 28,867 people, year, gender, "+
		"birthplace, age and education (grouped and in years), vocabulary score, missing values as their own "+
		"codes; all 56 3-way marginals. Held out: added after the suite's rules were settled."),
	rProtocol("arrests", "Marijuana possession arrests in Toronto, 1997–2002 (R package carData): 5,226 arrestees, "+
		"release with a summons, colour, year, age, sex, employment, citizenship, police database checks; all 56 "+
		"3-way marginals. Held out: added after the suite's rules were settled."),
	rProtocol("doctorvisits", "1977–78 Australian Health Survey (R package AER): 5,190 people, doctor visits, "+
		"gender, age, income, illnesses, days of reduced activity, health score, five insurance and chronic-"+
		"condition flags; all 220 3-way marginals. Held out: added after the suite's rules were settled."),
	rProtocol("hmda", "Boston HMDA mortgage applications (R package AER): 2,380 applications, denial, payment, "+
		"housing-expense and loan-to-value ratios, credit histories, industry unemployment rate and eight flags; "+
		"all 364 3-way marginals. Held out: added after the suite's rules were settled."),
	rProtocol("wvs", "World Values Surveys 1995–97 (R package carData): 5,381 people in four countries, views on "+
		"poverty policy, religion, degree, country, age and gender; all 20 3-way marginals. Held out: added "+
		"after the suite's rules were settled."),
	rProtocol("collegedistance", "High School and Beyond survey, 1980 seniors (R package AER): 4,739 students, gender, "+
		"ethnicity, test score, parents' college, home ownership, urban, county unemployment and manufacturing wage, "+
		"distance to and tuition of a 4-year college, years of education, income, region; all 364 3-way marginals. "+
		"Held out: added after the suite's rules were settled."),
	rProtocol("cpssw8", "Current Population Survey (R package AER, Stock and Watson's CPSSW8): 61,395 full-time "+
		"workers aged 21–64, hourly earnings, gender, age, region, years of education; all 10 3-way marginals. Held "+
		"out: added after the suite's rules were settled."),
	rProtocol("beps", "British Election Panel Study 1997–2001 (R package carData): 1,525 voters, party choice, age, "+
		"assessments of national and household economic conditions and of the three party leaders, attitude to "+
		"European integration, political knowledge, gender; all 120 3-way marginals. Held out: added after the "+
		"suite's rules were settled."),
	rProtocol("mplsstops", "Minneapolis Police Department stops in 2017 (R package carData): 51,920 stops, month, "+
		"kind of stop, how it was recorded, citation, person and vehicle searches, race as assessed before and "+
		"after the stop, gender, precinct, missing values as their own codes; all 120 3-way marginals. Held "+
		"out: added after the suite's rules were settled."),
	rProtocol("resumenames", "Bertrand and Mullainathan's résumé experiment, 2001 (R package AER): 4,870 fictitious "+
		"résumés, the applicant's gender and ethnicity as the name suggests, résumé quality, call-back, city and "+
		"nine yes/no features of the résumé; all 364 3-way marginals. Held out: added after the suite's rules "+
		"were settled."),
	rProtocol("star", "Tennessee's Project STAR class-size experiment, 1985–1989 (R package AER): 11,598 "+
		"students, their ethnicity, class type in kindergarten and grades 1–3 (absent in a year not spent in "+
		"the experiment) and their kindergarten's school type, teacher's degree and career-ladder level; all 56 "+
		"3-way marginals. Held out: added after the suite's rules were settled."),
	rProtocol("affairs", "Fair's survey of extramarital affairs, Psychology Today 1969 (R package AER): 601 "+
		"respondents, how often in the past year, age, years married, children, religiousness, education, "+
		"occupation and self-rated marriage, all coded as documented; all 56 3-way marginals. Held out: added "+
		"after the suite's rules were settled."),
	rProtocol("ces11", "2011 Canadian Election Study (R package carData): 2,231 respondents, province, gender, whether "+
		"abortion should be banned, importance of religion, education, urban or rural residence; all 20 3-way "+
		"marginals. Held out: added after the suite's rules were settled."),
	rProtocol("psid1982", "Panel Study of Income Dynamics, 1982 cross-section (R package AER, Cornwell and Rupert's "+
		"PSID1982): 595 workers, years of experience, weeks worked, white- or blue-collar, manufacturing, South, "+
		"SMSA, married, union contract, years of education, ethnicity; all 120 3-way marginals. Held out: added "+
		"after the suite's rules were settled."),
	rProtocol("gss7402", "US General Social Survey 1974–2002, every fourth year (R package AER, Winkelmann and Boes's "+
		"GSS7402): 9,120 women, number of children, age, education, survey year, age at first birth (missing for "+
		"the childless, as its own code), ethnicity, city and low income at 16, immigrant; all 84 3-way marginals. "+
		"Held out: added after the suite's rules were settled."),
	eventsProtocol(1), eventsProtocol(4), eventsProtocol(16), eventsProtocol(64),
	wideProtocol(16, 2, 100_000), wideProtocol(16, 3, 100_000), wideProtocol(32, 2, 100_000), wideProtocol(32, 3, 200_000),
	wideProtocol(64, 2, 200_000), wideProtocol(64, 3, 200_000), wideProtocol(128, 2, 200_000), wideProtocol(200, 2, 200_000),
	{
		Name: "events-rows", Dataset: "events", Events: eventsUsers, Marginals: 3,
		Epsilons: []float64{0.1, 0.5, 1}, Delta: 1e-9, Seeds: 3,
		Note: eventsNote + " This protocol releases the same table with every row its own unit: it protects one " +
			"rating, not one user (a user with r rows is protected at r·ε), and is here only as the error floor " +
			"that bounding is paid against.",
	},
	{
		Name: "tiny", Dataset: "nltcs", Marginals: 2,
		Epsilons: []float64{0.5, 1}, Delta: 1e-9, Seeds: 1,
		Note: "The CI grid: small and fast, for checking the harness and the solvers end to end.",
	},
})

// suiteEpsilons is the accuracy suite's ε grid.
var suiteEpsilons = []float64{0.1, 0.5, 1}

// SuiteProtocols are the accuracy suite (--protocols suite): real tables of
// every size from the DP literature and from R packages, and two generated
// wide tables, each with all its 3-way marginals (2-way for wide32), at ε in
// {0.1, 0.5, 1}, δ = 1e-9, 3 seeds. Rules of the solvers are judged on the
// whole suite, not on one of its tables. smokeban and gssvocab joined after
// the rules were settled, as held-out tables, and arrests and doctorvisits
// later, the same way, then hmda and wvs, then collegedistance and cpssw8, then beps, then
// mplsstops, then resumenames, then star, then affairs, then ces11, psid1982 and gss7402.
var SuiteProtocols = []string{"adult", "titanic", "nltcs", "adult-reduced", "cps1988", "fertility", "healthins", "slid",
	"smokeban", "gssvocab", "arrests", "doctorvisits", "hmda", "wvs", "collegedistance", "cpssw8", "beps", "mplsstops",
	"resumenames", "star", "affairs", "ces11", "psid1982", "gss7402", "wide16-3way", "wide32-2way"}

// Suite2WayProtocols are the accuracy suite's real tables (all but full
// ADULT, whose AIM runs take hours) with all their 2-way marginals
// (--protocols suite-2way): the suite's rules checked on a second workload
// that none of them was chosen on, against AIM and MST on the same
// workload. Their names are the tables' protocols with "-2way" appended.
var Suite2WayProtocols = twoWayNames(SuiteProtocols)

// twoWayNames names the 2-way protocols of the suite's real tables but full
// ADULT: each name with "-2way" appended, the generated wide tables left out.
func twoWayNames(suite []string) []string {
	var names []string
	for _, b := range suite {
		if b != "adult" && !strings.HasPrefix(b, "wide") {
			names = append(names, b+"-2way")
		}
	}
	return names
}

// withTwoWay appends to ps the 2-way protocols of Suite2WayProtocols: each
// its table's 3-way protocol in ps with all 2-way marginals on the suite's
// grid.
func withTwoWay(ps []*Protocol) []*Protocol {
	for _, name := range Suite2WayProtocols {
		i := slices.IndexFunc(ps, func(p *Protocol) bool { return p.Name == strings.TrimSuffix(name, "-2way") })
		if i < 0 || ps[i].Marginals != 3 {
			panic("bench: no 3-way protocol for " + name) // a programmer's mistake in the list
		}
		p := *ps[i]
		p.Name, p.Marginals = name, 2
		p.Epsilons, p.Seeds = suiteEpsilons, 3
		p.References, p.ReferenceNote, p.Versus = nil, "", ""
		p.Note = fmt.Sprintf("%s's table with all its 2-way marginals: the accuracy suite's rules checked on a "+
			"second workload (docs/BENCHMARKS.md, \"The suite's tables on their 2-way marginals\").", ps[i].Name)
		ps = append(ps, &p)
	}
	return ps
}

// rProtocol is a table exported from an R package (package datasets), all
// 3-way marginals on the suite's grid.
func rProtocol(name, note string) *Protocol {
	return &Protocol{
		Name: name, Dataset: name, Marginals: 3,
		Epsilons: suiteEpsilons, Delta: 1e-9, Seeds: 3,
		Note: note + " The domain is written from the package's documentation (datasets/" + name + "/README.md).",
	}
}

// wideProtocol is the generated wide table of cols columns and rows rows
// with all k-way marginals, at ε = 1: a speed and memory benchmark.
func wideProtocol(cols, k, rows int) *Protocol {
	return &Protocol{
		Name: fmt.Sprintf("wide%d-%dway", cols, k), Dataset: "wide", Wide: cols, WideRows: rows, Marginals: k,
		Epsilons: []float64{1}, Delta: 1e-9, Seeds: 3,
		Note: fmt.Sprintf("The generated wide table (bench/wide.go, seed %d): %d columns of 2–24 values, a random Bayesian "+
			"network of at most two parents per column, %d rows; all %d-way marginals.", WideSeed, cols, rows, k),
	}
}

// eventsProtocol is the event table released with each user as the privacy
// unit, at most k rows per user.
func eventsProtocol(k int) *Protocol {
	return &Protocol{
		Name: fmt.Sprintf("events-k%d", k), Dataset: "events", Events: eventsUsers, UnitRows: k, Marginals: 3,
		Epsilons: []float64{0.1, 0.5, 1}, Delta: 1e-9, Seeds: 3,
		Note: eventsNote + fmt.Sprintf(" Each user is the privacy unit, with at most %d rows kept.", k),
	}
}

// DefaultProtocols are run when Config.Protocols is empty: the full
// protocols (titanic-no-age reproduces earlier figures; tiny is for CI).
var DefaultProtocols = []string{"adult-reduced", "titanic", "adult-gem", "adult"}

// Protocols returns the built-in protocols. The slice and its protocols
// must not be modified.
func Protocols() []*Protocol { return protocols }

// ProtocolNames lists the built-in protocols' names.
func ProtocolNames() []string {
	names := make([]string, len(protocols))
	for i, p := range protocols {
		names[i] = p.Name
	}
	return names
}

// LookupProtocol returns the built-in protocol called name, or, for
// NAME@ROWS or NAME@ROWS:SEED, protocol NAME on a random sample of ROWS of
// its dataset's rows (Protocol.Rows; SEED 1 when not given) without its
// references.
func LookupProtocol(name string) (*Protocol, error) {
	if base, spec, ok := strings.Cut(name, "@"); ok {
		return sampledProtocol(base, spec)
	}
	for _, p := range protocols {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, &ConfigError{Msg: fmt.Sprintf("unknown protocol %q (want one of %s, or NAME@ROWS for a sample of its rows)", name, strings.Join(ProtocolNames(), ", "))}
}

// sampledProtocol returns protocol base on a sample of the rows that spec
// ("ROWS" or "ROWS:SEED") asks for.
func sampledProtocol(base, spec string) (*Protocol, error) {
	p, err := LookupProtocol(base)
	if err != nil {
		return nil, err
	}
	if p.Events > 0 || p.Wide > 0 {
		return nil, configErrorf("protocol %s@%s: %s is a generated table; a sample of rows is for the shipped datasets", base, spec, base)
	}
	rowsText, seedText, hasSeed := strings.Cut(spec, ":")
	rows, err := strconv.Atoi(rowsText)
	if err != nil || rows <= 0 {
		return nil, configErrorf("protocol %s@%s: ROWS must be a positive integer (NAME@ROWS or NAME@ROWS:SEED)", base, spec)
	}
	ds, err := datasets.Lookup(p.Dataset)
	if err != nil {
		return nil, err
	}
	if rows > ds.Rows {
		return nil, configErrorf("protocol %s@%s: dataset %s has %d rows", base, spec, p.Dataset, ds.Rows)
	}
	seed := uint64(1)
	if hasSeed {
		if seed, err = strconv.ParseUint(seedText, 10, 64); err != nil {
			return nil, configErrorf("protocol %s@%s: SEED must be a non-negative integer", base, spec)
		}
	}
	q := *p
	q.Name = fmt.Sprintf("%s@%d", base, rows)
	if seed != 1 {
		q.Name += fmt.Sprintf(":%d", seed)
	}
	q.Rows, q.RowsSeed = rows, seed
	q.References, q.ReferenceNote, q.Versus = nil, "", ""
	q.Note = fmt.Sprintf("%s, on a random sample of %d of its %d rows (seed %d; a benchmark's sample, not private).", base, rows, ds.Rows, seed)
	return &q, nil
}

// WorkloadName is the protocol's workload as the CSV names it, e.g. "3-way"
// or "3-way-sample64-seed0".
func (p *Protocol) WorkloadName() string {
	if p.Sample > 0 {
		return fmt.Sprintf("%d-way-sample%d-seed%d", p.Marginals, p.Sample, p.WorkloadSeed)
	}
	return fmt.Sprintf("%d-way", p.Marginals)
}

// Shape is the public size of a protocol's problem.
type Shape struct {
	Attributes []string
	// K is the number of universe cells, or 0 when it exceeds a uint64;
	// Cells is the exact number either way. Neither says the universe fits
	// a dense vector: the release picks its model (explicit or factored).
	K         uint64
	Cells     *big.Int
	Marginals int // marginal sets in the workload
	M         int // queries
	N         int // records in the dataset
}

// Shape computes the protocol's universe and workload sizes from the
// shipped domain (no data is read).
func (p *Protocol) Shape() (*Shape, error) {
	if p.Events > 0 {
		return p.eventsShape()
	}
	if p.Wide > 0 {
		return p.wideShape()
	}
	ds, err := datasets.Lookup(p.Dataset)
	if err != nil {
		return nil, err
	}
	dom, err := p.domain(ds)
	if err != nil {
		return nil, err
	}
	wl, err := p.workload(dom)
	if err != nil {
		return nil, err
	}
	k, _ := dom.Size() // 0 when it overflows
	n := ds.Rows
	if p.Rows > 0 {
		n = p.Rows
	}
	return &Shape{Attributes: dom.Names(), K: k, Cells: dom.SizeBig(), Marginals: len(wl.Marginals()), M: wl.M(), N: n}, nil
}

// domain returns the protocol's domain: the dataset's, restricted to
// Attributes.
func (p *Protocol) domain(ds datasets.Dataset) (*universe.Domain, error) {
	b, err := datasets.ReadFile(ds.Domain)
	if err != nil {
		return nil, err
	}
	full, err := universe.ParseDomain(b)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", ds.Domain, err)
	}
	if p.Attributes == nil {
		return full, nil
	}
	keep := make(map[string]bool, len(p.Attributes))
	for _, a := range p.Attributes {
		if _, ok := full.Index(a); !ok {
			return nil, fmt.Errorf("bench: protocol %s: dataset %s has no attribute %q", p.Name, p.Dataset, a)
		}
		keep[a] = true
	}
	var attrs []*universe.Attribute
	for _, a := range full.Attrs() {
		if keep[a.Name] {
			e, err := universe.NewEncoded(a.Name, a.Size())
			if err != nil {
				return nil, err
			}
			attrs = append(attrs, e)
		}
	}
	return universe.NewDomain(attrs...)
}

func (p *Protocol) workload(dom *universe.Domain) (*query.Workload, error) {
	if p.Sample > 0 {
		return query.SampleKWay(dom, p.Marginals, p.Sample, p.WorkloadSeed)
	}
	return query.KWay(dom, p.Marginals, nil)
}

// Prepare writes the protocol's data and domain files into dir and returns
// their paths: the shipped files, or, with Attributes, a CSV of the chosen
// columns and a shorthand domain of their sizes; with Rows, the data file
// keeps the sample of its rows (sampleRows).
func (p *Protocol) Prepare(dir string) (data, domain string, err error) {
	if p.Events > 0 {
		return p.prepareEvents(dir)
	}
	if p.Wide > 0 {
		return p.prepareWide(dir)
	}
	data, domain, err = p.prepareDataset(dir)
	if err != nil || p.Rows <= 0 {
		return data, domain, err
	}
	if err := sampleRows(data, p.Rows, p.RowsSeed); err != nil {
		return "", "", fmt.Errorf("bench: protocol %s: %w", p.Name, err)
	}
	return data, domain, nil
}

// sampleRows rewrites the CSV file at path (gzip-compressed when its name
// ends in .gz, as the shipped datasets' larger files are) with its header
// and a sample of n of its records, drawn without replacement with seed and
// kept in file order. It is a benchmark's sample of a public dataset:
// math/rand/v2, not privacy randomness.
func sampleRows(path string, n int, seed uint64) error {
	b, err := readMaybeGzip(path)
	if err != nil {
		return err
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || n > len(recs)-1 {
		return fmt.Errorf("%s: %d records, a sample of %d asked for", path, max(len(recs)-1, 0), n)
	}
	body := recs[1:]
	idx := rand.New(rand.NewPCG(seed, rowsStream)).Perm(len(body))[:n]
	slices.Sort(idx)
	var buf bytes.Buffer
	var out io.Writer = &buf
	var zw *gzip.Writer
	if isGzip(path) {
		zw = gzip.NewWriter(&buf)
		out = zw
	}
	w := csv.NewWriter(out)
	if err := w.Write(recs[0]); err != nil {
		return err
	}
	for _, i := range idx {
		if err := w.Write(body[i]); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func isGzip(path string) bool { return strings.HasSuffix(path, ".gz") }

// readMaybeGzip returns the contents of the file at path, decompressed
// when its name ends in .gz.
func readMaybeGzip(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil || !isGzip(path) {
		return b, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	if b, err = io.ReadAll(zr); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// rowsStream is the second word of sampleRows' PCG seed.
const rowsStream = 0x726f7773 // "rows"

// prepareDataset writes a shipped dataset's files (Prepare).
func (p *Protocol) prepareDataset(dir string) (data, domain string, err error) {
	ds, err := datasets.Lookup(p.Dataset)
	if err != nil {
		return "", "", err
	}
	if p.Attributes == nil {
		return ds.Extract(filepath.Join(dir, p.Name))
	}
	dom, err := p.domain(ds)
	if err != nil {
		return "", "", err
	}
	sub := filepath.Join(dir, p.Name)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return "", "", err
	}
	src, err := datasets.ReadFile(ds.Data)
	if err != nil {
		return "", "", err
	}
	var buf bytes.Buffer
	if err := restrictCSV(&buf, bytes.NewReader(src), ds.Data, dom.Names()); err != nil {
		return "", "", err
	}
	data = filepath.Join(sub, p.Name+".csv")
	if err := os.WriteFile(data, buf.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	domain = filepath.Join(sub, p.Name+"-domain.json")
	if err := os.WriteFile(domain, shorthandDomain(dom), 0o644); err != nil {
		return "", "", err
	}
	return data, domain, nil
}

// restrictCSV copies the columns named in cols (in that order) from the CSV
// in r to w. Every record is copied: a short record is an error naming its
// 1-based data row.
func restrictCSV(w io.Writer, r io.Reader, name string, cols []string) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("bench: %s: reading the header: %w", name, err)
	}
	pos := make([]int, len(cols))
	for i, c := range cols {
		pos[i] = -1
		for j, h := range header {
			if h == c {
				pos[i] = j
			}
		}
		if pos[i] < 0 {
			return fmt.Errorf("bench: %s: no column %q", name, c)
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(cols); err != nil {
		return err
	}
	out := make([]string, len(cols))
	for row := 1; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("bench: %s: data row %d: %w", name, row, err)
		}
		for i, j := range pos {
			out[i] = rec[j]
		}
		if err := cw.Write(out); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// shorthandDomain renders dom (encoded attributes) as {"attr": size, ...}
// in domain order.
func shorthandDomain(dom *universe.Domain) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, a := range dom.Attrs() {
		if i > 0 {
			b.WriteString(", ")
		}
		name, _ := json.Marshal(a.Name) // a string always marshals
		fmt.Fprintf(&b, "%s: %d", name, a.Size())
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// eventsShape is the shape of an event protocol (the table is generated to
// count its rows).
func (p *Protocol) eventsShape() (*Shape, error) {
	dom, err := universe.ParseDomain(EventsDomain())
	if err != nil {
		return nil, err
	}
	wl, err := p.workload(dom)
	if err != nil {
		return nil, err
	}
	st, err := WriteEvents(io.Discard, p.Events, EventsSeed)
	if err != nil {
		return nil, err
	}
	k, _ := dom.Size()
	return &Shape{Attributes: dom.Names(), K: k, Cells: dom.SizeBig(), Marginals: len(wl.Marginals()), M: wl.M(), N: st.Rows}, nil
}

// prepareEvents writes the generated event table and its domain into dir.
func (p *Protocol) prepareEvents(dir string) (data, domain string, err error) {
	sub := filepath.Join(dir, p.Name)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return "", "", err
	}
	var buf bytes.Buffer
	if _, err := WriteEvents(&buf, p.Events, EventsSeed); err != nil {
		return "", "", err
	}
	data = filepath.Join(sub, "events.csv")
	if err := os.WriteFile(data, buf.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	domain = filepath.Join(sub, "events-domain.json")
	if err := os.WriteFile(domain, EventsDomain(), 0o644); err != nil {
		return "", "", err
	}
	return data, domain, nil
}

// wideShape is the wide table's shape (no data is generated).
func (p *Protocol) wideShape() (*Shape, error) {
	dom, err := universe.ParseDomain(WideDomain(p.Wide, WideSeed))
	if err != nil {
		return nil, err
	}
	wl, err := p.workload(dom)
	if err != nil {
		return nil, err
	}
	k, _ := dom.Size()
	return &Shape{Attributes: dom.Names(), K: k, Cells: dom.SizeBig(), Marginals: len(wl.Marginals()), M: wl.M(), N: p.WideRows}, nil
}

// prepareWide writes the generated wide table and its domain into dir.
func (p *Protocol) prepareWide(dir string) (data, domain string, err error) {
	return WriteWideFiles(filepath.Join(dir, p.Name), p.Wide, p.WideRows)
}

// WriteWideFiles writes the wide table of cols columns and rows rows (seed
// WideSeed) and its domain into dir as wide.csv and wide-domain.json, and
// returns their paths.
func WriteWideFiles(dir string, cols, rows int) (data, domain string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	data = filepath.Join(dir, "wide.csv")
	f, err := os.Create(data)
	if err != nil {
		return "", "", err
	}
	if err := WriteWide(f, cols, rows, WideSeed); err != nil {
		f.Close()
		return "", "", err
	}
	if err := f.Close(); err != nil {
		return "", "", err
	}
	domain = filepath.Join(dir, "wide-domain.json")
	if err := os.WriteFile(domain, WideDomain(cols, WideSeed), 0o644); err != nil {
		return "", "", err
	}
	return data, domain, nil
}
