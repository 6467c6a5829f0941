package codec

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON decoder is schema-directed: it walks the value bytes once,
// guided by the decode plan (node tree), checks every value against its
// column type and records the converted values on a tape. Only when the
// whole value converted does Append replay the tape into the Arrow
// builders, so a record that fails is never half-appended.
//
// Tape layout (positions are indexes into jsonParser.tape):
//   - leaf:   one entry (tNull, tNum or tBytes)
//   - struct: a tStruct header (n = number of fields, i = end position),
//     then n slot entries whose i is the position of the field's value,
//     slotMissing or slotNull, then the values in JSON order (fields appear
//     in any order in JSON; a field given twice is an error)
//   - list:   a tList header (n = count, i = end), then the elements
//   - map:    a tMap header (n = count, i = end), then key, value pairs
//
// The parser follows RFC 8259 strictly (no comments, no trailing commas,
// no NaN/Infinity, no invalid UTF-8 or lone surrogates in strings).

const maxDepth = 1000

// Struct slot values other than a tape position.
const (
	slotMissing = -1 // the object has no key for the field
	slotNull    = -2 // the key is there with null
)

// maxUnknownNames bounds the unknown field paths kept per record (for the
// dead-letter reason and the examples of the table's status).
const maxUnknownNames = 10

const (
	tNull  uint8 = iota + 1
	tNum         // i (and hi for decimals) hold the value
	tBytes       // off, n locate the bytes in the input or the scratch buffer
	tSlot
	tStruct
	tList
	tMap
)

type entry struct {
	kind    uint8
	scratch bool // tBytes: off is into jsonParser.scratch, else into the input
	n       int32
	off     int32
	i       int64
	hi      int64
}

type jsonParser struct {
	opts    JSONOptions
	in      []byte
	pos     int
	depth   int
	tape    []entry
	scratch []byte // decoded bytes the tape points to
	tmp     []byte // unescaped strings that are converted further (keys, base64, times)
	digits  []byte
	folded  []byte // a key in folded form (case-insensitive matching)
	// unknown counts the fields of the value that match no field of the
	// schema, at any depth; unkKeys locates the first maxUnknownNames of
	// them. Their paths are built only when asked for (unknownPaths).
	unknown   int
	unkKeys   []unknownKey
	unkCopies []byte // keys with escapes, decoded
	unkPaths  []byte
	// noMatch is the first struct whose object had keys, none of which
	// matched one of its fields.
	noMatch *node
}

// unknownKey is the key of an unknown field of an object of struct n: at
// off in the input, or in unkCopies when it had escapes.
type unknownKey struct {
	n      *node
	off, l int32
	copied bool
}

// syntaxError is invalid JSON; it is not prefixed with a field path.
type syntaxError struct {
	pos int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.pos, e.msg)
}

// fieldError is a value that does not fit its column. path holds the
// segments from the innermost out ("mag", "properties").
type fieldError struct {
	path []string
	msg  string
}

