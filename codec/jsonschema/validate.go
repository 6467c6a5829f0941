package jsonschema

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"strconv"
	"strings"
	"sync"

	js "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/minkhq/mink/codec/wire"
)

// Union is an anyOf or oneOf of two or more schemas other than null,
// which Convert maps to a struct with one optional field per branch.
type Union struct {
	// Path is the union's field path in the converted type: field names,
	// "element" for a list element, "value" for a map value, a branch's
	// name inside a branch; empty for the top level.
	Path []string
	// OneOf: exactly one branch must validate; else (anyOf) at least one.
	OneOf    bool
	Branches []Branch
}

// Kind is "oneOf" or "anyOf".
func (u *Union) Kind() string {
	if u.OneOf {
		return "oneOf"
	}
	return "anyOf"
}

// Branch is one schema of a Union other than null.
type Branch struct {
	Name string // the field of the union's struct that holds its values
	doc  *doc
	node *node
	sch  *js.Schema // compiled by NewValidator
}

// Validator checks JSON values against a registry JSON Schema with
// github.com/santhosh-tekuri/jsonschema/v6 (drafts 04 to 2020-12; draft-07
// when the schema has no $schema, as the Confluent registry's
// json.schema.spec.version default). Formats and content encodings are
// annotations, as the drafts say by default; the decoder checks the
// formats it maps to a type itself.
type Validator struct {
	root   *js.Schema
	unions []Union
}

// rootURL is where the registry schema is, for the validator: reference
// names resolve against it (unless the schema's $id says otherwise).
const rootURL = "mink:///schema.json"

// NewValidator compiles the registry JSON Schema s (with its references)
// for Validate, and the branches of its unions for Union.Match. It fails
// where Convert fails, and on what the validator cannot compile (a
// pattern Go's regexp package refuses, a $ref that resolves nowhere).
// It never reads a file or the network: a $ref reaches only the
// schema's references.
func NewValidator(s *wire.Schema) (*Validator, error) {
	if s == nil {
		return nil, errors.New("no schema")
	}
	_, c, err := convert(s)
	if err != nil {
		return nil, err
	}
	comp := js.NewCompiler()
	comp.DefaultDraft(js.Draft7)
	l := refLoader{}
	bases := []*url.URL{mustParse(rootURL)}
	if c.root.base != nil && c.root.base.IsAbs() {
		bases = append(bases, c.root.base)
	}
	addRefs(l, bases, s.References)
	comp.UseLoader(l)
	doc, err := js.UnmarshalJSON(strings.NewReader(s.Text))
	if err != nil {
		return nil, fmt.Errorf("schema %d: %w", s.ID, err)
	}
	if err := comp.AddResource(rootURL, doc); err != nil {
		return nil, fmt.Errorf("schema %d: %w", s.ID, err)
	}
	root, err := comp.Compile(rootURL)
	if err != nil {
		return nil, fmt.Errorf("schema %d: the validator refuses it: %w", s.ID, err)
	}
	v := &Validator{root: root, unions: c.unions}
	for i := range v.unions {
		for j := range v.unions[i].Branches {
			b := &v.unions[i].Branches[j]
			loc := rootURL
			if b.doc.name != "" {
				loc = mustParse(rootURL).ResolveReference(mustParse(b.doc.name)).String()
			}
			loc += "#" + pointerOf(b.doc.root, b.node)
			if b.sch, err = comp.Compile(loc); err != nil {
				return nil, fmt.Errorf("schema %d: branch %s: the validator refuses it: %w", s.ID, b.Name, err)
			}
		}
	}
	return v, nil
}

func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		return &url.URL{Path: s}
	}
	return u
}

// refLoader gives the validator the schema references, by the URLs a
// $ref may resolve to; any other URL is an error (no file, no network).
type refLoader map[string]string

func addRefs(l refLoader, bases []*url.URL, refs []wire.Reference) {
	for _, r := range refs {
		if _, seen := l[r.Name]; seen {
			continue
		}
		l[r.Name] = r.Schema.Text
		for _, b := range bases {
			l[b.ResolveReference(mustParse(r.Name)).String()] = r.Schema.Text
		}
		addRefs(l, bases, r.Schema.References)
	}
}

