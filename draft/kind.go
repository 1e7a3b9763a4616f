package draft

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/universe"
)

// kind is what a column is drafted as.
type kind int

const (
	kindNone      kind = iota // too few values to tell
	kindBool                  // "boolean"
	kindInt                   // "integer"
	kindReal                  // "numeric"
	kindDate                  // "date"
	kindTimestamp             // "timestamp"
	kindText                  // "categorical"
)

func (k kind) String() string {
	return [...]string{"none", "boolean", "integer", "numeric", "date", "timestamp", "categorical"}[k]
}

// cellKind is one cell of a column's vote: what a value parses as.
type cellKind int

const (
	cSpelling  cellKind = iota // one of the null spellings (cell.spelling)
	cTypedNull                 // an Arrow (Parquet) null
	cBool                      // true/false/t/f/yes/no/y/n, any case
	cInt                       // an integer >= 0 ("0" and "1" too)
	cIntNeg                    // an integer < 0
	cReal                      // a finite real >= 0 that is not an integer
	cRealNeg                   // a finite real < 0 that is not an integer
	cDate                      // YYYY-MM-DD
	cTimestamp                 // RFC 3339, or YYYY-MM-DD[T ]HH:MM[:SS[.frac]] in Settings.TimeZone
	cText                      // anything else
	cValue                     // typed column: a value (>= 0 for numbers)
	cValueNeg                  // typed numeric column: a value < 0
	cNonFinite                 // typed float column: NaN or ±Inf
)

type cell struct {
	kind     cellKind
	spelling int
}

// Public constants of the kind vote's post-processing.
const (
	// minorShare: a kind is present in a column when its noisy share of the
	// non-missing votes is above 2% (and its noisy count above
	// presentSigmas·σ·√m, m the number of cells summed); boolean, date and
	// timestamp need every other non-missing kind below that.
	minorShare = 0.02
	// presentSigmas is the number of noise standard deviations a (sum of)
	// noisy counts must pass to count as present.
	presentSigmas = 4.0
	// nullSigmas is the threshold of a null spelling: the spelling with the
	// largest noisy count above 3σ is declared (a declared null token the
	// data does not use costs a code; a missed one makes a release fail, so
	// this one is lower). Other spellings are reported in a note above
	// presentSigmas·σ.
	nullSigmas = 3.0
)

// layout returns the cells of a column's vote: a function of its type in
// the schema and of the settings only (public).
func layout(c *column, st *settings) []cell {
	var cells []cell
	if c.src == srcText {
		for i := range st.nulls {
			cells = append(cells, cell{cSpelling, i})
		}
	}
	if c.nullable {
		cells = append(cells, cell{kind: cTypedNull})
	}
	switch c.src {
	case srcText:
		for _, k := range []cellKind{cBool, cInt, cIntNeg, cReal, cRealNeg, cDate, cTimestamp, cText} {
			cells = append(cells, cell{kind: k})
		}
	case srcInt:
		cells = append(cells, cell{kind: cValue}, cell{kind: cValueNeg})
	case srcFloat:
		cells = append(cells, cell{kind: cValue}, cell{kind: cValueNeg}, cell{kind: cNonFinite})
	default:
		cells = append(cells, cell{kind: cValue})
	}
	return cells
}

// Parsers shared by the vote and the bounds. Spaces and tabs around a
// number are ignored (as the engine does); other forms are exact.

func parseBool(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "t", "f", "yes", "no", "y", "n":
		return true
	}
	return false
}

func numeric(s string, real bool) (string, bool) {
	t := strings.Trim(s, " \t")
	if t == "" {
		return "", false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case '0' <= c && c <= '9', c == '+', c == '-':
		case real && (c == '.' || c == 'e' || c == 'E'):
		default:
			return "", false
		}
	}
	return t, true
}

func parseInt(s string) (int64, bool) {
	t, ok := numeric(s, false)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(t, 10, 64)
	return v, err == nil
}

