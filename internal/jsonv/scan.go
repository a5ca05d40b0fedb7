package jsonv

import (
	"unsafe"

	"github.com/tidwall/gjson"
)

// Text is the source of one JSON value inside input that Validate accepted. Reading a snapshot
// through Text instead of a tree costs one scan of the bytes it skips and no allocation: a reconcile
// needs a few fields of each pod, and a tree of every pod was most of its time and memory.
type Text string

// Validate checks data as Parse does (depth, then syntax) without building anything, and returns it
// as Text for the scanning functions below.
func Validate(data []byte) (Text, error) {
	return validate(data, nil)
}

// ValidateMembers is Validate that also returns where each member of the value starts in t (Member's
// and MemberAt's i), when the value is an object, found in the same pass: a reader of an object's
// members need not skip what was validated (the host tells a snapshot from a List by its top-level keys,
// past megabytes of pods).
func ValidateMembers(data []byte) (t Text, members []int, err error) {
	var tops []int
	if t, err = validate(data, &tops); err != nil || len(t) == 0 || t[0] != '{' {
		return t, nil, err
	}
	lead := ws(data, 0) // t is data less its leading blanks
	for k := range tops {
		tops[k] -= lead
	}
	return t, tops, nil
}

func validate(data []byte, tops *[]int) (Text, error) {
	if !valid(data, tops) {
		// the two-pass check, for the same errors as Parse
		if err := checkDepth(data); err != nil {
			return "", err
		}
		if len(data) == 0 || !gjson.ValidBytes(data) {
			return "", diagnose(data)
		}
		return "", &SyntaxError{Msg: "invalid JSON"} // the validators disagree: never seen (FuzzJSON)
	}
	end := len(data)
	for end > 0 && (data[end-1] == ' ' || data[end-1] == '\t' || data[end-1] == '\n' || data[end-1] == '\r') {
		end--
	}
	t := Text(unsafe.String(&data[0], end))
	return t[skipWS(t, 0):], nil
}

// Kind is the JSON type of the value.
func (t Text) Kind() Kind {
	switch t[0] {
	case '{':
		return Object
	case '[':
		return Array
	case '"':
		return String
	case 't', 'f':
		return Bool
	case 'n':
		return Null
	}
	return Number
}

// Value builds the value's tree. Its strings point into the input, which the caller keeps alive
// for as long as the tree (the guest's -gc=leaking build never collects; Go's collector handles
// interior pointers).
func (t Text) Value() Value {
	b := builder{s: string(t)}
	return b.value()
}

// Members calls fn with each member of an object in order (duplicates included: the last one is the
// one Go's decoder keeps). Keys are unescaped.
func (t Text) Members(fn func(key string, val Text)) {
	for i := t.FirstMember(); ; {
		key, val, next, ok := t.Member(i)
		if !ok {
			return
		}
		fn(key, val)
		i = next
	}
}

// Items calls fn with each element of an array in order.
func (t Text) Items(fn func(i int, val Text)) {
	for n, i := 0, t.FirstItem(); ; n++ {
		val, next, ok := t.Item(i)
		if !ok {
			return
		}
		fn(n, val)
		i = next
	}
}

// FirstMember and Member walk the members of an object as Members does, without a callback or an iterator
// to point to: under TinyGo what a closure captures, or a method's receiver, lives on the heap, and a
// snapshot's decode reads every pod's fields this way. Member is the member at i (FirstMember, or the
// next of the previous member) and where the next one starts; ok is false past the last. An absent object
// ("") has no members.
func (t Text) FirstMember() int { return skipWS(t, 1) }

// Member: see FirstMember.
func (t Text) Member(i int) (key string, val Text, next int, ok bool) {
	if i >= len(t) || t[i] == '}' {
		return "", "", i, false
	}
	end, plain := skipKey(t, i)
	if key = string(t[i+1 : end-1]); !plain {
		key = unquote(string(t[i:end]))
	}
	i = skipWS(t, end)
	i = skipWS(t, i+1) // ':'
	vend := skipValue(t, i)
	val = t[i:vend]
	if i = skipWS(t, vend); t[i] == ',' {
		i = skipWS(t, i+1)
	}
	return key, val, i, true
}

