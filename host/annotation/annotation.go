// Package annotation is what the hosts know of a set's ordinal.dev/ annotations, and what they say of those
// the set's module will not act on as asked: an extension's annotation on a module without the extension
// (upstream's plan ignores it), a key nothing reads (a misspelling), a value outside an extension's list
// that the module would not read either. Previews (and so the webhook's warnings) and the controller's
// events say the same findings, from Check.
package annotation

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/internal/didyoumean"
)

// Finding codes: a preview's warning codes and the controller's event reasons.
const (
	ExtensionIgnored      = "ExtensionIgnored"      // the set turns on an extension its module does not have
	UnknownAnnotation     = "UnknownAnnotation"     // an ordinal.dev/ key no host and not the module reads
	InvalidExtensionValue = "InvalidExtensionValue" // a value outside the list of an extension its module lacks
)

// Key is an ordinal.dev/ annotation of a set that a host or a module reads.
type Key struct {
	Key string
	// Extension is the name of the extension (describe's extensions[].name) that reads it; "": a host's own.
	Extension string
	// Values are the values it takes when they are a list (nil: a format the module reads, a duration, a
	// number, ordinals).
	Values []string
	// Off are the values that ask nothing of the extension; Instead is what upstream's plan does when the
	// module lacks it ("": the key does not turn the extension on, another key does).
	Off     []string
	Instead string
	// Written: Ordinal's tools write it, people do not (known, but not offered as a spelling).
	Written bool
}

// Keys are the set annotations the hosts and the extended module read. The extended module's are its
// describe's extensions and the values guest/statefulset reads (TestKeysAreTheExtendedModules holds them
// to the module); the others are the hosts' own.
var Keys = []Key{
	{Key: abi.AnnotationModule},
	{Key: abi.AnnotationPolicies},
	{Key: abi.AnnotationPaused, Extension: "pause", Values: []string{"true", "false"}, Off: []string{"false"}, Instead: "the rollout is not paused"},
	{Key: abi.AnnotationRecoverStuckAfter, Extension: "recover-stuck", Instead: "a pod stuck at an old revision is not replaced"},
	{Key: abi.AnnotationReserveOrdinals, Extension: "reserve-ordinals", Instead: "the reserved ordinals are used"},
	{Key: abi.AnnotationResizeClaims, Extension: "resize-claims", Values: []string{"true", "false"}, Off: []string{"false"}, Instead: "no claim is resized"},
	{Key: abi.AnnotationProgressDeadlineSeconds, Extension: "progress-deadline", Instead: "the set gets no progress deadline and no rollout conditions"},
	{Key: abi.AnnotationOnProgressDeadline, Extension: "progress-deadline", Values: []string{"Pause", "Rollback"}},
	{Key: abi.AnnotationPodUpdatePolicy, Extension: "in-place-update", Values: []string{abi.PodUpdateReCreate, abi.PodUpdateInPlaceIfPossible, abi.PodUpdateInPlaceOnly},
		Off: []string{abi.PodUpdateReCreate}, Instead: "pods are recreated as upstream does"},
	{Key: policy.AnnotationHeld, Written: true},
	{Key: rollout.PausedPartitionAnnotation, Written: true},
}

// Finding is one thing a set's ordinal.dev/ annotations ask that its module will not do: Code (above) names
// it for programs, Message says it to people, naming the annotation.
type Finding struct {
	Code, Key, Message string
}

// Check finds, of the set's annotations ann, what its module (whose describe lists the extensions exts)
// will not act on as asked, in key order: each extension it turns on that the module lacks; each
// ordinal.dev/ key that neither a host nor the module reads, with the closest known key; each value outside
// the list of an extension the module lacks. A value outside the list of an extension the module has is the
// module's to say (its Warning InvalidAnnotation, in its own words), not repeated here.
func Check(ann map[string]string, exts []abi.Extension) []Finding {
	has := func(name string) bool {
		return slices.ContainsFunc(exts, func(e abi.Extension) bool { return e.Name == name })
	}
	reads := func(k string) bool { // the module's describe names the key (a supplied module's own extension)
		return slices.ContainsFunc(exts, func(e abi.Extension) bool { return e.Annotation == k })
	}
	var out []Finding
	for _, k := range sortedKeys(ann) {
		v := ann[k]
		if unset(ann, k) {
			continue
		}
		e, known := lookup(k)
		switch {
		case known && e.Extension != "" && has(e.Extension), reads(k):
			// the module reads it, and says itself what it cannot read
		case known:
			if e.Instead != "" && !slices.Contains(e.Off, v) {
				out = append(out, Finding{ExtensionIgnored, k, fmt.Sprintf("%s: %q is ignored: the set's module does not have the extension %s (annotate the set %s: extended), so %s",
					k, v, e.Extension, abi.AnnotationModule, e.Instead)})
			}
			if e.Values != nil && !slices.Contains(e.Values, v) {
				out = append(out, Finding{InvalidExtensionValue, k, fmt.Sprintf("%s: %q is none of %s%s: a module with the extension %s would not read it either (a Warning InvalidAnnotation)",
					k, v, strings.Join(e.Values, ", "), didYouMeanValue(v, e.Values), e.Extension)})
			}
		case strings.HasPrefix(k, abi.AnnotationPrefix):
			out = append(out, Finding{UnknownAnnotation, k, fmt.Sprintf("%s is unknown, it does nothing%s; known: %s",
				k, didYouMeanKey(k, exts), people(exts))})
		}
	}
	return out
}

