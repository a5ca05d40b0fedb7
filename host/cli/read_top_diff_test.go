package cli

import (
	"encoding/json"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// oldReadTop is readTop before the validating pass recorded the top-level members (42212e5^): validated,
// then walked.
func oldReadTop(js []byte) (m topMembers, ok bool) {
	t, err := jsonv.Validate(js)
	if err != nil || t.Kind() != jsonv.Object {
		return m, false
	}
	m.text = t
	t.Members(func(k string, v jsonv.Text) {
		switch k {
		case "abi":
			m.abi = true
		case "statefulSet":
			m.statefulSet = true
		case "items":
			m.items = true
		case "manifests":
			m.manifests = true
		case "events":
			m.events = true
		case "kind":
			m.kind = v.Str()
		}
	})
	return m, true
}

// readTop reads the keys (escaped or not, given twice or not) and kind readTop read, wherever the
// members start: blanks and line ends before, between and after.
func FuzzReadTopAsBefore(f *testing.F) {
	for _, s := range []string{
		`{"kind":"StatefulSet"}`, "\r\n\t {\r\n\"kind\"\r\n:\r\n\"Stateful\\u0053et\" , \"kind\":\"List\",\"items\":[]}",
		`{}`, ` { } `, `{"a":{"kind":"x","abi":1},"kind":{"kind":"y"}}`, `{"st\u0061tefulSet":{},"kind":5}`,
		`[{"kind":"StatefulSet"}]`, `"kind"`, `{"kind":"a","kind":"b"}`, "\xef\xbb\xbf{\"abi\":1}", `{"kind":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		got, ok := readTop(js)
		var byName map[string]json.RawMessage // encoding/json's reading: the last member of a name, its bytes
		if ok && json.Unmarshal(js, &byName) == nil && string(byName["statefulSet"]) != string(got.set) {
			t.Fatalf("%q: readTop's set %q, encoding/json's %q", js, got.set, byName["statefulSet"])
		}
		got.set = "" // the set is new: the before had none
		want, wantOK := oldReadTop(js)
		if got != want || ok != wantOK {
			t.Fatalf("%q: readTop %+v %v, before %+v %v", js, got, ok, want, wantOK)
		}
	})
}
