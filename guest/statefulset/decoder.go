package statefulset

import (
	"strconv"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// decoder reads typed fields out of the value tree, remembering the first error with its path.
type decoder struct {
	err  *PlanError
	fast bool // skip building error paths (decodeSnapshot re-runs with paths on error)
	// prev holds the objects of the instance's previous snapshot (references resolve there); next, when
	// set, collects this snapshot's objects (object_cache.go).
	prev, next *objectMaps
	slab       *objectSlab // where copies of referenced objects go (nil: allocated); set with next
	decodes    uint64      // this decode's number (ObjectCache.decodes), with which a delta marks what it drops
}

func (d *decoder) join(path, key string) string {
	if d.fast {
		return ""
	}
	return join(path, key)
}

func (d *decoder) index(path string, i int) string {
	if d.fast {
		return ""
	}
	return index(path, i)
}

func (d *decoder) fail(path, msg string) {
	if d.err == nil {
		d.err = &PlanError{Code: CodeInvalidSnapshot, Path: path, Message: msg}
	}
}

func typeErr(want string, got jsonv.Value) string {
	return "expected " + want + ", got " + got.K.String()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func (d *decoder) object(v jsonv.Value, path string) jsonv.Value {
	if v.K == jsonv.Null {
		return jsonv.Value{K: jsonv.Object}
	}
	if v.K != jsonv.Object {
		d.fail(path, typeErr("object", v))
		return jsonv.Value{K: jsonv.Object}
	}
	return v
}

func (d *decoder) array(v jsonv.Value, path string) []jsonv.Value {
	if v.K == jsonv.Null {
		return nil
	}
	if v.K != jsonv.Array {
		d.fail(path, typeErr("array", v))
		return nil
	}
	return v.A
}

func (d *decoder) str(v jsonv.Value, base, key string) string {
	switch v.K {
	case jsonv.Null:
		return ""
	case jsonv.String:
		return v.S
	}
	d.fail(d.join(base, key), typeErr("string", v))
	return ""
}

func (d *decoder) boolean(v jsonv.Value, base, key string) bool {
	switch v.K {
	case jsonv.Null:
		return false
	case jsonv.Bool:
		return v.B
	}
	d.fail(d.join(base, key), typeErr("boolean", v))
	return false
}

// integer decodes an integer that must fit in bits (32 or 64) bits, as Go's decoder requires.
func (d *decoder) integer(v jsonv.Value, base, key string, bits int) (int64, bool) {
	switch v.K {
	case jsonv.Null:
		return 0, false
	case jsonv.Number:
		n, err := strconv.ParseInt(v.S, 10, bits)
		if err != nil {
			if strings.ContainsAny(v.S, ".eE") {
				d.fail(d.join(base, key), "expected integer, got non-integer number "+v.S)
			} else {
				d.fail(d.join(base, key), "integer "+v.S+" out of range for int"+strconv.Itoa(bits))
			}
			return 0, false
		}
		return n, true
	}
	d.fail(d.join(base, key), typeErr("integer", v))
	return 0, false
}

func (d *decoder) timestamp(v jsonv.Value, base, key string) (time.Time, bool) {
	switch v.K {
	case jsonv.Null:
		return time.Time{}, false
	case jsonv.String:
		if v.S == "" {
			return time.Time{}, false
		}
		t, err := parseTime(v.S)
		if err != nil {
			d.fail(d.join(base, key), "invalid RFC 3339 timestamp "+strconv.Quote(v.S))
			return time.Time{}, false
		}
		return t, true
	}
	d.fail(d.join(base, key), typeErr("string (RFC 3339 timestamp)", v))
	return time.Time{}, false
}

func (d *decoder) stringMap(v jsonv.Value, base, key string) map[string]string {
	if v.K == jsonv.Null {
		return nil
	}
	if v.K != jsonv.Object {
		d.fail(d.join(base, key), typeErr("object", v))
		return nil
	}
	m := make(map[string]string, len(v.O))
	for _, mem := range v.O {
		if mem.Val.K == jsonv.Null {
			m[mem.Key] = ""
			continue
		}
		if mem.Val.K != jsonv.String {
			d.fail(d.join(d.join(base, key), mem.Key), typeErr("string", mem.Val))
			continue
		}
		m[mem.Key] = mem.Val.S
	}
	return m
}

// parseTime parses RFC 3339 like metav1.Time (fast path for the common "2006-01-02T15:04:05Z").
func parseTime(s string) (time.Time, error) {
	if len(s) == 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == 'Z' {
		n := func(a, b int) int {
			v := 0
			for i := a; i < b; i++ {
				c := s[i]
				if c < '0' || c > '9' {
					return -1
				}
				v = v*10 + int(c-'0')
			}
			return v
		}
		y, mo, d, h, mi, se := n(0, 4), n(5, 7), n(8, 10), n(11, 13), n(14, 16), n(17, 19)
		if y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h >= 0 && h < 24 && mi >= 0 && mi < 60 && se >= 0 && se < 60 {
			t := time.Date(y, time.Month(mo), d, h, mi, se, 0, time.UTC)
			if t.Day() == d {
				return t, nil
			}
		}
	}
	return time.Parse(time.RFC3339, s)
}
