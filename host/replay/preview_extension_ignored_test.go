package replay

import (
	"strings"
	"testing"
)

// A set annotated for an extension its module does not have gets upstream's plan: pod-update-policy
// InPlaceOnly on the faithful module recreates every pod it asked to keep. The preview (and so the webhook's
// warnings) says the annotation is ignored, as it says of recover-stuck's and progress-deadline's.
func TestPreviewSaysAnExtensionIsIgnored(t *testing.T) {
	settled := settledPreviewCase(t, "in-place-only")
	for _, tc := range []struct {
		name, from, to string
		ignored        []string // what the warning names
	}{
		{"InPlaceOnly on the faithful module", "    ordinal.dev/module: extended\n", "", []string{"ordinal.dev/pod-update-policy", "InPlaceOnly", "in-place-update", "recreated"}},
		{"paused on the faithful module", "    ordinal.dev/module: extended\n    ordinal.dev/pod-update-policy: InPlaceOnly\n", "    ordinal.dev/paused: \"true\"\n", []string{"ordinal.dev/paused", "pause", "not paused"}},
		{"InPlaceOnly on the extended module", "", "", nil},
		{"ReCreate on the faithful module", "    ordinal.dev/module: extended\n    ordinal.dev/pod-update-policy: InPlaceOnly\n", "    ordinal.dev/pod-update-policy: ReCreate\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := string(settled.edit)
			if tc.from != "" {
				if !strings.Contains(e, tc.from) {
					t.Fatalf("%q is not in the edit", tc.from)
				}
				e = strings.Replace(e, tc.from, tc.to, 1)
			}
			p := settled.preview(t, []byte(e))
			var got []string
			for _, w := range p.Warnings {
				if w.Code == WarnExtensionIgnored {
					got = append(got, w.Message)
				}
			}
			if tc.ignored == nil {
				if len(got) != 0 {
					t.Fatalf("warnings %q, want none of %s", got, WarnExtensionIgnored)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("warnings %+v, want one %s", p.Warnings, WarnExtensionIgnored)
			}
			for _, s := range tc.ignored {
				if !strings.Contains(got[0], s) {
					t.Errorf("warning %q does not say %q", got[0], s)
				}
			}
		})
	}
}

// An ordinal.dev/ annotation nothing reads (a misspelling) and a value outside an extension's list on a module
// without it are warned of too (annotation.Check, which the controller's events share), naming the key, the
// closest known key or the values it takes. A value outside the list on the extended module is the module's
// own InvalidAnnotation, not said twice.
func TestPreviewSaysAnAnnotationIsUnknownOrInvalid(t *testing.T) {
	settled := settledPreviewCase(t, "in-place-only")
	const policy = "    ordinal.dev/pod-update-policy: InPlaceOnly\n"
	for _, tc := range []struct {
		name, from, to string
		want           map[string][]string // code: what its one warning says
	}{
		{"a misspelt key", policy, "    ordinal.dev/pod-updte-policy: InPlaceOnly\n",
			map[string][]string{WarnUnknownAnnotation: {"ordinal.dev/pod-updte-policy", "did you mean ordinal.dev/pod-update-policy?"}}},
		{"a value outside the list, on the faithful module", "    ordinal.dev/module: extended\n" + policy, "    ordinal.dev/pod-update-policy: InPlace\n",
			map[string][]string{WarnExtensionIgnored: {`"InPlace"`}, WarnInvalidExtensionValue: {`"InPlace"`, "ReCreate, InPlaceIfPossible, InPlaceOnly"}}},
		{"a value outside the list, on the extended module", policy, "    ordinal.dev/pod-update-policy: InPlace\n",
			map[string][]string{WarnInvalidAnnotation: {`"InPlace"`, "ReCreate, InPlaceIfPossible, InPlaceOnly"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := string(settled.edit)
			if !strings.Contains(e, tc.from) {
				t.Fatalf("%q is not in the edit", tc.from)
			}
			p := settled.preview(t, []byte(strings.Replace(e, tc.from, tc.to, 1)))
			got := map[string][]string{}
			for _, w := range p.Warnings {
				switch w.Code {
				case WarnUnknownAnnotation, WarnExtensionIgnored, WarnInvalidExtensionValue, WarnInvalidAnnotation:
					got[w.Code] = append(got[w.Code], w.Message)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %+v, want one each of %v", p.Warnings, tc.want)
			}
			for code, words := range tc.want {
				if len(got[code]) != 1 {
					t.Fatalf("warnings %+v, want one %s", p.Warnings, code)
				}
				for _, s := range words {
					if !strings.Contains(got[code][0], s) {
						t.Errorf("%s %q does not say %q", code, got[code][0], s)
					}
				}
			}
		})
	}
}
