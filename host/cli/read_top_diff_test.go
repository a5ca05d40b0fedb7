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

// The set a snapshot command reads (snapshotFile.set: annotations, -n's check, the text output) is the one
// the module reads in the bytes it is given: the last statefulSet member, whatever the file was (YAML, a
// BOM, leading blanks, a List) and whatever the CLI dropped from it.
func FuzzSnapshotFileSet(f *testing.F) {
	for _, s := range []string{
		`{"abi":1,"statefulSet":{"metadata":{"name":"a"},"bogus":1},"statefulSet":{"metadata":{"name":"b"},"spec":{"x":1}}}`,
		"\xef\xbb\xbf \n{\"abi\":1,\"statefulSet\":{\"spec\":{\"replicaz\":1}}}",
		"abi: 1\nstatefulSet:\n  metadata: {name: a}\n  spec: {x: 1}\n",
		`{"abi":1,"st\u0061tefulSet":{"x":1},"statefulSet":[]}`, `[{"abi":1}]`, `{"statefulSet":1}`, `{"abi":1`,
		`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"w"},"spec":{"q":1}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		file, err := snapshotInput(recognise(doc, 1<<20), "f", setChoice{}, fieldValidation{mode: validateIgnore})
		if err != nil {
			return
		}
		var set jsonv.Text
		text, verr := jsonv.Validate(file.json)
		object := verr == nil && text.Kind() == jsonv.Object
		if object {
			text.Members(func(k string, v jsonv.Text) {
				if k == "statefulSet" {
					set = v
				}
			})
		}
		if file.object != object || file.set != set {
			t.Fatalf("%q: snapshotFile object %v set %q; the module reads %q: object %v set %q", doc, file.object, file.set, file.json, object, set)
		}
	})
}
