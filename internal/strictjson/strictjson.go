// Package strictjson is the host's one rule for decoding what a module returns: a plan (host/plan) and a
// policy answer (host/policy) are read the same way, so a document one refuses the other does not take
// (abi/README.md "Hosts validate plans", abi/POLICY.md "How answers are decoded").
package strictjson

import (
	"errors"
	"fmt"
	"unsafe"

	sigsjson "sigs.k8s.io/json"

	"github.com/tidwall/gjson"
)

// Object decodes raw, one JSON object, into v, a pointer to a struct. It refuses:
//   - a document that is not an object, or data after it;
//   - a member v does not name, matched case-sensitively ("HOLDS" is not "holds");
//   - a member given twice (decoders differ on which one counts);
//   - a member whose value is null (encoding/json leaves the field as it was: "action": null would read as
//     action 0).
//
// It judges the object's own members only: a struct nested in v is read the same way when its members
// arrive as json.RawMessage and the caller decodes each with Object. A field that must be present is a
// pointer, nil when the member is absent; the caller says it is missing.
func Object(raw []byte, v any) error {
	if !IsObject(raw) {
		return errors.New("is not a JSON object")
	}
	strict, err := sigsjson.UnmarshalStrict(raw, v, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return strict[0]
	}
	return nullMember(raw)
}

// nullMember names the first member of the object raw (valid JSON: the decode accepted it) that is null.
func nullMember(raw []byte) (err error) {
	View(raw).ForEach(func(key, value gjson.Result) bool {
		if value.Type == gjson.Null {
			err = fmt.Errorf("member %q is null: leave an optional member out instead", key.Str)
		}
		return err == nil
	})
	return err
}

// View is gjson's reading of raw without the copy gjson.ParseBytes makes of it (a plan's, on every sync, twice):
// the caller neither writes raw nor keeps a result while it reads them.
func View(raw []byte) gjson.Result {
	return gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw)))
}

// IsObject: raw, after white space, starts an object.
func IsObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}
