package codec

import (
	"encoding/base64"
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Scalar conversions (docs/design.md §4.2): a JSON value converts to its column
// type only without loss.
//
//	boolean            true / false
//	int, long          a JSON number whose value is an integer in range
//	                   (1, -7, 1.0, 2e3; not 1.5)
//	float, double      any JSON number; an integer literal must be exactly
//	                   representable (2^53+1 does not fit a double), and a
//	                   non-zero number must not round to zero (1e-400)
//	string             a JSON string; a JSON number or boolean becomes its
//	                   JSON text as written (1941, 1.50, 1e3, true), which
//	                   loses nothing; an object or array does not convert
//	timestamp[tz]      an RFC 3339 string (up to microsecond precision), or
//	                   a JSON number of MILLISECONDS since the Unix epoch
//	                   (the unit of Kafka timestamps and of the USGS feed;
//	                   fractions down to 1 µs are kept). timestamptz needs
//	                   a zone offset in the string; timestamp (without
//	                   zone) takes a string without offset as is, and one
//	                   with an offset converted to UTC.
//	date               "YYYY-MM-DD", or an integer number of days since
//	                   1970-01-01
//	time               "HH:MM:SS[.ffffff]" (microseconds since midnight)
//	binary, fixed[L]   a base64 string (standard alphabet, padded); fixed
//	                   needs exactly L bytes
//	uuid               the 36-character form 8-4-4-4-12 (hex digits)
//	decimal(P,S)       a JSON number or a string holding one, with at most
//	                   S digits after the point once trailing zeros are
//	                   dropped, and at most P digits in all

func (p *jsonParser) num(n *node, v int64) {
	p.tape = append(p.tape, entry{kind: tNum, i: v})
}

func (p *jsonParser) parseScalar(n *node, c byte) error {
	switch n.kind {
	case kBool:
		if p.literal("true") {
			p.num(n, 1)
			return nil
		}
		if p.literal("false") {
			p.num(n, 0)
			return nil
		}
	case kInt32, kInt64:
		if isNumberStart(c) {
			if v, ok := p.plainInt(n.kind == kInt32); ok {
				p.num(n, v)
				return nil
			}
			start := p.pos
			num, err := p.scanNumber()
			if err != nil {
				return err
			}
			bits := 64
			if n.kind == kInt32 {
				bits = 32
			}
			v, msg := p.integer(num, 0, bits)
			if msg != "" {
				p.pos = start
				return convErr("cannot convert number %s to %s: %s", num.lit, n.typeName(), msg)
			}
			p.num(n, v)
			return nil
		}
	case kFloat32, kFloat64:
		if isNumberStart(c) {
			num, err := p.scanNumber()
			if err != nil {
				return err
			}
			v, msg := toFloat(num, n.kind == kFloat32)
			if msg != "" {
				return convErr("cannot convert number %s to %s: %s", num.lit, n.typeName(), msg)
			}
			p.num(n, int64(math.Float64bits(v)))
			return nil
		}
	case kString:
		switch {
		case c == '"':
			_, err := p.stringEntry()
			return err
		case isNumberStart(c):
			start := p.pos
			if _, err := p.scanNumber(); err != nil {
				return err
			}
			p.tape = append(p.tape, entry{kind: tBytes, off: int32(start), n: int32(p.pos - start)})
			return nil
		case c == 't' || c == 'f':
			start := p.pos
			if p.literal("true") || p.literal("false") {
				p.tape = append(p.tape, entry{kind: tBytes, off: int32(start), n: int32(p.pos - start)})
				return nil
			}
		}
	case kBinary, kFixed:
		if c == '"' {
			s, err := p.stringTmp()
			if err != nil {
				return err
			}
			off := len(p.scratch)
			need := base64.StdEncoding.DecodedLen(len(s))
			p.scratch = grow(p.scratch, need)
			m, err := base64.StdEncoding.Decode(p.scratch[off:off+need], s)
			if err != nil {
				return convErr("cannot convert string to %s: invalid base64: %v", n.typeName(), err)
			}
			p.scratch = p.scratch[:off+m]
			if n.kind == kFixed && m != n.size {
				return convErr("cannot convert string to %s: %d bytes, want %d", n.typeName(), m, n.size)
			}
			p.tape = append(p.tape, entry{kind: tBytes, scratch: true, off: int32(off), n: int32(m)})
			return nil
		}
	case kUUID:
		if c == '"' {
			s, err := p.stringTmp()
			if err != nil {
				return err
			}
			off := len(p.scratch)
			p.scratch = grow(p.scratch, 16)
			if !parseUUID(p.scratch[off:off+16], s) {
				return convErr("cannot convert string %q to uuid", s)
			}
			p.tape = append(p.tape, entry{kind: tBytes, scratch: true, off: int32(off), n: 16})
			return nil
		}
	case kDate, kTime, kTimestamp, kTimestampTz:
		if c == '"' {
			s, err := p.stringTmp()
			if err != nil {
				return err
			}
			var v int64
			var msg string
			switch n.kind {
			case kDate:
				v, msg = parseDate(s)
			case kTime:
				v, msg = parseTime(s)
			default:
				v, msg = parseTimestamp(s, n.kind == kTimestampTz)
			}
			if msg != "" {
				return convErr("cannot convert string %q to %s: %s", s, n.typeName(), msg)
			}
			p.num(n, v)
			return nil
		}
		if isNumberStart(c) && n.kind != kTime {
			num, err := p.scanNumber()
			if err != nil {
				return err
			}
			shift, bits, unit := 0, 32, "days since 1970-01-01"
			if n.kind != kDate {
				// Epoch milliseconds → microseconds: shift the point by 3.
				shift, bits, unit = 3, 64, "milliseconds since the epoch"
			}
			v, msg := p.integer(num, shift, bits)
			if msg != "" {
				return convErr("cannot convert number %s to %s (%s): %s", num.lit, n.typeName(), unit, msg)
			}
			p.num(n, v)
			return nil
		}
	case kDecimal:
		var num number
		switch {
		case isNumberStart(c):
			var err error
			if num, err = p.scanNumber(); err != nil {
				return err
			}
		case c == '"':
			s, err := p.stringTmp()
			if err != nil {
				return err
			}
			var ok bool
			if num, ok = scanNumberIn(s); !ok {
				return convErr("cannot convert string %q to %s: not a number", s, n.typeName())
			}
		default:
			return p.mismatch(n)
		}
		v, msg := p.decimal(num, n.prec, n.scale)
		if msg != "" {
			return convErr("cannot convert %s to %s: %s", num.lit, n.typeName(), msg)
		}
		p.tape = append(p.tape, entry{kind: tNum, i: int64(v.LowBits()), hi: v.HighBits()})
		return nil
	}
	return p.mismatch(n)
}

// plainInt reads the integer literal at p.pos when it is a plain one, the
// form integer columns mostly hold: "0" or an optional minus and 1 to 18
// digits without a leading zero, not followed by a digit, '.', 'e' or 'E',
// and in range of an int (int32 when bits32). It moves past it and
// returns its value; for anything else it returns false and leaves the
// position where it was, for scanNumber and integer (which give the same
// value, or the error).
func (p *jsonParser) plainInt(bits32 bool) (int64, bool) {
	i := p.pos
	neg := i < len(p.in) && p.in[i] == '-'
	if neg {
		i++
	}
	start := i
	var u uint64
	for i < len(p.in) && i-start < 18 && p.in[i] >= '0' && p.in[i] <= '9' {
		u = u*10 + uint64(p.in[i]-'0')
		i++
	}
	if i == start || (i-start > 1 && p.in[start] == '0') {
		return 0, false
	}
	if i < len(p.in) {
		if c := p.in[i]; c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9') {
			return 0, false
		}
	}
	v := int64(u) // below 10^18
	if neg {
		v = -v
	}
	if bits32 && v != int64(int32(v)) {
		return 0, false
	}
	p.pos = i
	return v, true
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

func isNumberStart(c byte) bool { return c == '-' || (c >= '0' && c <= '9') }

// number is a scanned JSON number: value = (int frac) × 10^(exp - len(frac)),
// negated when neg.
type number struct {
	lit      []byte
	neg      bool
	int      []byte
	frac     []byte
	exp      int // clamped to ±1e6, enough to tell out-of-range values
	integral bool
}

func (p *jsonParser) scanNumber() (number, error) {
	num, end, ok := scanNumberAt(p.in, p.pos)
	if !ok {
		p.pos = end
		return num, p.syntax("invalid number")
	}
	p.pos = end
	return num, nil
}

// scanNumberIn scans a number that must fill all of s.
func scanNumberIn(s []byte) (number, bool) {
	num, end, ok := scanNumberAt(s, 0)
	return num, ok && end == len(s)
}

func scanNumberAt(in []byte, pos int) (num number, end int, ok bool) {
	start := pos
	if pos < len(in) && in[pos] == '-' {
		num.neg = true
		pos++
	}
	is := pos
	switch {
	case pos < len(in) && in[pos] == '0':
		pos++
	case pos < len(in) && in[pos] >= '1' && in[pos] <= '9':
		for pos < len(in) && in[pos] >= '0' && in[pos] <= '9' {
			pos++
		}
	default:
		return num, pos, false
	}
	num.int = in[is:pos]
	num.integral = true
	if pos < len(in) && in[pos] == '.' {
		pos++
		fs := pos
		for pos < len(in) && in[pos] >= '0' && in[pos] <= '9' {
			pos++
		}
		if pos == fs {
			return num, pos, false
		}
		num.frac = in[fs:pos]
		num.integral = false
	}
	if pos < len(in) && (in[pos] == 'e' || in[pos] == 'E') {
		pos++
		eneg := false
		if pos < len(in) && (in[pos] == '+' || in[pos] == '-') {
			eneg = in[pos] == '-'
			pos++
		}
		es := pos
		e := 0
		for pos < len(in) && in[pos] >= '0' && in[pos] <= '9' {
			if e < 1e6 {
				e = e*10 + int(in[pos]-'0')
			}
			pos++
		}
		if pos == es {
			return num, pos, false
		}
		if eneg {
			e = -e
		}
		num.exp = e
		num.integral = false
	}
	num.lit = in[start:pos]
	return num, pos, true
}

// digitsOf returns the significant digits of num × 10^shift and the
// power of ten they are multiplied by (value = digits × 10^e), with leading
// zeros dropped and trailing zeros folded into e. digits is empty for 0.
func (p *jsonParser) digitsOf(num number, shift int) (digits []byte, e int) {
	if len(num.frac) == 0 {
		digits = num.int
	} else {
		p.digits = append(append(p.digits[:0], num.int...), num.frac...)
		digits = p.digits
	}
	e = num.exp - len(num.frac) + shift
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		e++
	}
	return digits, e
}

