package replay

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// appendJSON appends v encoded exactly as json.Marshal encodes it (sorted keys, HTML-safe escaping,
// Go's float format), without reflection for the types a world holds. A replay encodes the whole
// world for every sync; through encoding/json that was a fifth of a replay's CPU (pprof, 300-pod
// creation). Any other type goes through json.Marshal, so the bytes never differ.
func appendJSON(b []byte, v any) ([]byte, error) {
	var e jsonEncoder
	return e.append(b, v)
}

// jsonEncoder keeps the scratch space of object keys (a stack, one segment per open object) across
// calls, so encoding a world allocates nothing but its output.
type jsonEncoder struct{ keys []string }

func (e *jsonEncoder) append(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsonv.AppendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case json.Number:
		if x == "" {
			return append(b, '0'), nil
		}
		if !isNumber(string(x)) {
			return b, fmt.Errorf("json: invalid number literal %q", string(x))
		}
		return append(b, x...), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case float64:
		return appendFloat(b, x)
	case Obj:
		if x == nil {
			return append(b, "null"...), nil
		}
		base := len(e.keys)
		for k := range x {
			e.keys = append(e.keys, k)
		}
		slices.Sort(e.keys[base:])
		b = append(b, '{')
		var err error
		for i := base; i < len(e.keys); i++ {
			if i > base {
				b = append(b, ',')
			}
			k := e.keys[i]
			b = jsonv.AppendString(b, k)
			b = append(b, ':')
			if b, err = e.append(b, x[k]); err != nil {
				break
			}
		}
		clear(e.keys[base:])
		e.keys = e.keys[:base]
		if err != nil {
			return b, err
		}
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		var err error
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = e.append(b, el); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	enc, err := json.Marshal(v)
	return append(b, enc...), err
}

// appendFloat is encoding/json's float64 encoder, which refuses infinities and NaN (jsonv's, shared with
// the guest, writes them as null).
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	return jsonv.AppendFloat(b, f), nil
}

// isNumber reports whether s is a valid JSON number (what json.Number must hold to be encoded).
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		for s != "" && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for s != "" && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for s != "" && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}
