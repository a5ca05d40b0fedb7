package jsonobj

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Paths are read as kubectl's JSONPath writes them: a key with dots and slashes (an annotation's) quoted
// in brackets or with its dots escaped, list indexes in brackets.
func TestParsePath(t *testing.T) {
	for path, want := range map[string][]any{
		"spec.replicas":                               {"spec", "replicas"},
		".spec.replicas":                              {"spec", "replicas"},
		"spec.template.spec.containers[0].image":      {"spec", "template", "spec", "containers", 0, "image"},
		`metadata.annotations["example.com/approve"]`: {"metadata", "annotations", "example.com/approve"},
		`metadata.annotations['a.b/c']`:               {"metadata", "annotations", "a.b/c"},
		`metadata.annotations.example\.com/approve`:   {"metadata", "annotations", "example.com/approve"},
		`metadata.labels["say \"hi\""]`:               {"metadata", "labels", `say "hi"`},
		`a[1][2]["b.c"].d`:                            {"a", 1, 2, "b.c", "d"},
		`["a.b"].c`:                                   {"a.b", "c"},
		`a\[0\]\\`:                                    {"a[0]\\"},
	} {
		got, err := ParsePath(path)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParsePath(%s) = %#v, %v; want %#v", path, got, err, want)
		}
		if back, err := ParsePath(FormatPath(want)); err != nil || !reflect.DeepEqual(back, want) {
			t.Errorf("FormatPath(%#v) = %s, read back as %#v, %v", want, FormatPath(want), back, err)
		}
	}
}

// A malformed path is an error naming the path, the character where it goes wrong and what is wrong.
func TestParsePathErrors(t *testing.T) {
	for path, want := range map[string]string{
		"":                             `path "", character 1: the path is empty`,
		"metadata..name":               `path "metadata..name", character 10: an empty key ('.' where a key begins)`,
		"spec.":                        `path "spec.", character 6: a key is missing after the dot`,
		`metadata.annotations["a.b/c`:  `path "metadata.annotations[\"a.b/c", character 28: the quoted key is not closed by "`,
		`metadata.annotations["a"`:     `path "metadata.annotations[\"a\"", character 25: a quoted key is closed by "]`,
		`metadata.annotations[a.b]`:    `path "metadata.annotations[a.b]", character 22: 'a' after [: want a list index (0, 1, ...) or a quoted key ('key' or "key")`,
		"containers[*].image":          `path "containers[*].image", character 12: '*': wildcards, slices, negative indexes and filters address no one value; give a list index or a quoted key`,
		"containers[-1]":               `path "containers[-1]", character 12: '-': wildcards, slices, negative indexes and filters address no one value; give a list index or a quoted key`,
		"containers[0":                 `path "containers[0", character 13: a list index is closed by ]`,
		"containers[0]x":               `path "containers[0]x", character 14: 'x' after ]: want a dot or [`,
		"a]b":                          `path "a]b", character 2: ] without [`,
		`a\b`:                          `path "a\\b", character 3: \b: a backslash escapes only . [ ] and \ (quote the key in brackets instead)`,
		`a\`:                           `path "a\\", character 3: a backslash at the end escapes nothing`,
		`a.[0]`:                        `path "a.[0]", character 3: an empty key ('[' where a key begins)`,
		`a['']`:                        `path "a['']", character 4: an empty key`,
		"c[99999999999999999999999]":   `path "c[99999999999999999999999]", character 3: list index 99999999999999999999999 is too large`,
		"metadata.annotations[\"é\"x]": `path "metadata.annotations[\"é\"x]", character 25: a quoted key is closed by "]`,
	} {
		_, err := ParsePath(path)
		var pe *PathError
		if !errors.As(err, &pe) || err.Error() != want {
			t.Errorf("ParsePath(%s): %v\n want %s", path, err, want)
		}
	}
}

// MergeAt sets one key of a map and keeps the others, merges an object into the one there (null removes
// a key), creates the maps missing on the way, and reaches into a list by index.
func TestMergeAt(t *testing.T) {
	o, _ := DecodeObj([]byte(`{"metadata":{"name":"web","annotations":{"ordinal.dev/policies":"window"}},
		"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x"}]}}}}`))
	for _, e := range []struct {
		path string
		val  any
	}{
		{`metadata.annotations["example.com/approve"]`, "true"},
		{`metadata.annotations`, Obj{"b": "2", "gone": nil}},
		{`metadata.labels['a.b/c']`, "d"},
		{`metadata.labels.example\.com/role`, "primary"},
		{`spec.template.spec.containers[0]`, Obj{"image": "y"}},
		{`spec.template.spec.containers[0].env`, []any{Obj{"name": "E"}}},
		{`metadata.name`, nil},
	} {
		if err := MergeAt(o, e.path, e.val); err != nil {
			t.Fatalf("MergeAt %s: %v", e.path, err)
		}
	}
	want, _ := DecodeObj([]byte(`{"metadata":{"annotations":{"ordinal.dev/policies":"window","example.com/approve":"true","b":"2"},
		"labels":{"a.b/c":"d","example.com/role":"primary"}},
		"spec":{"template":{"spec":{"containers":[{"name":"a","image":"y","env":[{"name":"E"}]}]}}}}`))
	if !Equal(o, want) {
		t.Fatalf("after the merges:\n%v\nwant\n%v", o, want)
	}
	for path, msg := range map[string]string{
		"spec.template.spec.containers[3].image": "spec.template.spec.containers[3].image: spec.template.spec.containers has 1 items, no index 3",
		"spec.volumes[0].name":                   "spec.volumes[0].name: there is no list spec.volumes (an index addresses an item of a list that is there)",
		`metadata.labels["a.b/c"].x`:             `metadata.labels["a.b/c"].x: metadata.labels["a.b/c"] is a string, not an object`,
		"metadata.labels[0]":                     "metadata.labels[0]: metadata.labels is an object, not a list",
		"metadata..labels":                       `path "metadata..labels", character 10: an empty key ('.' where a key begins)`,
	} {
		if err := MergeAt(o, path, "v"); err == nil || err.Error() != msg {
			t.Errorf("MergeAt %s: %v\n want %s", path, err, msg)
		}
	}
	if err := MergeAt(o, "spec.template.spec.containers[0]", nil); err == nil || !strings.Contains(err.Error(), "null removes a key, not a list item") {
		t.Errorf("null at a list index: %v", err)
	}
	if !Equal(o, want) {
		t.Fatal("a refused merge changed the object")
	}
}