func (e *fieldError) Error() string {
	var b strings.Builder
	b.WriteString("field ")
	for i := len(e.path) - 1; i >= 0; i-- {
		s := e.path[i]
		if i != len(e.path)-1 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	b.WriteString(": ")
	b.WriteString(e.msg)
	return b.String()
}

// within adds a path segment to a fieldError on its way up.
func within(err error, seg string) error {
	if fe, ok := err.(*fieldError); ok {
		fe.path = append(fe.path, seg)
	}
	return err
}

func convErr(format string, args ...any) error {
	return &fieldError{msg: fmt.Sprintf(format, args...)}
}

func (p *jsonParser) syntax(msg string) error {
	return &syntaxError{pos: p.pos, msg: msg}
}

func (p *jsonParser) unexpected() error {
	if p.pos >= len(p.in) {
		return p.syntax("unexpected end of input")
	}
	return p.syntax(fmt.Sprintf("unexpected character %q", p.in[p.pos]))
}

func (p *jsonParser) skipWS() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// parse checks and converts one value onto the tape. Unknown fields are
// counted only when the value converts, or fails for its unknown fields
// alone: on any other error p.unknown is 0.
func (p *jsonParser) parse(root *node, in []byte) error {
	p.in, p.pos, p.depth = in, 0, 0
	p.tape, p.scratch = p.tape[:0], p.scratch[:0]
	p.unknown, p.unkKeys, p.unkCopies, p.noMatch = 0, p.unkKeys[:0], p.unkCopies[:0], nil
	if err := p.parseTop(root); err != nil {
		p.unknown, p.unkKeys = 0, p.unkKeys[:0]
		return err
	}
	// Reported after the whole value is read, so that the reason names
	// every unknown field (up to the bound) and the count is complete.
	if p.noMatch != nil {
		return p.noMatchError()
	}
	if p.unknown > 0 && p.opts.UnknownFields == UnknownDeadLetter {
		return fmt.Errorf("unknown fields (%s = %s): %s", PropUnknownFields, UnknownDeadLetter, p.unknownList())
	}
	return nil
}

func (p *jsonParser) parseTop(root *node) error {
	p.skipWS()
	if p.pos >= len(p.in) {
		return p.syntax("empty value")
	}
	if p.in[p.pos] != '{' {
		if d := p.describe(); d != invalidJSON {
			return fmt.Errorf("value is not a JSON object (found %s)", d)
		}
		return p.syntax("not a JSON value")
	}
	parse := p.parseStruct
	if root.union != nil {
		parse = p.parseUnion
	}
	if err := parse(root); err != nil {
		return err
	}
	p.skipWS()
	if p.pos != len(p.in) {
		return p.syntax("data after the top-level value")
	}
	return nil
}

// addUnknown counts the key of an object of struct n that matches none of
// its fields, and locates it while fewer than maxUnknownNames are kept.
// inInput says whether key is the input's bytes at keyAt (no escapes).
func (p *jsonParser) addUnknown(n *node, key []byte, keyAt int, inInput bool) {
	p.unknown++
	if len(p.unkKeys) == maxUnknownNames {
		return
	}
	k := unknownKey{n: n, off: int32(keyAt), l: int32(len(key))}
	if !inInput {
		k.off, k.copied = int32(len(p.unkCopies)), true
		p.unkCopies = append(p.unkCopies, key...)
	}
	p.unkKeys = append(p.unkKeys, k)
}

// unknownPaths appends to dst the paths of the kept unknown fields (the
// struct's path, a dot, the key), which live in p.unkPaths until the next
// call.
func (p *jsonParser) unknownPaths(dst [][]byte) [][]byte {
	var ends [maxUnknownNames]int
	p.unkPaths = p.unkPaths[:0]
	for i, k := range p.unkKeys {
		if k.n.path != "" {
			p.unkPaths = append(append(p.unkPaths, k.n.path...), '.')
		}
		if k.copied {
			p.unkPaths = append(p.unkPaths, p.unkCopies[k.off:k.off+k.l]...)
		} else {
			p.unkPaths = append(p.unkPaths, p.in[k.off:k.off+k.l]...)
		}
		ends[i] = len(p.unkPaths)
	}
	start := 0
	for i := range p.unkKeys {
		dst = append(dst, p.unkPaths[start:ends[i]])
		start = ends[i]
	}
	return dst
}

// unknownList lists the kept unknown field paths, quoted, and the count of
// the others: `"vbeln", "aufnr"` or `"a", …, "j" and 5 more`.
func (p *jsonParser) unknownList() string {
	var b strings.Builder
	paths := p.unknownPaths(nil)
	for i, path := range paths {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(string(path)))
	}
	if more := p.unknown - len(paths); more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	return b.String()
}

func (p *jsonParser) noMatchError() error {
	where := "no key of the object matches a column"
	if p.noMatch.path != "" {
		where = "field " + p.noMatch.path + ": no key of the object matches a field of the struct"
	}
	return fmt.Errorf("%s (%s = %s); unknown fields: %s", where, PropFieldMatching, p.opts.matching(), p.unknownList())
}

