package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
)

// The event table: a public generator of a ratings-like table with many
// rows per person, for the benchmarks of the privacy unit (--privacy-unit
// user_id --max-rows-per-unit K). Nothing in it comes from private data; a
// seed fixes it.
//
// Each user has a profile (age group, gender, occupation, device, a
// favourite genre and day, a rating bias) and a number of rows drawn from a
// heavy-tailed law: log-normal with median 25 and σ = 1.3, times an
// activity factor of the profile (young users and students rate more),
// between 1 and EventsMaxRows. With the default 3,000 users that gives
// about 200,000 rows, a median user of about 28 rows and a heaviest user of
// about 2,600 (the public movielens ratings table of 100,004 rows has 671
// users, median 71, max 2,391). Each row (genre, rating, weekday, hour of
// day) is drawn given the profile, so that heavy users pull the marginals
// towards their own profile: bounding their rows moves the table's
// marginals (a bias), and not bounding them multiplies the noise.

// EventsMaxRows caps one user's rows in the generated table.
const EventsMaxRows = 3000

// EventsUnit is the event table's privacy-unit column.
const EventsUnit = "user_id"

var (
	evAges     = []string{"<18", "18-24", "25-34", "35-44", "45-49", "50-55", "56+"}
	evAgeP     = []float64{0.04, 0.18, 0.35, 0.20, 0.09, 0.08, 0.06}
	evAgeAct   = []float64{1.6, 1.5, 1.1, 0.9, 0.8, 0.7, 0.6}
	evGenders  = []string{"F", "M"}
	evGenderP  = []float64{0.3, 0.7}
	evOccs     = []string{"other", "academic", "artist", "clerical", "grad-student", "customer-service", "doctor", "executive", "farmer", "homemaker", "k-12-student", "lawyer", "programmer", "retired", "sales", "scientist", "self-employed", "technician", "tradesman", "unemployed", "writer"}
	evDevices  = []string{"web", "mobile", "tv"}
	evGenres   = []string{"action", "adventure", "animation", "children", "comedy", "crime", "documentary", "drama", "fantasy", "film-noir", "horror", "musical", "mystery", "romance", "sci-fi", "thriller", "war", "western"}
	evGenreP   = []float64{0.12, 0.07, 0.03, 0.04, 0.16, 0.07, 0.02, 0.18, 0.03, 0.01, 0.04, 0.02, 0.03, 0.07, 0.05, 0.04, 0.01, 0.01}
	evGenreAvg = []float64{3.4, 3.5, 3.7, 3.3, 3.4, 3.7, 3.9, 3.8, 3.4, 3.9, 3.1, 3.5, 3.6, 3.5, 3.4, 3.5, 3.8, 3.6}
	evDays     = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	evHours    = []string{"00-04", "04-08", "08-12", "12-16", "16-20", "20-24"}
	evHourP    = []float64{0.08, 0.04, 0.14, 0.20, 0.24, 0.30}
)

// EventsDomain returns the event table's domain file (the full form:
// categorical attributes, declared from the generator's public code book).
// The unit column is not an attribute: it is never released.
func EventsDomain() []byte {
	type attr struct {
		Name   string   `json:"name"`
		Type   string   `json:"type"`
		Values []string `json:"values"`
	}
	ratings := []string{"1", "2", "3", "4", "5"}
	d := struct {
		Attributes []attr `json:"attributes"`
	}{Attributes: []attr{
		{"age", "categorical", evAges}, {"gender", "categorical", evGenders}, {"occupation", "categorical", evOccs},
		{"device", "categorical", evDevices}, {"genre", "categorical", evGenres}, {"rating", "categorical", ratings},
		{"weekday", "categorical", evDays}, {"hour", "categorical", evHours},
	}}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		panic(err) // static data always marshals
	}
	return append(b, '\n')
}

// EventsStats describes a generated event table.
type EventsStats struct {
	Users, Rows     int
	MedianRows, Max int
}

