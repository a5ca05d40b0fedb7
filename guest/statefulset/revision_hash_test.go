package statefulset

import (
	"os"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
	"github.com/tidwall/gjson"
)

func fixture(t *testing.T, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Known answers from upstream's compatibility fixtures.
func TestRevisionHashKnownAnswers(t *testing.T) {
	d133 := []byte(gjson.GetBytes(fixture(t, "compatibility_revision_1.33.0.json"), "data").Raw)
	d134 := []byte(gjson.GetBytes(fixture(t, "compatibility_revision_1.34.0.json"), "data").Raw)
	for _, c := range []struct {
		data []byte
		cc   int32
		want string
	}{
		{d133, 0, "c77f6d978"},
		{d134, 0, "776999688b"},
		{d134, 1, "776999688c"},
	} {
		if got := hashRevision(c.data, c.cc); got != c.want {
			t.Errorf("hash(cc=%d) = %s, want %s", c.cc, got, c.want)
		}
	}
	if got := revisionName("test", "776999688b"); got != "test-776999688b" {
		t.Errorf("name %s", got)
	}
	long := string(make([]byte, 300))
	if got := revisionName(long, "h"); len(got) != 223+2 {
		t.Errorf("long name length %d", len(got))
	}
}

// The revision bytes of today's serialisation: both the 1.33 set (template with
// "creationTimestamp":null) and the 1.34 set produce exactly the 1.34 revision's data.
func TestRevisionPatchBytes(t *testing.T) {
	want := gjson.GetBytes(fixture(t, "compatibility_revision_1.34.0.json"), "data").Raw
	for _, f := range []string{"compatibility_set_1.33.0.json", "compatibility_set_1.34.0.json"} {
		set, err := jsonv.Parse(fixture(t, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := revisionPatch(set.Path("spec", "template"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", f, got, want)
		}
	}
}

// With the semantic comparison, the 1.33 revision is equal to what the 1.34 set proposes.
func TestSemanticRevisionComparison(t *testing.T) {
	set, _ := jsonv.Parse(fixture(t, "compatibility_set_1.34.0.json"))
	d133 := []byte(gjson.GetBytes(fixture(t, "compatibility_revision_1.33.0.json"), "data").Raw)
	s := &syncer{set: &statefulSet{Template: set.Path("spec", "template")}}
	data, _ := revisionPatch(s.set.Template)
	if !s.semanticallyEqual(&revision{DataRaw: data}, &revision{DataRaw: d133}) {
		t.Error("1.33 revision should be semantically equal")
	}
	other, _ := jsonv.Parse([]byte(`{"spec":{"template":{"$patch":"replace","metadata":{},"spec":{"containers":[{"name":"x","image":"y"}]}}}}`))
	ob, _ := jsonv.Canonical(other)
	if s.semanticallyEqual(&revision{DataRaw: data}, &revision{DataRaw: ob}) {
		t.Error("a different template must not be equal")
	}
}

func TestSafeEncode(t *testing.T) {
	if got := safeEncode("0123456789"); got != "456789bcdf" {
		t.Errorf("%s", got)
	}
}
