package export

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The limits a .npy header is held to before anything it claims is
// allocated. numpy's own reader refuses headers longer than 10000 bytes
// (numpy.lib.format, max_header_size); an array of more than 2⁴⁰ elements
// (8 TB of float64) is no file of ours.
const (
	maxHeaderLen = 1 << 16
	maxElements  = 1 << 40
)

// npyHeader is what a .npy header declares (numpy.lib.format, NEP 1).
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int
	size    int // elements: the product of shape
	length  int // bytes of the header, magic string to the data
}

// itemSize is the bytes of one element of the data types ReadNPY reads,
// 0 for any other.
func itemSize(descr string) int {
	switch descr {
	case "<f8", "<i8":
		return 8
	case "|b1":
		return 1
	}
	return 0
}

// readHeader reads and checks a .npy header: the magic string, a version
// 1.0 (2-byte header length), 2.0 or 3.0 (4-byte), and the Python dict
// literal {'descr': …, 'fortran_order': …, 'shape': (…)} with exactly
// those keys, in any order.
func readHeader(r io.Reader) (npyHeader, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil || string(pre[:6]) != "\x93NUMPY" {
		return npyHeader{}, errors.New("not a .npy file (no \\x93NUMPY magic string)")
	}
	lenBytes := 4
	switch pre[6] {
	case 1:
		lenBytes = 2
	case 2, 3:
	default:
		return npyHeader{}, fmt.Errorf(".npy format version %d.%d, want 1.0, 2.0 or 3.0", pre[6], pre[7])
	}
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:lenBytes]); err != nil {
		return npyHeader{}, errors.New("the .npy header is cut short")
	}
	n := int(binary.LittleEndian.Uint32(lb[:]))
	if n > maxHeaderLen {
		return npyHeader{}, fmt.Errorf("the .npy header claims %d bytes, more than the %d allowed", n, maxHeaderLen)
	}
	dict := make([]byte, n)
	if got, err := io.ReadFull(r, dict); err != nil {
		return npyHeader{}, fmt.Errorf("the .npy header is cut short: %d of the %d bytes it claims", got, n)
	}
	h, err := parseDict(string(dict))
	if err != nil {
		return npyHeader{}, fmt.Errorf("the .npy header %s: %w", strconv.Quote(truncate(string(dict), 80)), err)
	}
	h.length = 8 + lenBytes + n
	return h, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// parseDict parses the header's dict literal, which may be followed by
// spaces and a newline (numpy pads the header with them).
func parseDict(s string) (npyHeader, error) {
	p := &dictParser{s: s}
	var h npyHeader
	seen := map[string]bool{}
	p.expect('{')
	for p.err == nil && !p.peek('}') {
		key := p.str()
		p.expect(':')
		if p.err != nil {
			break
		}
		if seen[key] {
			return h, fmt.Errorf("key %q appears twice", key)
		}
		seen[key] = true
		switch key {
		case "descr":
			h.descr = p.str()
		case "fortran_order":
			h.fortran = p.boolean()
		case "shape":
			h.shape = p.tuple()
		default:
			return h, fmt.Errorf("unknown key %q, want 'descr', 'fortran_order' and 'shape'", key)
		}
		if !p.peek('}') {
			p.expect(',')
		}
	}
	p.expect('}')
	if p.err != nil {
		return h, p.err
	}
	if rest := strings.TrimRight(p.s[p.i:], " \n"); rest != "" {
		return h, fmt.Errorf("%q after the dict", truncate(rest, 20))
	}
	if !seen["descr"] || !seen["fortran_order"] || !seen["shape"] {
		return h, errors.New("want the keys 'descr', 'fortran_order' and 'shape'")
	}
	h.size = 1
	for _, d := range h.shape {
		if d > maxElements || h.size*d > maxElements { // h.size ≤ 2⁴⁰ and d ≤ 2⁴⁰: no overflow
			return h, fmt.Errorf("the shape %v has more than 2^40 elements", h.shape)
		}
		h.size *= d
	}
	return h, nil
}

// dictParser reads the Python literals of a .npy header. Its first
// error sticks.
type dictParser struct {
	s   string
	i   int
	err error
}

func (p *dictParser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// peek skips spaces and reports whether the next byte is c.
func (p *dictParser) peek(c byte) bool {
	p.space()
	return p.err == nil && p.i < len(p.s) && p.s[p.i] == c
}

func (p *dictParser) fail(want string) {
	if p.err == nil {
		p.err = fmt.Errorf("want %s at byte %d", want, p.i)
	}
}

func (p *dictParser) expect(c byte) {
	if !p.peek(c) {
		p.fail(strconv.QuoteRune(rune(c)))
		return
	}
	p.i++
}

// str reads a string in single or double quotes, without escapes.
func (p *dictParser) str() string {
	p.space()
	if p.err != nil || p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		p.fail("a quoted string")
		return ""
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 || strings.ContainsRune(p.s[p.i+1:p.i+1+end], '\\') {
		p.fail("a string without escapes")
		return ""
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v
}

func (p *dictParser) boolean() bool {
	p.space()
	for _, w := range []string{"True", "False"} {
		if p.err == nil && strings.HasPrefix(p.s[p.i:], w) {
			p.i += len(w)
			return w == "True"
		}
	}
	p.fail("True or False")
	return false
}

// tuple reads a tuple of whole numbers ≥ 0: (), (3,), (2, 3) or (2, 3,);
// Python 2's long suffix L is allowed, as numpy allows it.
func (p *dictParser) tuple() []int {
	p.expect('(')
	shape := []int{}
	for p.err == nil && !p.peek(')') {
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		d, err := strconv.Atoi(p.s[start:p.i])
		if err != nil || p.i-start > 15 {
			p.fail("a dimension 0 to 10^15")
			break
		}
		if p.i < len(p.s) && p.s[p.i] == 'L' {
			p.i++
		}
		shape = append(shape, d)
		if p.peek(')') {
			break
		}
		p.expect(',')
	}
	p.expect(')')
	if p.err == nil && len(shape) > 32 {
		p.err = fmt.Errorf("%d dimensions, numpy allows at most 32", len(shape))
	}
	return shape
}
