package jsonv

import (
	"strings"
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
	if !valid(data) {
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
	i := skipWS(t, 1)
	if t[i] == '}' {
		return
	}
	for {
		end := skipString(t, i)
		key := unquote(string(t[i:end]))
		i = skipWS(t, end)
		i = skipWS(t, i+1) // ':'
		vend := skipValue(t, i)
		fn(key, t[i:vend])
		i = skipWS(t, vend)
		if t[i] == '}' {
			return
		}
		i = skipWS(t, i+1) // ','
	}
}

// Items calls fn with each element of an array in order.
func (t Text) Items(fn func(i int, val Text)) {
	i := skipWS(t, 1)
	if t[i] == ']' {
		return
	}
	for n := 0; ; n++ {
		end := skipValue(t, i)
		fn(n, t[i:end])
		i = skipWS(t, end)
		if t[i] == ']' {
			return
		}
		i = skipWS(t, i+1)
	}
}

func skipWS(t Text, i int) int {
	for i < len(t) {
		switch t[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string literal starting at i.
func skipString(t Text, i int) int {
	i++
	for {
		j := strings.IndexByte(string(t[i:]), '"')
		i += j
		// an escaped quote has an odd run of backslashes before it
		k := i - 1
		for t[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1
		}
		i++
	}
}

// skipValue returns the index after the value starting at i.
func skipValue(t Text, i int) int {
	switch t[i] {
	case '"':
		return skipString(t, i)
	case '{', '[':
		depth := 0
		for {
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

// Str is the decoded string, or "" when t is not a string. It points into the input unless the
// string has escapes.
func (t Text) Str() string {
	if t == "" || t[0] != '"' {
		return ""
	}
	return unquote(string(t))
}

// MembersInto sets out[i] to the last occurrence of keys[i] in the object t ("" when absent).
func (t Text) MembersInto(keys []string, out []Text) {
	t.Members(func(k string, v Text) {
		for i, want := range keys {
			if k == want {
				out[i] = v
			}
		}
	})
}