// MemberAt is Member without the value: the key of the member at i and where its value starts in t, for
// a reader that reads the value and finds its end in one scan (MembersInto's end, ValueEnd); the next
// member is at MemberAfter(that end). ok is false past the last member.
func (t Text) MemberAt(i int) (key string, val int, ok bool) {
	if i >= len(t) || t[i] == '}' {
		return "", i, false
	}
	end, plain := skipKey(t, i)
	if key = string(t[i+1 : end-1]); !plain {
		key = unquote(string(t[i:end]))
	}
	i = skipWS(t, end)
	return key, skipWS(t, i+1), true // past ':'
}

// MemberAfter is where the member after the one whose value ends at end starts (see MemberAt).
func (t Text) MemberAfter(end int) int { return t.ItemAfter(end) }

// FirstItem and Item walk the elements of an array as Items does, without a callback (FirstMember). An
// absent array ("") has no elements.
func (t Text) FirstItem() int { return skipWS(t, 1) }

// Item: see FirstItem.
func (t Text) Item(i int) (val Text, next int, ok bool) {
	if i >= len(t) || t[i] == ']' {
		return "", i, false
	}
	end := skipValue(t, i)
	val = t[i:end]
	if i = skipWS(t, end); t[i] == ',' {
		i = skipWS(t, i+1)
	}
	return val, i, true
}

func skipWS(t Text, i int) int {
	for i < len(t) {
		switch t[i] {
		case ' ':
			i = spacesEnd(t, i+1)
		case '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string literal starting at i.
func skipString(t Text, i int) int {
	for i++; ; i++ {
		i = stringStop(t, i)
		switch t[i] {
		case '"':
			return i + 1
		case '\\':
			i++ // the escaped byte
		}
	}
}

// skipKey is skipString for a member's key, which it also reports plain (no escape, only ASCII: unquote
// would return it as it is), so that a key is read in one pass.
func skipKey(t Text, i int) (end int, plain bool) {
	plain = true
	for i++; ; i++ {
		i = keyStop(t, i)
		switch c := t[i]; {
		case c == '"':
			return i + 1, plain
		case c == '\\':
			i++ // the escaped byte
			plain = false
		case c >= 0x80:
			plain = false
		}
	}
}

// skipValue returns the index after the value starting at i. A container is skipped in one loop that
// passes over eight bytes at a time up to the next structural byte (structuralStop): skipping is most of
// what reading a snapshot's text costs in the module (each pod's members are skipped as values, then their
// own members).
func skipValue(t Text, i int) int {
	switch t[i] {
	case '"':
		return skipString(t, i)
	case '{', '[':
		depth := 0
		for {
			i = structuralStop(t, i)
			switch t[i] {
			case '"':
				i = skipString(t, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(t) {
		switch t[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// structural marks the bytes skipValue stops at inside a container (Validate accepted the input: every
// container closes, every string ends).
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// Str is the decoded string, or "" when t is not a string. It points into the input unless the
// string has escapes.
func (t Text) Str() string {
	if t == "" || t[0] != '"' {
		return ""
	}
	return unquote(string(t))
}

// MembersInto sets out[i] to the last occurrence of keys[i] in the object t ("" when absent), and returns
// the index in t after the object: t may go on past it (ItemRest), so that an array's element is read
// without a scan of its own to find where it ends.
func (t Text) MembersInto(keys []string, out []Text) int {
	i := t.FirstMember()
	for {
		k, v, next, ok := t.Member(i)
		if !ok {
			return i + 1
		}
		for j, want := range keys {
			if k == want {
				out[j] = v
			}
		}
		i = next
	}
}

// ItemRest is the array from the element at i (FirstItem, or ItemAfter the previous) to its end, for a
// reader that finds where the element ends itself; ok is false past the last element.
func (t Text) ItemRest(i int) (rest Text, ok bool) {
	if i >= len(t) || t[i] == ']' {
		return "", false
	}
	return t[i:], true
}

// ItemAfter is where the element after the one ending at end starts (see ItemRest).
func (t Text) ItemAfter(end int) int {
	i := skipWS(t, end)
	if t[i] == ',' {
		i = skipWS(t, i+1)
	}
	return i
}

// ValueEnd is the index in t after the value t starts with (t may go on past it: ItemRest).
func (t Text) ValueEnd() int { return skipValue(t, 0) }