// describe names the JSON value at the current position for an error
// message: `string "x"`, `number 1.5`, `boolean true`, `null`, `object`,
// `array`, or invalidJSON when no JSON value starts there (`nope`,
// `trueish`, `123abc`). It leaves the position where it was.
func (p *jsonParser) describe() string {
	if p.pos >= len(p.in) {
		return "end of input"
	}
	start := p.pos
	defer func() { p.pos = start }()
	switch c := p.in[p.pos]; {
	case c == '"':
		s, err := p.stringTmp()
		if err != nil {
			return "invalid string"
		}
		if len(s) > 64 {
			return fmt.Sprintf("string %q…", truncUTF8(s, 64))
		}
		return fmt.Sprintf("string %q", s)
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't':
		if p.literal("true") && p.delimited() {
			return "boolean true"
		}
	case c == 'f':
		if p.literal("false") && p.delimited() {
			return "boolean false"
		}
	case c == 'n':
		if p.literal("null") && p.delimited() {
			return "null"
		}
	case c == '-' || (c >= '0' && c <= '9'):
		if num, err := p.scanNumber(); err == nil && p.delimited() {
			return "number " + string(num.lit)
		}
	}
	return invalidJSON
}

// invalidJSON is what describe names input where no JSON value starts.
const invalidJSON = "invalid JSON"

// delimited reports whether the token that ends at the position ends where
// JSON lets one end: at the end of the input, white space, ',', ':', ']'
// or '}' (RFC 8259 §2).
func (p *jsonParser) delimited() bool {
	if p.pos >= len(p.in) {
		return true
	}
	switch p.in[p.pos] {
	case ' ', '\t', '\n', '\r', ',', ':', ']', '}':
		return true
	}
	return false
}

func truncUTF8(b []byte, n int) []byte {
	for n > 0 && n < len(b) && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}