func parseReal(s string) (float64, bool) {
	t, ok := numeric(s, true)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// parseDate returns the days since 1970-01-01 of a YYYY-MM-DD date (the
// engine's universe.ParseDate).
func parseDate(s string) (float64, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	d, err := universe.ParseDate(s)
	if err != nil {
		return 0, false
	}
	return float64(d), true
}

// parseTimestamp returns the Unix seconds of a timestamp with a time of
// day, as the engine reads it (universe.ParseTimestamp: RFC 3339, or
// YYYY-MM-DD[T ]HH:MM[:SS[.frac]] read in loc when it has no offset).
func parseTimestamp(s string, loc *time.Location) (float64, bool) {
	if len(s) < 16 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') {
		return 0, false
	}
	t, err := universe.ParseTimestamp(s, loc)
	if err != nil {
		return 0, false
	}
	return unixSeconds(t), true
}

// classifyText returns the cell kind of a text value that is not a null
// spelling.
func classifyText(s string, loc *time.Location) cellKind {
	switch {
	case parseBool(s):
		return cBool
	}
	if v, ok := parseInt(s); ok {
		if v < 0 {
			return cIntNeg
		}
		return cInt
	}
	if v, ok := parseReal(s); ok {
		if v < 0 {
			return cRealNeg
		}
		return cReal
	}
	if _, ok := parseDate(s); ok {
		return cDate
	}
	if _, ok := parseTimestamp(s, loc); ok {
		return cTimestamp
	}
	return cText
}

// vote is the outcome of a column's kind vote: its noisy counts and what
// they say (post-processing).
type vote struct {
	cells  []cell
	counts []int64 // noisy
	sigma  float64
	kind   kind
	null   *string // the declared null token, or nil
	// nhat is the noisy number of values of the drafted kind (the n̂ of the
	// quantile targets).
	nhat float64
	// negatives: the noisy count of negative values passes the threshold.
	negatives bool
	// minRows is the noisy count of non-missing values below which a text
	// column is left undrafted.
	minRows    float64
	extraNulls []string // other spellings that passed the threshold
	nonFinite  bool     // a typed float column holds NaN or ±Inf (noisily)
}

// newVoteNoise calibrates the vote's noise to ρ: the discrete Gaussian of
// smallest σ whose cost at ℓ2 sensitivity K (see voteColumn) is at most ρ,
// and that cost, K²/(2σ²)-zCDP.
func newVoteNoise(k int, rho float64) (*privacy.DiscreteGaussian, privacy.Cost, error) {
	g, err := gaussianFor(float64(k), rho)
	if err != nil {
		return nil, privacy.Cost{}, err
	}
	return g, g.Cost(float64(k)), nil
}

// voteColumn is the kind vote of one column: every kept row votes for the
// cell its value parses as, and each cell's count gets discrete Gaussian
// noise.
//
// Privacy: a row votes in exactly one cell, so adding or removing one unit
// (at most K kept rows after bounding) changes the count vector by at most
// K in ℓ1 and ℓ2 (all K votes may fall in one cell). With exact discrete
// Gaussian noise of variance σ² on every cell (including the empty ones:
// the cells are fixed by the schema and the settings), the vote is
// K²/(2σ²)-zCDP (Canonne, Kamath and Steinke 2020); σ is calibrated in
// newPlan so that this is at most the column's vote share of ρ. The kind,
// the null token, n̂ and the negatives flag are functions of the noisy
// counts, σ and public constants: post-processing.
func voteColumn(c *column, cp *colPlan, rows []int32, st *settings, r *privacy.Rand) *vote {
	counts := tally(c, cp.cells, rows, st)
	cp.vote.AddTo(r, counts)
	return decide(c.src, cp.cells, counts, cp.vote.Sigma(), st)
}