func (l refLoader) Load(u string) (any, error) {
	text, ok := l[u]
	if !ok {
		for name, t := range l {
			if strings.HasSuffix(u, "/"+name) {
				text, ok = t, true
				break
			}
		}
	}
	if !ok {
		return nil, errors.New("no such schema reference (the registry schema's references name none)")
	}
	return js.UnmarshalJSON(strings.NewReader(text))
}

// pointerOf returns the JSON pointer of target within n ("" for n).
func pointerOf(n, target *node) string {
	var b strings.Builder
	if find(n, target, &b) {
		return b.String()
	}
	return ""
}

func find(n, target *node, b *strings.Builder) bool {
	if n == target {
		return true
	}
	mark := b.Len()
	step := func(tok string, c *node) bool {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1"))
		if find(c, target, b) {
			return true
		}
		s := b.String()[:mark]
		b.Reset()
		b.WriteString(s)
		return false
	}
	for i, k := range n.keys {
		if step(k, n.vals[i]) {
			return true
		}
	}
	for i, e := range n.elems {
		if step(strconv.Itoa(i), e) {
			return true
		}
	}
	return false
}

// Unions returns the unions of the schema, in the pre-order of Convert.
func (v *Validator) Unions() []Union { return v.unions }

// Validate checks the JSON value doc against the whole schema. The error
// names where the value breaks it, as JSON pointers, up to 3 places:
// `the writer schema rejects it: at /customer: additional properties
// 'zip' not allowed`.
func (v *Validator) Validate(doc []byte) error {
	val, err := js.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	if err := v.root.Validate(val); err != nil {
		return fmt.Errorf("the writer schema rejects it: %s", reason(err))
	}
	return nil
}

// Match returns the indexes of the branches of u that the JSON value doc
// validates against, in order.
func (u *Union) Match(doc []byte) ([]int, error) {
	val, err := js.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	var ok []int
	for i, b := range u.Branches {
		if b.sch.Validate(val) == nil {
			ok = append(ok, i)
		}
	}
	return ok, nil
}

var printer = message.NewPrinter(language.English)

// maxReasons bounds the places a rejection names.
const maxReasons = 3

// reason lists the innermost failures of a validation error.
func reason(err error) string {
	var ve *js.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var leaves []string
	n := 0
	var walk func(e *js.ValidationError)
	walk = func(e *js.ValidationError) {
		if len(e.Causes) == 0 {
			n++
			if len(leaves) < maxReasons {
				at := "/" + strings.Join(escapeAll(e.InstanceLocation), "/")
				leaves = append(leaves, "at "+at+": "+e.ErrorKind.LocalizedString(printer))
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	s := strings.Join(leaves, "; ")
	if n > len(leaves) {
		s += fmt.Sprintf("; and %d more", n-len(leaves))
	}
	return s
}

func escapeAll(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
	}
	return out
}

// maxCached bounds the validators Cached keeps; past it, the cache starts
// over (a table meets few writer schemas; a build compiles its writers'
// validators again only after that).
const maxCached = 256

var cache struct {
	sync.Mutex
	m map[[sha256.Size]byte]cached
}

type cached struct {
	v   *Validator
	err error
}

// Cached is NewValidator, compiled once per schema text and references
// (a compile takes milliseconds, and every build of a range decodes with
// its writers' validators). A Validator is safe for concurrent use.
func Cached(s *wire.Schema) (*Validator, error) {
	if s == nil {
		return NewValidator(s)
	}
	h := sha256.New()
	hashSchema(h, s)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	cache.Lock()
	c, ok := cache.m[k]
	cache.Unlock()
	if ok {
		return c.v, c.err
	}
	c.v, c.err = NewValidator(s)
	cache.Lock()
	if cache.m == nil || len(cache.m) >= maxCached {
		cache.m = map[[sha256.Size]byte]cached{}
	}
	cache.m[k] = c
	cache.Unlock()
	return c.v, c.err
}

// hashSchema writes s's id, text and references, each length-prefixed.
func hashSchema(h hash.Hash, s *wire.Schema) {
	put := func(str string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(str)))
		h.Write(n[:])
		h.Write([]byte(str))
	}
	put(strconv.Itoa(s.ID))
	put(s.Text)
	put(strconv.Itoa(len(s.References)))
	for _, r := range s.References {
		put(r.Name)
		hashSchema(h, &r.Schema)
	}
}