// literal consumes word if it is next.
func (p *jsonParser) literal(word string) bool {
	if len(p.in)-p.pos >= len(word) && string(p.in[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *jsonParser) parseStruct(n *node) error {
	hdr, err := p.open(entry{kind: tStruct, n: int32(len(n.fields))})
	if err != nil {
		return err
	}
	more := !p.empty('}')
	for range n.fields {
		p.tape = append(p.tape, entry{kind: tSlot, i: slotMissing})
	}
	matched, unknown := false, false
	guess := 0 // the field the next key is tried against first
	for more {
		p.skipWS()
		if !p.at('"') {
			return p.unexpected()
		}
		keyAt := p.pos + 1
		key, err := p.stringTmp()
		if err != nil {
			return err
		}
		keyEnd := p.pos - 1 // the closing quote
		if !p.colon() {
			return p.unexpected()
		}
		var idx int
		var ok bool
		switch {
		case n.fold:
			p.folded = foldName(p.folded[:0], key)
			idx, ok = n.index[string(p.folded)]
		case guess < len(n.fields) && n.fields[guess].name == string(key):
			// Keys mostly come in the schema's order: the field after
			// the last one matched is tried before the index (names
			// are unique, so this is the index's answer).
			idx, ok = guess, true
		default:
			idx, ok = n.index[string(key)]
		}
		if ok {
			guess = idx + 1
		}
		if !ok {
			unknown = true
			// Escapes always shorten: an unchanged length means the
			// key is the input's bytes.
			p.addUnknown(n, key, keyAt, keyEnd-keyAt == len(key))
			if err := p.skipValue(); err != nil {
				return err
			}
		} else {
			matched = true
			f := n.fields[idx]
			if p.tape[hdr+1+idx].i != slotMissing {
				// RFC 8259 §4 leaves duplicate names to the reader;
				// keeping one of two values would drop the other.
				return &fieldError{path: []string{f.name}, msg: fmt.Sprintf("key %q given twice for the field (%s = %s)",
					key, PropFieldMatching, p.opts.matching())}
			}
			if p.literal("null") {
				if f.required {
					return &fieldError{path: []string{f.name}, msg: "required field is null"}
				}
				p.tape[hdr+1+idx].i = slotNull
			} else {
				at := len(p.tape)
				if err := p.parseValue(f); err != nil {
					return within(err, f.name)
				}
				p.tape[hdr+1+idx].i = int64(at)
			}
		}
		if more, ok = p.next('}'); !ok {
			return p.unexpected()
		}
	}
	if unknown && !matched {
		// An object whose keys all miss (e.g. differ by case) would become
		// a row or struct of nulls: the record is a dead letter instead,
		// reported once the whole value is read (parse). {} is not that
		// case.
		if p.noMatch == nil {
			p.noMatch = n
		}
	} else {
		for i, f := range n.fields {
			if f.required && p.tape[hdr+1+i].i < 0 {
				return &fieldError{path: []string{f.name}, msg: "required field is missing"}
			}
		}
	}
	p.close(hdr)
	return nil
}

func (p *jsonParser) parseList(n *node) error {
	hdr, err := p.open(entry{kind: tList})
	if err != nil {
		return err
	}
	more := !p.empty(']')
	count := 0
	for more {
		p.skipWS()
		if err := p.parseElement(n, func() string { return "[" + strconv.Itoa(count) + "]" }); err != nil {
			return err
		}
		count++
		var ok bool
		if more, ok = p.next(']'); !ok {
			return p.unexpected()
		}
	}
	p.tape[hdr].n = int32(count)
	p.close(hdr)
	return nil
}

// parseElement parses a list element or map value: null or a value of
// n.elem.
func (p *jsonParser) parseElement(n *node, seg func() string) error {
	if p.literal("null") {
		if n.elemRequired {
			return &fieldError{path: []string{seg()}, msg: "required element is null"}
		}
		p.tape = append(p.tape, entry{kind: tNull})
		return nil
	}
	if err := p.parseValue(n.elem); err != nil {
		return within(err, seg())
	}
	return nil
}

func (p *jsonParser) parseMap(n *node) error {
	hdr, err := p.open(entry{kind: tMap})
	if err != nil {
		return err
	}
	more := !p.empty('}')
	count := 0
	var seen map[string]struct{} // keys of a large map
	for more {
		p.skipWS()
		if !p.at('"') {
			return p.unexpected()
		}
		keyAt := len(p.tape)
		key, err := p.stringEntry()
		if err != nil {
			return err
		}
		if p.duplicateKey(hdr, keyAt, count, key, &seen) {
			return convErr("duplicate map key %q", key)
		}
		if !p.colon() {
			return p.unexpected()
		}
		if err := p.parseElement(n, func() string { return "[" + strconv.Quote(string(key)) + "]" }); err != nil {
			return err
		}
		count++
		var ok bool
		if more, ok = p.next('}'); !ok {
			return p.unexpected()
		}
	}
	p.tape[hdr].n = int32(count)
	p.close(hdr)
	return nil
}

// smallMap is the number of keys up to which duplicate map keys are found
// by scanning the keys already on the tape; larger maps use a set.
const smallMap = 16

// duplicateKey reports whether key is already one of the count keys of the
// map whose header is at hdr (keys before position keyAt).
func (p *jsonParser) duplicateKey(hdr, keyAt, count int, key []byte, seen *map[string]struct{}) bool {
	if count < smallMap {
		for q := hdr + 1; q < keyAt; {
			if bytes.Equal(p.bytesOf(&p.tape[q]), key) {
				return true
			}
			q = p.skipEntry(q + 1) // the value
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, 2*smallMap)
		for q := hdr + 1; q < keyAt; {
			(*seen)[string(p.bytesOf(&p.tape[q]))] = struct{}{}
			q = p.skipEntry(q + 1)
		}
	}
	if _, dup := (*seen)[string(key)]; dup {
		return true
	}
	(*seen)[string(key)] = struct{}{}
	return false
}

// skipEntry returns the position after the tape value at q.
func (p *jsonParser) skipEntry(q int) int {
	switch p.tape[q].kind {
	case tStruct, tList, tMap:
		return int(p.tape[q].i)
	}
	return q + 1
}

func (p *jsonParser) bytesOf(e *entry) []byte {
	if e.scratch {
		return p.scratch[e.off : e.off+e.n]
	}
	return p.in[e.off : e.off+e.n]
}

func (p *jsonParser) parseValue(n *node) error {
	if p.pos >= len(p.in) {
		return p.unexpected()
	}
	if n.union != nil {
		return p.parseUnion(n)
	}
	c := p.in[p.pos]
	switch n.kind {
	case kStruct:
		if c == '{' {
			return p.parseStruct(n)
		}
	case kList:
		if c == '[' {
			return p.parseList(n)
		}
	case kMap:
		if c == '{' {
			return p.parseMap(n)
		}
	default:
		return p.parseScalar(n, c)
	}
	return p.mismatch(n)
}

func (p *jsonParser) mismatch(n *node) error {
	d := p.describe()
	if d == invalidJSON {
		return p.unexpected()
	}
	return convErr("cannot convert %s to %s", d, n.typeName())
}

// parseUnion parses the value of a JSON Schema anyOf/oneOf into struct
// n, one field per branch: the value is validated against each branch
// (github.com/santhosh-tekuri/jsonschema/v6) and parsed into the field of
// every branch it validates against; the others are null. A oneOf value
// must validate against exactly one branch, an anyOf value against at
// least one (JSON Schema 2020-12 Core §10.2.1.2, §10.2.1.3); else it is an
// error naming the branches.
func (p *jsonParser) parseUnion(n *node) error {
	start := p.pos
	if err := p.skipValue(); err != nil {
		return err
	}
	end := p.pos
	u := n.union.u
	match, err := u.Match(p.in[start:end])
	if err != nil {
		return convErr("%v", err)
	}
	if len(match) == 0 || (u.OneOf && len(match) > 1) {
		names := make([]string, len(u.Branches))
		for i, b := range u.Branches {
			names[i] = b.Name
		}
		p.pos = start
		d := p.describe()
		p.pos = end
		if len(match) == 0 {
			return convErr("%s validates against none of the %s's branches (%s)", d, u.Kind(), strings.Join(names, ", "))
		}
		got := make([]string, len(match))
		for i, m := range match {
			got[i] = u.Branches[m].Name
		}
		return convErr("%s validates against %d of the oneOf's branches (%s), not exactly one", d, len(match), strings.Join(got, ", "))
	}
	hdr := len(p.tape)
	p.tape = append(p.tape, entry{kind: tStruct, n: int32(len(n.fields))})
	for range n.fields {
		p.tape = append(p.tape, entry{kind: tSlot, i: slotMissing})
	}
	for _, m := range match {
		f := n.union.field[m]
		p.pos = start
		at := len(p.tape)
		if err := p.parseValue(n.fields[f]); err != nil {
			return within(err, n.fields[f].name)
		}
		p.tape[hdr+1+f].i = int64(at)
	}
	p.pos = end
	p.tape[hdr].i = int64(len(p.tape))
	return nil
}

// skipValue checks and skips one JSON value of a field not in the schema.
func (p *jsonParser) skipValue() error {
	if p.pos >= len(p.in) {
		return p.unexpected()
	}
	switch c := p.in[p.pos]; {
	case c == '"':
		_, err := p.stringTmp()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := p.scanNumber()
		return err
	case c == 't':
		if p.literal("true") {
			return nil
		}
	case c == 'f':
		if p.literal("false") {
			return nil
		}
	case c == 'n':
		if p.literal("null") {
			return nil
		}
	case c == '{' || c == '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		if err := p.enter(); err != nil {
			return err
		}
		for more := !p.empty(closing); more; {
			p.skipWS()
			if c == '{' {
				if !p.at('"') {
					return p.unexpected()
				}
				if _, err := p.stringTmp(); err != nil {
					return err
				}
				if !p.colon() {
					return p.unexpected()
				}
			}
			if err := p.skipValue(); err != nil {
				return err
			}
			var ok bool
			if more, ok = p.next(closing); !ok {
				return p.unexpected()
			}
		}
		p.depth--
		return nil
	}
	return p.unexpected()
}

// The steps of the parse loops below (enter, open, empty, close, colon,
// next, at) are each small enough for the compiler to inline (go build
// -gcflags=-m): they run for every member of every value, the decoder's
// hot path (BenchmarkDecodeJSON).

// enter moves into the object or array at p.pos (its opening byte) and
// past the whitespace after it, one level deeper.
func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.syntax("nesting too deep")
	}
	p.pos++
	p.skipWS()
	return nil
}

