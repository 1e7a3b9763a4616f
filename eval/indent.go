package eval

// appendIndented appends src, the compact JSON text encoding/json writes,
// indented as json.Indent(dst, src, "", "  ") would: each element and
// member on its own line, two spaces a level, ": " after a key, empty
// objects and arrays kept as {} and []. It is json.Indent without the
// validating scanner, which on a full ADULT report (9.6 MB, 50,000 listed
// queries) took 50 ms of the report's 80: src must be valid compact JSON
// (strings escaped, no whitespace outside them), as encoding/json writes.
func appendIndented(dst, src []byte) []byte {
	depth := 0
	open := false // the last byte opened an object or array
	inString, escaped := false, false
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	for _, c := range src {
		if inString {
			dst = append(dst, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if open && c != '}' && c != ']' {
			newline()
		}
		switch c {
		case '{', '[':
			dst = append(dst, c)
			depth++
			open = true
			continue
		case '}', ']':
			depth--
			if !open {
				newline()
			}
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		case '"':
			dst = append(dst, c)
			inString = true
		default:
			dst = append(dst, c)
		}
		open = false
	}
	return dst
}
