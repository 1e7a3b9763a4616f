package draft

import (
	"slices"
	"strconv"

	"github.com/dpsynth/synth/contrib"
	"github.com/dpsynth/synth/privacy"
)

// bound applies contribution bounding: the rows are grouped by unit and a
// unit with more than k rows keeps k of them, chosen uniformly at random by
// package contrib's rule (keyed hashes of a salt drawn from r, the unit and
// the row's cell). The cell of a row is the text of its drafted values, so
// identical rows are interchangeable, as in the engine. It returns the kept
// rows of each unit, units in the order of their text.
//
// Privacy: whether a row is kept depends only on its own unit's rows and
// the salt, so bounding is a stable transformation: adding or removing one
// unit adds or removes at most k kept rows and changes no other unit's.
// Every mechanism that follows states its sensitivity for that change.
func (t *table) bound(k int, r *privacy.Rand) ([][]int32, error) {
	salt := contrib.NewSalt(r.Uint64)
	byUnit := map[string][]int32{}
	for i, u := range t.unit {
		byUnit[u] = append(byUnit[u], int32(i))
	}
	units := make([]string, 0, len(byUnit))
	for u := range byUnit {
		units = append(units, u)
	}
	slices.Sort(units)
	groups := make([][]int32, 0, len(units))
	var buf []byte
	for _, u := range units {
		rows := byUnit[u]
		if len(rows) <= k {
			groups = append(groups, rows)
			continue
		}
		index := map[string]int{}
		var cells []contrib.Cell
		var members [][]int32
		for _, i := range rows {
			buf = t.rowText(buf[:0], i)
			j, ok := index[string(buf)]
			if !ok {
				j = len(cells)
				index[string(buf)] = j
				cells = append(cells, contrib.Cell{Text: []byte(string(buf))})
				members = append(members, nil)
			}
			cells[j].Count++
			members[j] = append(members[j], i)
		}
		kept := make([]int64, len(cells))
		contrib.Keep(contrib.UnitID(salt, u), int64(k), cells, kept)
		var g []int32
		for j := range cells {
			g = append(g, members[j][:kept[j]]...)
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// rowText appends the text of row i's drafted values to dst.
func (t *table) rowText(dst []byte, i int32) []byte {
	for j, c := range t.cols {
		if j > 0 {
			dst = append(dst, ',')
		}
		switch {
		case c.isNull(i):
			dst = append(dst, 'N')
		case c.src == srcText:
			dst = strconv.AppendQuote(dst, c.text[i])
		default:
			dst = strconv.AppendFloat(dst, c.num[i], 'g', -1, 64)
		}
	}
	return dst
}
