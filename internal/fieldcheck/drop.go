package fieldcheck

import (
	"bytes"
	"encoding/json"
)

// Drop returns doc (the JSON document Check, then In, found us in) without those fields, every other byte
// as it was: how kube-apiserver stores an object under fieldValidation Warn or Ignore, and without turning
// the rest of a snapshot into other bytes (a ControllerRevision's data is compared byte for byte). A field
// whose path could not be followed is left. doc is returned as it is when there is nothing to drop.
func Drop(doc []byte, us []Unknown) []byte {
	out, cloned := doc, false
	for _, u := range us {
		if len(u.keys) == 0 {
			continue
		}
		if i := find(out, u.keys[:len(u.keys)-1]); i >= 0 {
			if out[i] == '{' {
				if !cloned {
					out, cloned = bytes.Clone(doc), true // the caller's bytes are never written
				}
				out = dropMember(out, i, u.keys[len(u.keys)-1].(string))
			}
		}
	}
	return out
}

// find returns the offset in doc of the value at keys, or -1.
func find(doc []byte, keys []any) int {
	i := skipWS(doc, 0)
	for _, k := range keys {
		if i >= len(doc) {
			return -1
		}
		switch k := k.(type) {
		case string:
			if doc[i] != '{' {
				return -1
			}
			found := -1
			members(doc, i, func(key string, _, valStart, _ int) bool {
				if key == k {
					found = valStart // a key given twice: the last, as JSON decoders keep
				}
				return true
			})
			i = found
		case int:
			if doc[i] != '[' {
				return -1
			}
			found, n := -1, 0
			items(doc, i, func(start int) bool {
				if n == k {
					found = start
					return false
				}
				n++
				return true
			})
			i = found
		}
		if i < 0 {
			return -1
		}
	}
	return i
}

// dropMember removes every member named key from the object at doc[obj], with the comma that separates it.
func dropMember(doc []byte, obj int, key string) []byte {
	for {
		type span struct{ start, end int }
		var cut span
		prevEnd, found := -1, false
		members(doc, obj, func(k string, keyStart, _, valEnd int) bool {
			if k != key {
				prevEnd = valEnd
				return true
			}
			found = true
			if next := skipWS(doc, valEnd); next < len(doc) && doc[next] == ',' { // not the last member: up to the next key
				cut = span{keyStart, skipWS(doc, next+1)}
			} else if prevEnd >= 0 { // the last of several: from the comma after the one before
				cut = span{prevEnd, valEnd}
			} else { // the only one
				cut = span{keyStart, valEnd}
			}
			return false
		})
		if !found {
			return doc
		}
		doc = append(doc[:cut.start], doc[cut.end:]...)
	}
}

// members calls fn for each member of the object at doc[i] (its key, where the key starts, where its value
// starts and ends) until fn returns false.
func members(doc []byte, i int, fn func(key string, keyStart, valStart, valEnd int) bool) {
	i = skipWS(doc, i+1)
	for i < len(doc) && doc[i] == '"' {
		keyStart := i
		keyEnd := skipString(doc, i)
		var key string
		if json.Unmarshal(doc[keyStart:keyEnd], &key) != nil {
			return
		}
		i = skipWS(doc, keyEnd)
		if i >= len(doc) || doc[i] != ':' {
			return
		}
		valStart := skipWS(doc, i+1)
		valEnd := skipValue(doc, valStart)
		if !fn(key, keyStart, valStart, valEnd) {
			return
		}
		i = skipWS(doc, valEnd)
		if i >= len(doc) || doc[i] != ',' {
			return
		}
		i = skipWS(doc, i+1)
	}
}

// items calls fn with where each item of the array at doc[i] starts, until fn returns false.
func items(doc []byte, i int, fn func(start int) bool) {
	i = skipWS(doc, i+1)
	if i >= len(doc) || doc[i] == ']' {
		return
	}
	for i < len(doc) {
		if !fn(i) {
			return
		}
		i = skipWS(doc, skipValue(doc, i))
		if i >= len(doc) || doc[i] != ',' {
			return
		}
		i = skipWS(doc, i+1)
	}
}

func skipWS(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the string that starts at doc[i].
func skipString(doc []byte, i int) int {
	for i++; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(doc)
}

// skipValue returns the offset just past the value that starts at doc[i] (valid JSON).
func skipValue(doc []byte, i int) int {
	if i >= len(doc) {
		return i
	}
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		depth := 0
		for ; i < len(doc); i++ {
			switch doc[i] {
			case '"':
				i = skipString(doc, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(doc)
	}
	for i < len(doc) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(doc[i])) {
		i++
	}
	return i
}