// open enters a struct, list or map value and records its tape header
// at hdr (also on an error, which ends the parse); close completes it.
func (p *jsonParser) open(header entry) (hdr int, err error) {
	err = p.enter()
	p.tape = append(p.tape, header)
	return len(p.tape) - 1, err
}

// empty moves past closing when it comes first: the object or array just
// entered is empty.
func (p *jsonParser) empty(closing byte) bool {
	if p.at(closing) {
		p.pos++
		return true
	}
	return false
}

// close records the end of the value whose tape header is at hdr and
// leaves its level.
func (p *jsonParser) close(hdr int) {
	p.tape[hdr].i = int64(len(p.tape))
	p.depth--
}

// colon moves past the ':' after an object's key and the whitespace
// around it; false means something else comes (p.unexpected says what).
func (p *jsonParser) colon() bool {
	p.skipWS()
	if !p.at(':') {
		return false
	}
	p.pos++
	p.skipWS()
	return true
}

// next moves past the whitespace and the ',' or the closing byte after a
// member of an object or an array. more reports a ',' (the loop skips the
// whitespace after it: a second skipWS here would stop next from being
// inlined); ok is false when neither comes (p.unexpected says what).
func (p *jsonParser) next(closing byte) (more, ok bool) {
	p.skipWS()
	if p.pos >= len(p.in) {
		return false, false
	}
	c := p.in[p.pos]
	if c != ',' && c != closing {
		return false, false
	}
	p.pos++
	return c == ',', true
}

