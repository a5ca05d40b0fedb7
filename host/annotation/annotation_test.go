package annotation

import (
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
)

// extended is the extended module's describe, as far as Check reads it.
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
		{"other annotations", map[string]string{"window.ordinal.dev/allow": "Sat 02:00-06:00", abi.AnnotationModule: "faithful", "app": "x"}, nil, nil, nil},
		{"every extension on the extended module", map[string]string{abi.AnnotationPaused: "true", abi.AnnotationRecoverStuckAfter: "10m", abi.AnnotationReserveOrdinals: "1",
			abi.AnnotationResizeClaims: "true", abi.AnnotationProgressDeadlineSeconds: "600", abi.AnnotationOnProgressDeadline: "Pause", abi.AnnotationPodUpdatePolicy: "InPlaceOnly"}, extended, nil, nil},
		{"InPlaceOnly on the faithful module", map[string]string{abi.AnnotationPodUpdatePolicy: "InPlaceOnly"}, nil,
			[]want{{ExtensionIgnored, abi.AnnotationPodUpdatePolicy}}, []string{`"InPlaceOnly" is ignored: the set's module does not have the extension in-place-update (annotate the set ordinal.dev/module: extended), so pods are recreated`}},
		{"values that ask nothing, on the faithful module", map[string]string{abi.AnnotationPodUpdatePolicy: "ReCreate", abi.AnnotationPaused: "false", abi.AnnotationResizeClaims: "false"}, nil, nil, nil},
		{"recover-stuck and progress-deadline on the faithful module", map[string]string{abi.AnnotationRecoverStuckAfter: "10m", abi.AnnotationProgressDeadlineSeconds: "600", abi.AnnotationOnProgressDeadline: "Rollback"}, nil,
			[]want{{ExtensionIgnored, abi.AnnotationProgressDeadlineSeconds}, {ExtensionIgnored, abi.AnnotationRecoverStuckAfter}},
			[]string{"no progress deadline", "not replaced"}},
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