// unset: ann gives key k, whose values are a list, the empty value, which is no annotation (abi.EnumAnnotation,
// as the module reads it).
func unset(ann map[string]string, k string) bool {
	e, known := lookup(k)
	_, set := abi.EnumAnnotation(ann, k)
	return known && e.Values != nil && !set
}

// AsksOrdinal reports whether the annotations ask anything of the controller that runs the set: an ordinal.dev/
// key other than those Ordinal's tools write for their own use (Written: kubectl ordinal pause's saved
// partition, the policies' record of their holds), which ask nothing of whoever runs the set.
func AsksOrdinal(ann map[string]string) bool {
	for k := range ann {
		if e, known := lookup(k); strings.HasPrefix(k, abi.AnnotationPrefix) && !(known && e.Written) && !unset(ann, k) {
			return true
		}
	}
	return false
}

// OtherController is the field manager that last wrote the live set's controller-computed status when it is not
// Ordinal's, while the annotations (the live set's, or an edit's) ask something of the controller (AsksOrdinal);
// "" otherwise. Most often kube-controller-manager runs such a set, ignores the annotations and does as upstream
// does. Not always: a set that settled under kube-controller-manager keeps it as its status writer after
// Ordinal's controller takes the set over, until a change makes Ordinal write the status (rollout.OtherControllerSays).
func OtherController(live *appsv1.StatefulSet, ann map[string]string) string {
	if live == nil || !AsksOrdinal(ann) {
		return ""
	}
	if m := snapshot.StatusWriter(live); m != "" && m != snapshot.OrdinalFieldManager && m != snapshot.OrdinalMigrateFieldManager {
		return m
	}
	return ""
}

// lookup is the entry of Keys for key k.
func lookup(k string) (Key, bool) {
	i := slices.IndexFunc(Keys, func(e Key) bool { return e.Key == k })
	if i < 0 {
		return Key{}, false
	}
	return Keys[i], true
}

func sortedKeys(ann map[string]string) []string {
	ks := make([]string, 0, len(ann))
	for k := range ann {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// people are the keys people write (Keys, and the module's own extensions' annotations), without the
// prefix, as an UnknownAnnotation lists them: short enough for a webhook warning's 256 characters, with a
// space after each comma where a preview wraps its lines.
func people(exts []abi.Extension) string {
	var names []string
	add := func(k string) {
		if n := strings.TrimPrefix(k, abi.AnnotationPrefix); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, e := range Keys {
		if !e.Written {
			add(e.Key)
		}
	}
	for _, e := range exts {
		add(e.Annotation)
	}
	return abi.AnnotationPrefix + "{" + strings.Join(names, ", ") + "}"
}

// didYouMeanKey is " (did you mean K?)" for the known key k most likely misspells (didyoumean), else "".
func didYouMeanKey(k string, exts []abi.Extension) string {
	var cands []string
	for _, e := range Keys {
		cands = append(cands, strings.TrimPrefix(e.Key, abi.AnnotationPrefix))
	}
	for _, e := range exts {
		cands = append(cands, strings.TrimPrefix(e.Annotation, abi.AnnotationPrefix))
	}
	if c := didyoumean.Closest(strings.TrimPrefix(k, abi.AnnotationPrefix), cands); c != "" {
		return " (did you mean " + abi.AnnotationPrefix + c + "?)"
	}
	return ""
}

// didYouMeanValue is ` (did you mean "V"?)` for the value of the list v most likely misspells ("True"), else "".
func didYouMeanValue(v string, values []string) string {
	if c := didyoumean.Closest(v, values); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}
