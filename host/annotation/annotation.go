// Package annotation is what the hosts know of a set's ordinal.dev/ annotations, and what they say of those
// the set's module will not act on as asked: an extension's annotation on a module without the extension
// (upstream's plan ignores it). Previews (and so the webhook's warnings) and the controller's events say
// the same findings, from Check.
package annotation

import (
	"fmt"
	"slices"
	"sort"

	"github.com/ordinal-dev/ordinal/abi"
)

// Finding codes: a preview's warning codes and the controller's event reasons.
const (
	ExtensionIgnored = "ExtensionIgnored" // the set turns on an extension its module does not have
)

// Key is an ordinal.dev/ annotation of a set that a host or a module reads.
type Key struct {
	Key string
	// Extension is the name of the extension (describe's extensions[].name) that reads it.
	Extension string
	// Off are the values that ask nothing of the extension; Instead is what upstream's plan does when the
	// module lacks it.
	Off     []string
	Instead string
}

// Keys are the set annotations that turn on the extended module's extensions (its describe's).
var Keys = []Key{
	{Key: abi.AnnotationPaused, Extension: "pause", Off: []string{"false"}, Instead: "the rollout is not paused"},
	{Key: abi.AnnotationRecoverStuckAfter, Extension: "recover-stuck", Instead: "a pod stuck at an old revision is not replaced"},
	{Key: abi.AnnotationReserveOrdinals, Extension: "reserve-ordinals", Instead: "the reserved ordinals are used"},
	{Key: abi.AnnotationResizeClaims, Extension: "resize-claims", Off: []string{"false"}, Instead: "no claim is resized"},
	{Key: abi.AnnotationProgressDeadlineSeconds, Extension: "progress-deadline", Instead: "the set gets no progress deadline and no rollout conditions"},
	{Key: abi.AnnotationPodUpdatePolicy, Extension: "in-place-update", Off: []string{abi.PodUpdateReCreate}, Instead: "pods are recreated as upstream does"},
}

// Finding is one thing a set's ordinal.dev/ annotations ask that its module will not do: Code (above) names
// it for programs, Message says it to people, naming the annotation.
type Finding struct {
	Code, Key, Message string
}

// Check finds, of the set's annotations ann, what its module (whose describe lists the extensions exts)
// will not act on as asked, in key order: each extension it turns on that the module lacks.
func Check(ann map[string]string, exts []abi.Extension) []Finding {
	has := func(name string) bool {
		return slices.ContainsFunc(exts, func(e abi.Extension) bool { return e.Name == name })
	}
	var out []Finding
	for _, k := range sortedKeys(ann) {
		v := ann[k]
		e, known := lookup(k)
		if known && !has(e.Extension) && !slices.Contains(e.Off, v) {
			out = append(out, Finding{ExtensionIgnored, k, fmt.Sprintf("%s: %q is ignored: the set's module does not have the extension %s (annotate the set %s: extended), so %s",
				k, v, e.Extension, abi.AnnotationModule, e.Instead)})
		}
	}
	return out
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
