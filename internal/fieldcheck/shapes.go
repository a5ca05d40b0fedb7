package fieldcheck

import (
	"hash/maphash"
	"reflect"
	"unsafe"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// Shapes is Check for many documents, most of them alike (the pods of a snapshot): a document whose shape
// (every key, in order, and the kind of every value: all that decides its unknown fields, not the values)
// is that of one found clean before is clean without being decoded. Decoding a pod costs twenty times
// scanning it. The zero value is ready; not safe for concurrent use.
type Shapes struct {
	seed  maphash.Seed
	clean map[uint64]bool
}

// Check is Check(doc, v), except that v is not decoded into when doc has a shape found clean before or
// names only fields of v's type (judge): err is Check's for a document decoded. v may
// be a nil pointer of the type to decode into ((*corev1.Pod)(nil)): one is allocated only when doc is
// decoded, so the thousands of clean pods of a snapshot allocate nothing.
func (s *Shapes) Check(doc []byte, v any) ([]Unknown, error) {
	h := s.hash(v)
	if end := shape(&h, doc, skipWS(doc, 0)); end < 0 {
		return Check(doc, allocated(v)) // not one JSON value: Check says why
	}
	if s.clean[h.Sum64()] {
		return nil, nil // no second reading of what a shape found clean before
	}
	t, err := jsonv.Validate(doc)
	if err != nil {
		t = "" // shape's walk is no validator: Check says why
	}
	return s.judge(h.Sum64(), doc, t, v)
}

// CheckValid is Check for the value t starts with, in text jsonv.Validate accepted that may go on past it
// (the next pod of a snapshot's list): end is where the value ends. The walk that reads its shape finds
// its end too, with jsonv's scanner, so a snapshot's pods are read once, not skipped as elements and
// then walked again.
func (s *Shapes) CheckValid(t jsonv.Text, v any) (us []Unknown, end int, err error) {
	h := s.hash(v)
	end = shapeValid(&h, t, 0)
	if s.clean[h.Sum64()] {
		return nil, end, nil
	}
	// Check only reads doc: t's bytes, not a copy of them (a pod decoded is one of a few shapes).
	doc := unsafe.Slice(unsafe.StringData(string(t)), end)
	us, err = s.judge(h.Sum64(), doc, t[:end], v)
	return us, end, err
}

// hash is a shape hash for documents decoded into v's type, with nothing of a document written yet.
func (s *Shapes) hash(v any) maphash.Hash {
	if s.clean == nil {
		s.seed, s.clean = maphash.MakeSeed(), map[uint64]bool{}
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(reflect.TypeOf(v).String())
	return h
}

// judge is Check(doc, v) for a document whose shape (key) was not found clean before, unless every key of
// doc is a field of v's type (allKnown: nothing is decoded then, so a value of the wrong type goes
// unreported: err is Check's for a document it decoded). Unlike Check, it reports the unknown fields of a document that does
// not decode (unknownPaths): Kubernetes objects' values are the module's to judge, their fields the host's.
// t is doc as jsonv.Validate accepted it, "" when it did not: the caller's validation, done once.
func (s *Shapes) judge(key uint64, doc []byte, t jsonv.Text, v any) ([]Unknown, error) {
	typ := reflect.TypeOf(v)
	if t != "" && allKnown(t, typ) {
		s.clean[key] = true
		return nil, nil
	}
	us, err := Check(doc, allocated(v))
	if err == nil && len(us) == 0 {
		s.clean[key] = true
	}
	if err != nil && t != "" { // a document that does not decode: its keys judged by their names alone
		us = unknownsAt(typ, unknownPaths(t, typ))
	}
	return us, err
}

// shapeValid is shape for valid text (jsonv.Validate's), walked with jsonv's scanner: what decides unknown
// fields as shape writes it, though not the same bytes (each key is written as its source text with what
// separates it from its value, which no value's mark can start), so the two never share a clean shape but
// for objects without keys, whose shapes are alike.
func shapeValid(h *maphash.Hash, t jsonv.Text, i int) int {
	switch t[i] {
	case '{':
		h.WriteByte('{')
		o := t[i:]
		j := o.FirstMember()
		for {
			_, v, ok := o.MemberAt(j)
			if !ok {
				break
			}
			h.WriteString(string(o[j:v]))
			j = o.MemberAfter(shapeValid(h, o, v))
		}
		h.WriteByte('}')
		return i + j + 1
	case '[':
		h.WriteByte('[')
		a := t[i:]
		j := a.FirstItem()
		for {
			if _, ok := a.ItemRest(j); !ok {
				break
			}
			j = a.ItemAfter(shapeValid(h, a, j))
		}
		h.WriteByte(']')
		return i + j + 1
	}
	mark, _ := scalarMark(t[i]) // valid text: a scalar
	h.WriteByte(mark)
	return i + t[i:].ValueEnd()
}

// shape writes the shape of the value at doc[i] to h and returns where the value ends, or -1 for what is
// not a JSON value.
func shape(h *maphash.Hash, doc []byte, i int) int {
	if i >= len(doc) {
		return -1
	}
	switch doc[i] {
	case '{':
		h.WriteByte('{')
		i = skipWS(doc, i+1)
		for i < len(doc) && doc[i] == '"' {
			end := skipString(doc, i)
			h.Write(doc[i:end])
			if i = skipWS(doc, end); i >= len(doc) || doc[i] != ':' {
				return -1
			}
			if i = shape(h, doc, skipWS(doc, i+1)); i < 0 {
				return -1
			}
			if i = skipWS(doc, i); i < len(doc) && doc[i] == ',' {
				i = skipWS(doc, i+1)
			}
		}
		if i >= len(doc) || doc[i] != '}' {
			return -1
		}
		h.WriteByte('}')
		return i + 1
	case '[':
		h.WriteByte('[')
		i = skipWS(doc, i+1)
		for i < len(doc) && doc[i] != ']' {
			if i = shape(h, doc, i); i < 0 {
				return -1
			}
			if i = skipWS(doc, i); i < len(doc) && doc[i] == ',' {
				i = skipWS(doc, i+1)
			}
		}
		if i >= len(doc) {
			return -1
		}
		h.WriteByte(']')
		return i + 1
	}
	mark, ok := scalarMark(doc[i])
	if !ok {
		return -1 // '}', ']', ',' where a value belongs
	}
	h.WriteByte(mark)
	if end := skipValue(doc, i); end > i {
		return end
	}
	return -1
}

// allocated is v, or a new value of its type when v is a nil pointer.
func allocated(v any) any {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return reflect.New(rv.Type().Elem()).Interface()
	}
	return v
}

// scalarMark is what a shape holds for the scalar starting with c (its kind), and false for what starts no
// value.
func scalarMark(c byte) (byte, bool) {
	switch c {
	case '"':
		return 's', true
	case 't', 'f':
		return 'b', true
	case 'n':
		return 'z', true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return '0', true
	}
	return 0, false
}