// integer converts num × 10^shift to an integer of bits (32 or 64). It
// returns a reason when the value has a fraction or is out of range.
func (p *jsonParser) integer(num number, shift, bits int) (int64, string) {
	var digits []byte
	e := 0
	if num.integral && shift == 0 {
		digits = num.int // fast path: a plain integer literal
	} else {
		digits, e = p.digitsOf(num, shift)
		if len(digits) == 0 {
			return 0, ""
		}
		if e < 0 {
			return 0, "has a fraction"
		}
	}
	if len(digits)+e > 19 {
		return 0, "out of range"
	}
	var u uint64
	for _, c := range digits {
		u = u*10 + uint64(c-'0')
	}
	for ; e > 0; e-- {
		if u > math.MaxUint64/10 {
			return 0, "out of range"
		}
		u *= 10
	}
	limit := uint64(math.MaxInt64)
	if bits == 32 {
		limit = math.MaxInt32
	}
	if num.neg {
		limit++
	}
	if u > limit {
		return 0, "out of range"
	}
	if num.neg {
		return -int64(u-1) - 1, ""
	}
	return int64(u), ""
}

// toFloat converts num to a double (or a float when f32). An integer
// literal must convert exactly; a number beyond the type's range fails.
func toFloat(num number, f32 bool) (float64, string) {
	bits := 64
	if f32 {
		bits = 32
	}
	v, err := strconv.ParseFloat(string(num.lit), bits)
	if err != nil {
		return 0, "out of range"
	}
	if v == 0 && !isZero(num) {
		return 0, "out of range (rounds to zero)"
	}
	mantissa := 15
	if f32 {
		mantissa = 7
	}
	if num.integral && len(num.int) > mantissa {
		want, _ := new(big.Int).SetString(string(num.lit), 10)
		got, _ := new(big.Float).SetFloat64(v).Int(nil)
		if want.Cmp(got) != 0 {
			return 0, "integer is not exactly representable"
		}
	}
	return v, ""
}