// WriteEvents writes the event table of users users, drawn with seed, as
// CSV (header: user_id, then the domain's attributes) and returns its
// shape.
func WriteEvents(w io.Writer, users int, seed uint64) (EventsStats, error) {
	if users < 1 {
		return EventsStats{}, fmt.Errorf("bench: the event table needs at least one user, got %d", users)
	}
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(EventsUnit + ",age,gender,occupation,device,genre,rating,weekday,hour\n")
	counts := make([]int, users)
	st := EventsStats{Users: users}
	line := make([]byte, 0, 128)
	for u := range users {
		p := newEventProfile(r)
		n := p.rows(r)
		counts[u] = n
		st.Rows += n
		id := "u" + strconv.Itoa(100000+u)
		for range n {
			line = p.row(line[:0], r, id)
			if _, err := bw.Write(line); err != nil {
				return st, err
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return st, err
	}
	st.MedianRows, st.Max = medianMax(counts)
	return st, nil
}

func medianMax(xs []int) (median, top int) {
	c := append([]int(nil), xs...)
	for i := 1; i < len(c); i++ { // insertion sort: the list is small
		for j := i; j > 0 && c[j] < c[j-1]; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
	return c[len(c)/2], c[len(c)-1]
}

// eventProfile is one user's fixed attributes and tastes.
type eventProfile struct {
	age, gender, occ, device int
	fav, day                 int
	bias                     float64
}

func newEventProfile(r *rand.Rand) *eventProfile {
	p := &eventProfile{age: pick(r, evAgeP), gender: pick(r, evGenderP)}
	switch {
	case p.age <= 1 && r.Float64() < 0.5:
		p.occ = []int{4, 10}[p.age%2] // students
	case p.age == 6 && r.Float64() < 0.5:
		p.occ = 13 // retired
	default:
		p.occ = r.IntN(len(evOccs))
	}
	devP := []float64{0.5, 0.35, 0.15}
	if p.age <= 2 {
		devP = []float64{0.3, 0.6, 0.1}
	}
	p.device = pick(r, devP)
	p.fav = pick(r, evGenreP)
	if p.gender == 0 && r.Float64() < 0.3 {
		p.fav = 13 // romance
	}
	p.day = r.IntN(7)
	p.bias = 0.6 * r.NormFloat64()
	return p
}

// rows draws the user's number of rows.
func (p *eventProfile) rows(r *rand.Rand) int {
	act := evAgeAct[p.age]
	if p.occ == 4 || p.occ == 10 {
		act *= 1.4
	}
	n := int(math.Round(25 * act * math.Exp(1.3*r.NormFloat64())))
	return min(max(n, 1), EventsMaxRows)
}

// row appends one CSV row of the user to dst.
func (p *eventProfile) row(dst []byte, r *rand.Rand, id string) []byte {
	genre := p.fav
	if r.Float64() >= 0.4 {
		genre = pick(r, evGenreP)
	}
	rating := int(math.Round(evGenreAvg[genre] + p.bias + 0.9*r.NormFloat64()))
	rating = min(max(rating, 1), 5)
	day := p.day
	if r.Float64() >= 0.3 {
		day = r.IntN(7)
	}
	hour := pick(r, evHourP)
	if p.age <= 1 && r.Float64() < 0.3 {
		hour = 0 // late nights
	}
	for i, s := range []string{id, evAges[p.age], evGenders[p.gender], evOccs[p.occ], evDevices[p.device],
		evGenres[genre], strconv.Itoa(rating), evDays[day], evHours[hour]} {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, s...)
	}
	return append(dst, '\n')
}

// pick draws an index with the given probabilities (summing to 1 within
// rounding; the last index takes the rest).
func pick(r *rand.Rand, p []float64) int {
	u := r.Float64()
	for i, v := range p {
		if u < v {
			return i
		}
		u -= v
	}
	return len(p) - 1
}