// tally returns the exact vote counts of the kept rows (internal: only
// their noisy version leaves voteColumn).
func tally(c *column, cells []cell, rows []int32, st *settings) []int64 {
	index := map[cellKind]int{}
	spell := map[string]int{}
	for i, cl := range cells {
		if cl.kind == cSpelling {
			spell[st.nulls[cl.spelling]] = i
		} else {
			index[cl.kind] = i
		}
	}
	counts := make([]int64, len(cells))
	for _, i := range rows {
		if c.isNull(i) {
			counts[index[cTypedNull]]++
			continue
		}
		if c.src == srcText {
			s := c.text[i]
			if j, ok := spell[s]; ok {
				counts[j]++
				continue
			}
			counts[index[classifyText(s, st.loc)]]++
			continue
		}
		v := c.num[i]
		switch {
		case c.src == srcFloat && (math.IsNaN(v) || math.IsInf(v, 0)):
			counts[index[cNonFinite]]++
		case (c.src == srcInt || c.src == srcFloat) && v < 0:
			counts[index[cValueNeg]]++
		default:
			counts[index[cValue]]++
		}
	}
	return counts
}

// decide turns the noisy counts into a kind, a null token, n̂ and the
// negatives flag. It reads nothing but its arguments: post-processing.
func decide(src srcType, cells []cell, counts []int64, sigma float64, st *settings) *vote {
	v := &vote{cells: cells, counts: counts, sigma: sigma}
	get := func(ks ...cellKind) (float64, int) {
		s, m := 0.0, 0
		for i, cl := range cells {
			for _, k := range ks {
				if cl.kind == k && k != cSpelling {
					s += float64(counts[i])
					m++
				}
			}
		}
		return s, m
	}
	thr := func(m int) float64 { return presentSigmas * sigma * math.Sqrt(float64(m)) }
	// Nulls: the spelling with the largest noisy count above the threshold,
	// else "" when typed nulls pass it.
	best := -1
	for i, cl := range cells {
		if cl.kind == cSpelling && float64(counts[i]) > nullSigmas*sigma && (best < 0 || counts[i] > counts[best]) {
			best = i
		}
	}
	if best >= 0 {
		tok := st.nulls[cells[best].spelling]
		v.null = &tok
		for i, cl := range cells {
			if cl.kind == cSpelling && i != best && float64(counts[i]) > presentSigmas*sigma {
				v.extraNulls = append(v.extraNulls, st.nulls[cl.spelling])
			}
		}
	} else if tn, m := get(cTypedNull); m > 0 && tn > nullSigmas*sigma {
		tok := ""
		v.null = &tok
	}
	if src != srcText {
		n, m := get(cValue, cValueNeg)
		v.nhat = n
		v.minRows = thr(m)
		neg, mn := get(cValueNeg)
		v.negatives = mn > 0 && neg > thr(mn)
		nf, mf := get(cNonFinite)
		v.nonFinite = mf > 0 && nf > thr(mf)
		v.kind = map[srcType]kind{srcBool: kindBool, srcInt: kindInt, srcFloat: kindReal, srcDate: kindDate, srcTimestamp: kindTimestamp}[src]
		return v
	}
	all := []cellKind{cBool, cInt, cIntNeg, cReal, cRealNeg, cDate, cTimestamp, cText}
	n, m := get(all...)
	v.minRows = thr(m)
	if n <= v.minRows {
		v.kind = kindNone
		return v
	}
	// minor reports whether the cells ks hold at most a minor share.
	minor := func(ks ...cellKind) bool {
		s, m := get(ks...)
		return s <= max(minorShare*n, thr(m))
	}
	present := func(ks ...cellKind) bool { return !minor(ks...) }
	others := func(keep ...cellKind) []cellKind {
		var out []cellKind
		for _, k := range all {
			if !slices.Contains(keep, k) {
				out = append(out, k)
			}
		}
		return out
	}
	switch {
	case minor(others(cBool)...) && present(cBool):
		v.kind = kindBool
	case minor(others(cDate)...) && present(cDate):
		v.kind = kindDate
		v.nhat, _ = get(cDate)
	case minor(others(cDate, cTimestamp)...) && present(cTimestamp):
		v.kind = kindTimestamp
		v.nhat, _ = get(cDate, cTimestamp)
	case present(cText, cBool, cDate, cTimestamp):
		v.kind = kindText
	case present(cReal, cRealNeg):
		v.kind = kindReal
		v.nhat, _ = get(cInt, cIntNeg, cReal, cRealNeg)
		neg, mn := get(cIntNeg, cRealNeg)
		v.negatives = neg > thr(mn)
	case present(cInt, cIntNeg):
		v.kind = kindInt
		v.nhat, _ = get(cInt, cIntNeg)
		neg, mn := get(cIntNeg)
		v.negatives = neg > thr(mn)
	default:
		v.kind = kindText
	}
	return v
}