// isZero reports whether all digits of num are 0.
func isZero(num number) bool {
	for _, d := range [2][]byte{num.int, num.frac} {
		for _, c := range d {
			if c != '0' {
				return false
			}
		}
	}
	return true
}

var ten = decimal128.FromU64(10)

// decimal converts num to the unscaled value of a decimal(prec, scale).
func (p *jsonParser) decimal(num number, prec, scale int) (decimal128.Num, string) {
	digits, e := p.digitsOf(num, scale)
	if len(digits) == 0 {
		return decimal128.Num{}, ""
	}
	if e < 0 {
		return decimal128.Num{}, "more than " + strconv.Itoa(scale) + " digits after the point"
	}
	if len(digits)+e > prec {
		return decimal128.Num{}, "more than " + strconv.Itoa(prec) + " digits"
	}
	var v decimal128.Num
	for _, c := range digits {
		v = v.Mul(ten).Add(decimal128.FromU64(uint64(c - '0')))
	}
	for ; e > 0; e-- {
		v = v.Mul(ten)
	}
	if num.neg {
		v = v.Negate()
	}
	return v, ""
}

func parseUUID(dst, s []byte) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[j] = hi<<4 | lo
		j++
		i += 2
	}
	return true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// atoi parses a fixed-width run of decimal digits.
