package annotation

import (
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
)

// extended is the extended module's describe, as far as Check reads it (TestKeysAreTheExtendedModules holds
// Keys to the module itself).
var extended = []abi.Extension{
	{Name: "pause", Annotation: abi.AnnotationPaused}, {Name: "recover-stuck", Annotation: abi.AnnotationRecoverStuckAfter},
	{Name: "reserve-ordinals", Annotation: abi.AnnotationReserveOrdinals}, {Name: "resize-claims", Annotation: abi.AnnotationResizeClaims},
	{Name: "progress-deadline", Annotation: abi.AnnotationProgressDeadlineSeconds}, {Name: "in-place-update", Annotation: abi.AnnotationPodUpdatePolicy},
}

func TestCheck(t *testing.T) {
	type want struct{ code, key string } // and each finding's message names its key
	for _, tc := range []struct {
		name string
		ann  map[string]string
		exts []abi.Extension
		want []want
		says []string // words of the messages, in order of the findings
	}{
		{"none", nil, nil, nil, nil},
		{"other prefixes are not ours", map[string]string{"window.ordinal.dev/allow": "Sat 02:00-06:00", "e2e.ordinal.dev/never-ready": "web-1", "app": "x"}, nil, nil, nil},
		{"the hosts' own keys, on any module", map[string]string{abi.AnnotationModule: "faithful", abi.AnnotationPolicies: "pdb", "ordinal.dev/policy-held": "{}", "ordinal.dev/paused-partition": "3"}, nil, nil, nil},
		{"every extension on the extended module", map[string]string{abi.AnnotationPaused: "true", abi.AnnotationRecoverStuckAfter: "10m", abi.AnnotationReserveOrdinals: "1",
			abi.AnnotationResizeClaims: "true", abi.AnnotationProgressDeadlineSeconds: "600", abi.AnnotationOnProgressDeadline: "Pause", abi.AnnotationPodUpdatePolicy: "InPlaceOnly"}, extended, nil, nil},
		{"InPlaceOnly on the faithful module", map[string]string{abi.AnnotationPodUpdatePolicy: "InPlaceOnly"}, nil,
			[]want{{ExtensionIgnored, abi.AnnotationPodUpdatePolicy}}, []string{`"InPlaceOnly" is ignored`}},
		{"values that ask nothing, on the faithful module", map[string]string{abi.AnnotationPodUpdatePolicy: "ReCreate", abi.AnnotationPaused: "false", abi.AnnotationResizeClaims: "false"}, nil, nil, nil},
		{"recover-stuck and progress-deadline on the faithful module", map[string]string{abi.AnnotationRecoverStuckAfter: "10m", abi.AnnotationProgressDeadlineSeconds: "600", abi.AnnotationOnProgressDeadline: "Rollback"}, nil,
			[]want{{ExtensionIgnored, abi.AnnotationProgressDeadlineSeconds}, {ExtensionIgnored, abi.AnnotationRecoverStuckAfter}},
			[]string{"no progress deadline", "not replaced"}},
		{"a misspelt key", map[string]string{"ordinal.dev/pod-updte-policy": "InPlaceOnly"}, extended,
			[]want{{UnknownAnnotation, "ordinal.dev/pod-updte-policy"}}, []string{"did you mean ordinal.dev/pod-update-policy?"}},
		{"a key like none", map[string]string{"ordinal.dev/colour": "blue"}, nil,
			[]want{{UnknownAnnotation, "ordinal.dev/colour"}}, []string{"known: ordinal.dev/{module, policies, paused,"}},
		{"a pod's annotation on a set", map[string]string{abi.AnnotationInPlaceUpdate: "web-1"}, extended,
			[]want{{UnknownAnnotation, abi.AnnotationInPlaceUpdate}}, []string{"unknown"}},
		{"a supplied module's own extension", map[string]string{"ordinal.dev/drain-first": "true"}, []abi.Extension{{Name: "drain", Annotation: "ordinal.dev/drain-first"}}, nil, nil},
		// a supplied module that reads one of the extended module's keys under an extension of its own name
		{"a supplied module's extension on a known key", map[string]string{abi.AnnotationPaused: "yes"}, []abi.Extension{{Name: "hold", Annotation: abi.AnnotationPaused}}, nil, nil},
		{"a supplied module's extension is a known spelling", map[string]string{"ordinal.dev/drain-frist": "true"}, []abi.Extension{{Name: "drain", Annotation: "ordinal.dev/drain-first"}},
			[]want{{UnknownAnnotation, "ordinal.dev/drain-frist"}}, []string{"did you mean ordinal.dev/drain-first?"}},
		{"a value outside the list, on a module without the extension", map[string]string{abi.AnnotationPodUpdatePolicy: "InPlace"}, nil,
			[]want{{ExtensionIgnored, abi.AnnotationPodUpdatePolicy}, {InvalidExtensionValue, abi.AnnotationPodUpdatePolicy}},
			[]string{`"InPlace" is ignored`, `"InPlace" is none of ReCreate, InPlaceIfPossible, InPlaceOnly: a module with the extension in-place-update would not read it either`}},
		{"a value in another case", map[string]string{abi.AnnotationPaused: "True"}, nil,
			[]want{{ExtensionIgnored, abi.AnnotationPaused}, {InvalidExtensionValue, abi.AnnotationPaused}}, []string{"not paused", `did you mean "true"?`}},
		{"a modifier's value: no ExtensionIgnored of its own", map[string]string{abi.AnnotationOnProgressDeadline: "rollback"}, nil,
			[]want{{InvalidExtensionValue, abi.AnnotationOnProgressDeadline}}, []string{`did you mean "Rollback"?`}},
		// an empty value (a Helm value left unset) is no annotation, as the module reads it (abi.EnumAnnotation)
		{"empty values of the lists' keys, on the faithful module", map[string]string{abi.AnnotationPodUpdatePolicy: "", abi.AnnotationPaused: "",
			abi.AnnotationResizeClaims: "", abi.AnnotationOnProgressDeadline: ""}, nil, nil, nil},
		{"a value outside the list, on the extended module: the module's to say", map[string]string{abi.AnnotationPodUpdatePolicy: "InPlace", abi.AnnotationPaused: "yes"}, extended, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(tc.ann, tc.exts)
			if len(got) != len(tc.want) {
				t.Fatalf("findings %+v, want %v", got, tc.want)
			}
			for i, f := range got {
				if f.Code != tc.want[i].code || f.Key != tc.want[i].key || !strings.HasPrefix(f.Message, f.Key) {
					t.Errorf("finding %d: %+v, want %v naming its key first", i, f, tc.want[i])
				}
				if i < len(tc.says) && !strings.Contains(f.Message, tc.says[i]) {
					t.Errorf("finding %d %q does not say %q", i, f.Message, tc.says[i])
				}
			}
		})
	}
}

// Every key Check knows is an annotation some host or module reads; none is listed twice, and the keys of
// one extension are consistent.
func TestKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Keys {
		if !strings.HasPrefix(k.Key, abi.AnnotationPrefix) || seen[k.Key] {
			t.Errorf("key %q: not %s or listed twice", k.Key, abi.AnnotationPrefix)
		}
		seen[k.Key] = true
		if k.Instead != "" && k.Extension == "" || len(k.Off) > 0 && k.Instead == "" {
			t.Errorf("key %q: Instead and Off are for a key that turns an extension on", k.Key)
		}
		for _, v := range k.Off {
			if k.Values != nil && !strings.Contains(strings.Join(k.Values, "\n")+"\n", v+"\n") {
				t.Errorf("key %q: off value %q is not one of its values", k.Key, v)
			}
		}
	}
}