// notes states what the vote decided, from public values only.
func (v *vote) notes(c *column) []string {
	var out []string
	how := fmt.Sprintf("kind %s by a noisy vote over %d cells (discrete Gaussian, σ = %.3g); a kind counts when its noisy share of the non-missing values is above %g%% and its noisy count above %g·σ per cell summed",
		v.kind, len(v.cells), v.sigma, 100*minorShare, presentSigmas)
	if c.src != srcText {
		how = fmt.Sprintf("kind %s from the schema (type %s); typed nulls counted with discrete Gaussian noise (σ = %.3g)", v.kind, c.dt, v.sigma)
	}
	if v.kind == kindNone {
		how = fmt.Sprintf("kind undecided: the noisy vote (σ = %.3g) finds too few non-missing values", v.sigma)
	}
	nul := "no null token (no missing-value spelling passed the threshold " + fmtCount(nullSigmas*v.sigma) + "): add \"null\" if the column has missing values"
	if c.src != srcText {
		nul = "no null token (the noisy count of nulls did not pass " + fmtCount(nullSigmas*v.sigma) + "): add \"null\": \"\" if the column has nulls"
		if !c.nullable {
			nul = "no null token (the schema has no nulls)"
		}
	}
	if v.null != nil {
		nul = fmt.Sprintf("null token %q (its noisy count passed %s)", *v.null, fmtCount(nullSigmas*v.sigma))
		if *v.null == "" && c.src != srcText {
			nul = fmt.Sprintf("null token \"\" for typed nulls (their noisy count passed %s)", fmtCount(nullSigmas*v.sigma))
		}
	}
	out = append(out, fmt.Sprintf("column %q: %s; %s", c.name, how, nul))
	if len(v.extraNulls) > 0 {
		out = append(out, fmt.Sprintf("column %q: other missing-value spellings also passed the threshold %s: %q; a column has one null token: map them to %q before a release, or exclude the column", c.name, fmtCount(presentSigmas*v.sigma), v.extraNulls, *v.null))
	}
	if v.nonFinite {
		out = append(out, fmt.Sprintf("column %q: holds NaN or infinite values (noisily): the engine rejects them", c.name))
	}
	if c.src != srcText {
		return out
	}
	switch v.kind {
	case kindInt, kindReal:
		out = append(out, fmt.Sprintf("column %q: values that do not parse as %s, if any, are fewer than about %g%% of the non-missing values: a release fails on each of them", c.name, v.kind, 100*minorShare))
	case kindDate, kindTimestamp, kindBool:
		out = append(out, fmt.Sprintf("column %q: values that are not %ss, if any, are fewer than about %g%% of the non-missing values: a release fails on each of them", c.name, v.kind, 100*minorShare))
	}
	return out
}

// fmtCount formats a threshold on counts.
func fmtCount(x float64) string { return strconv.FormatFloat(math.Ceil(x), 'f', 0, 64) }