func atoi(s []byte) (int, bool) {
	if len(s) == 0 {
		return 0, false
	}
	v := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// parseYMD parses YYYY-MM-DD at the start of s.
func parseYMD(s []byte) (y, m, d int, ok bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, false
	}
	y, ok1 := atoi(s[0:4])
	m, ok2 := atoi(s[5:7])
	d, ok3 := atoi(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// daysIn returns the number of days of month m (1–12) of year y in the
// proleptic Gregorian calendar.
func daysIn(y, m int) int {
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		return 29
	}
	return monthDays[m]
}

var monthDays = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// daysFromCivil returns the days from 1970-01-01 to the date y-m-d of the
// proleptic Gregorian calendar (what time.Date(...).Unix()/86400 gives,
// without its cost per value): H. Hinnant, "chrono-Compatible Low-Level
// Date Algorithms", days_from_civil.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400 // [0, 399]
	mp := (m + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy // [0, 146096]
	return int64(era)*146097 + int64(doe) - 719468
}

func parseDate(s []byte) (int64, string) {
	y, m, d, ok := parseYMD(s)
	if !ok || len(s) != 10 {
		return 0, "want YYYY-MM-DD"
	}
	return daysFromCivil(y, m, d), ""
}

// parseHMS parses HH:MM:SS[.fraction] at the start of s and returns the
// microseconds since midnight and the rest of s.
func parseHMS(s []byte) (us int64, rest []byte, msg string) {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return 0, nil, "want HH:MM:SS"
	}
	h, ok1 := atoi(s[0:2])
	mi, ok2 := atoi(s[3:5])
	sec, ok3 := atoi(s[6:8])
	if !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || sec > 59 {
		return 0, nil, "want HH:MM:SS"
	}
	us = (int64(h)*3600 + int64(mi)*60 + int64(sec)) * 1e6
	s = s[8:]
	if len(s) > 0 && s[0] == '.' {
		i := 1
		var frac int64
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if i <= 6 {
				frac = frac*10 + int64(s[i]-'0')
			} else if s[i] != '0' {
				return 0, nil, "finer than microseconds"
			}
		}
		if i == 1 {
			return 0, nil, "empty fraction of a second"
		}
		for k := i; k <= 6; k++ {
			frac *= 10
		}
		us += frac
		s = s[i:]
	}
	return us, s, ""
}

func parseTime(s []byte) (int64, string) {
	us, rest, msg := parseHMS(s)
	if msg != "" {
		return 0, msg
	}
	if len(rest) != 0 {
		return 0, "want HH:MM:SS[.ffffff]"
	}
	return us, ""
}

// parseTimestamp parses an RFC 3339 date-time (T, t or a space between
// date and time; Z, z or ±HH:MM) into microseconds since the epoch. The
// offset is required when tz; without tz a missing offset means the wall
// clock as is.
func parseTimestamp(s []byte, tz bool) (int64, string) {
	y, m, d, ok := parseYMD(s)
	if !ok || len(s) < 11 || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') {
		return 0, "want an RFC 3339 date-time"
	}
	us, rest, msg := parseHMS(s[11:])
	if msg != "" {
		return 0, msg
	}
	var offset int64 // seconds east of UTC
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := atoi(rest[1:3])
		om, ok2 := atoi(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, "invalid zone offset"
		}
		offset = int64(oh)*3600 + int64(om)*60
		if rest[0] == '-' {
			offset = -offset
		}
	case len(rest) == 0 && !tz:
	case len(rest) == 0:
		return 0, "missing zone offset (Z or ±HH:MM)"
	default:
		return 0, "want an RFC 3339 date-time"
	}
	days := daysFromCivil(y, m, d)
	return (days*86400-offset)*1e6 + us, ""
}