// at reports whether c is the byte at p.pos.
func (p *jsonParser) at(c byte) bool { return p.pos < len(p.in) && p.in[p.pos] == c }

// scanString checks the string at p.pos (at its opening quote) and moves
// past it. It returns the raw contents and whether they hold escapes.
func (p *jsonParser) scanString() (raw []byte, escaped bool, err error) {
	start := p.pos + 1
	i := start
	ascii := true
	for i < len(p.in) {
		c := p.in[i]
		switch {
		case c == '"':
			raw = p.in[start:i]
			if !ascii && !utf8.Valid(raw) {
				p.pos = start
				return nil, false, p.syntax("string is not valid UTF-8")
			}
			p.pos = i + 1
			return raw, escaped, nil
		case c == '\\':
			escaped = true
			i += 2
		case c < 0x20:
			p.pos = i
			return nil, false, p.syntax("control character in string")
		default:
			if c >= 0x80 {
				ascii = false
			}
			i++
		}
	}
	p.pos = len(p.in)
	return nil, false, p.syntax("unterminated string")
}

// unescape appends the decoded contents of raw (a string's contents with
// escapes) to dst.
func (p *jsonParser) unescape(dst, raw []byte, at int) ([]byte, error) {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			return nil, &syntaxError{pos: at + i, msg: "invalid escape"}
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			dst = append(dst, raw[i+1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(raw[i+2:])
			if !ok {
				return nil, &syntaxError{pos: at + i, msg: "invalid \\u escape"}
			}
			i += 6
			if utf16.IsSurrogate(r) {
				var r2 rune = -1
				if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2, ok = hex4(raw[i+2:])
					if !ok {
						return nil, &syntaxError{pos: at + i, msg: "invalid \\u escape"}
					}
				}
				dec := utf16.DecodeRune(r, r2)
				if dec == utf8.RuneError {
					return nil, &syntaxError{pos: at + i - 6, msg: "lone UTF-16 surrogate in \\u escape"}
				}
				r = dec
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return nil, &syntaxError{pos: at + i, msg: "invalid escape"}
		}
		i += 2
	}
	return dst, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// stringTmp parses a string and returns its decoded contents, valid until
// the next call (they may live in p.tmp).
func (p *jsonParser) stringTmp() ([]byte, error) {
	at := p.pos + 1
	raw, escaped, err := p.scanString()
	if err != nil || !escaped {
		return raw, err
	}
	p.tmp, err = p.unescape(p.tmp[:0], raw, at)
	return p.tmp, err
}

// stringEntry parses a string and records it as a tBytes tape entry.
func (p *jsonParser) stringEntry() ([]byte, error) {
	at := p.pos + 1
	raw, escaped, err := p.scanString()
	if err != nil {
		return nil, err
	}
	if !escaped {
		p.tape = append(p.tape, entry{kind: tBytes, off: int32(at), n: int32(len(raw))})
		return raw, nil
	}
	off := len(p.scratch)
	if p.scratch, err = p.unescape(p.scratch, raw, at); err != nil {
		return nil, err
	}
	p.tape = append(p.tape, entry{kind: tBytes, scratch: true, off: int32(off), n: int32(len(p.scratch) - off)})
	return p.scratch[off:], nil
}
