// Package contrib bounds the contribution of a privacy unit: the rule that
// keeps at most K rows of each unit (a person, an account, a device: every
// row that names the same value of the privacy-unit column) before any row
// is counted. The file reader (package ingest) and the SQL compiler
// (package sqlsrc) implement the same rule, so that a table keeps the same
// rows whether it is read from a file or counted in a database.
//
// The rule. A release draws a secret salt (Salt, 32 lowercase hexadecimal
// digits) from its randomness. A row's unit is identified by
//
//	u = md5(salt ‖ unit text)                         (ID; 16 bytes, 32 hex digits)
//
// where the unit text is the value of the unit column as text (strings as
// they are, integers in decimal). The rows of one unit that fall in the same
// cell of the universe (the same codes of every attribute, CellText) are
// interchangeable; the c rows of unit u in cell x are numbered j = 1..c and
// copy j has the priority
//
//	p = md5(hex(u) ‖ "|" ‖ cell text ‖ "|" ‖ decimal j)    (Priority)
//
// Each unit keeps its K copies of smallest priority (bytewise order, which
// is the order of the hexadecimal text) and drops the rest (Keep). Because
// MD5 keyed with a secret salt behaves as a random function, the kept rows
// are a uniformly random K-subset of the unit's rows; the rule depends only
// on the unit's own rows, whatever their order in the input.
//
// Privacy: the rule is a stable transformation with respect to units.
// Whether a row of unit u is kept depends only on u's rows and the salt, so
// adding or removing one unit adds or removes at most K kept rows and
// changes no other unit's. Any mechanism with sensitivity Δ for the
// addition or removal of one row therefore has sensitivity at most K·Δ for
// the addition or removal of one unit (triangle inequality over the K
// rows). The salt makes the choice uniform and reproducible in SQL; the
// guarantee does not depend on its secrecy. Two units share an ID with
// probability at most U²/2^129 for U units (below 10^-20 for 10^9 units),
// negligible beside any δ; the ID is keyed so that nobody can choose unit
// values that collide.
package contrib
