// Package jsonv is a small JSON value tree for the guest: parsed with gjson (object keys kept in
// input order, numbers kept as their source text) and encoded with the rules of Go's
// encoding/json. It also produces the canonical bytes Go gives for json.Marshal of a
// map[string]interface{} decoded from the same JSON (used for revision hashing).
package jsonv

import "sort"

// Kind is the JSON type of a Value.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "unknown"
}

// Value is one JSON value. The zero Value is null.
// For Number, S holds the number's source text (valid JSON number syntax).
type Value struct {
	K Kind
	B bool
	S string
	A []Value
	O []Member
}

// Member is one key/value pair of an object.
type Member struct {
	Key string
	Val Value
}

// Constructors.
func NullV() Value             { return Value{} }
func BoolV(b bool) Value       { return Value{K: Bool, B: b} }
func Str(s string) Value       { return Value{K: String, S: s} }
func NumRaw(s string) Value    { return Value{K: Number, S: s} }
func Arr(items ...Value) Value { return Value{K: Array, A: append([]Value{}, items...)} }

// Int returns a number value for i.
func Int(i int64) Value { return Value{K: Number, S: itoa(i)} }

// Obj builds an object from alternating key, value pairs given as Members.
func Obj(members ...Member) Value { return Value{K: Object, O: append([]Member{}, members...)} }

// M is shorthand for a Member.
func M(key string, v Value) Member { return Member{Key: key, Val: v} }

// EmptyObj returns {}.
func EmptyObj() Value { return Value{K: Object, O: []Member{}} }

func (v Value) IsNull() bool   { return v.K == Null }
func (v Value) IsObject() bool { return v.K == Object }
func (v Value) IsArray() bool  { return v.K == Array }
func (v Value) IsString() bool { return v.K == String }

// Get returns the member value for key (the last one when a key repeats, as Go's decoder does)
// and whether it exists.
func (v Value) Get(key string) (Value, bool) {
	if v.K != Object {
		return Value{}, false
	}
	for i := len(v.O) - 1; i >= 0; i-- {
		if v.O[i].Key == key {
			return v.O[i].Val, true
		}
	}
	return Value{}, false
}

// G returns the member value for key or null.
func (v Value) G(key string) Value {
	r, _ := v.Get(key)
	return r
}

// Path follows keys through nested objects; null if any is missing.
func (v Value) Path(keys ...string) Value {
	cur := v
	for _, k := range keys {
		cur = cur.G(k)
	}
	return cur
}

// Has reports whether key exists in the object.
func (v Value) Has(key string) bool {
	_, ok := v.Get(key)
	return ok
}

// Set replaces the (last) member named key, or appends it.
func (v *Value) Set(key string, val Value) {
	if v.K != Object {
		*v = Value{K: Object}
	}
	for i := len(v.O) - 1; i >= 0; i-- {
		if v.O[i].Key == key {
			v.O[i].Val = val
			return
		}
	}
	v.O = append(v.O, Member{Key: key, Val: val})
}

// Delete removes every member named key.
func (v *Value) Delete(key string) {
	if v.K != Object {
		return
	}
	out := v.O[:0:0]
	for _, m := range v.O {
		if m.Key != key {
			out = append(out, m)
		}
	}
	v.O = out
}

// Clone returns a deep copy.
func (v Value) Clone() Value {
	switch v.K {
	case Array:
		a := make([]Value, len(v.A))
		for i := range v.A {
			a[i] = v.A[i].Clone()
		}
		v.A = a
	case Object:
		o := make([]Member, len(v.O))
		for i := range v.O {
			o[i] = Member{Key: v.O[i].Key, Val: v.O[i].Val.Clone()}
		}
		v.O = o
	}
	return v
}

// Str returns the string payload ("" unless a string).
func (v Value) Str() string {
	if v.K == String {
		return v.S
	}
	return ""
}

// Truthy returns the bool payload (false unless a true boolean).
func (v Value) Truthy() bool { return v.K == Bool && v.B }

// Len returns the number of array items or object members.
func (v Value) Len() int {
	if v.K == Array {
		return len(v.A)
	}
	if v.K == Object {
		return len(v.O)
	}
	return 0
}

// StringMap returns an object's string members (last wins) as a map.
func (v Value) StringMap() map[string]string {
	if v.K != Object {
		return nil
	}
	m := make(map[string]string, len(v.O))
	for _, mem := range v.O {
		if mem.Val.K == String {
			m[mem.Key] = mem.Val.S
		}
	}
	return m
}

// FromStringMap builds an object with sorted keys (the order Go uses when marshalling a map).
func FromStringMap(m map[string]string) Value {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	o := make([]Member, len(keys))
	for i, k := range keys {
		o[i] = Member{Key: k, Val: Str(m[k])}
	}
	return Value{K: Object, O: o}
}

// SortKeys sorts an object's members by key (recursively when deep), keeping the last of
// duplicated keys, as Go's map marshalling would.
func (v *Value) SortKeys(deep bool) {
	switch v.K {
	case Object:
		v.O = dedupe(v.O)
		sort.SliceStable(v.O, func(i, j int) bool { return v.O[i].Key < v.O[j].Key })
		if deep {
			for i := range v.O {
				v.O[i].Val.SortKeys(true)
			}
		}
	case Array:
		if deep {
			for i := range v.A {
				v.A[i].SortKeys(true)
			}
		}
	}
}

func dedupe(o []Member) []Member {
	if len(o) < 2 {
		return o
	}
	dup := false
	seen := make(map[string]struct{}, len(o))
	for _, m := range o {
		if _, ok := seen[m.Key]; ok {
			dup = true
			break
		}
		seen[m.Key] = struct{}{}
	}
	if !dup {
		return o
	}
	last := make(map[string]int, len(o))
	for i, m := range o {
		last[m.Key] = i
	}
	out := make([]Member, 0, len(last))
	for i, m := range o {
		if last[m.Key] == i {
			out = append(out, m)
		}
	}
	return out
}

func itoa(i int64) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	neg := i < 0
	u := uint64(i)
	if neg {
		u = uint64(-i)
	}
	for u > 0 {
		n--
		b[n] = byte('0' + u%10)
		u /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}
