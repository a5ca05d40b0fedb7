package replay

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// A scenario's events (edits, scaling, kubelet and operator actions, signals) applied to the world.

func (e *engine) applyEvent(ev Event) error {
	api := e.api
	note := func(format string, args ...any) { api.Note("user", "", "", "", format, args...) }
	if ev.Note != "" {
		api.Note("note", "", "", "", "%s", ev.Note)
	}
	switch ev.action() {
	case "apply":
		return e.applySet(ev.Apply, note)
	case "set":
		return e.setFields(ev.Set, note)
	case "recreateSet":
		return e.recreateSet(ev.RecreateSet, note)
	case "deletePod":
		if err := api.Delete(world.KindPod, ev.DeletePod, ""); err != nil {
			return invalidWorld("deletePod: %v", err)
		}
		note("deleted pod %s", ev.DeletePod)
	case "failPod", "completePod":
		name, phase := ev.FailPod, "Failed"
		if ev.CompletePod != "" {
			name, phase = ev.CompletePod, "Succeeded"
		}
		if api.Get(world.KindPod, name) == nil {
			return invalidWorld("%s: pods %q not found", ev.action(), name)
		}
		world.SetPhase(api, name, phase, e.clock.Now())
		note("pod %s is now %s", name, phase)
	case "unreadyPod":
		if !api.MutatePod(ev.UnreadyPod, func(p Obj) { world.SetReady(p, e.clock.Now(), false) }) {
			return invalidWorld("unreadyPod: pods %q not found", ev.UnreadyPod)
		}
		note("pod %s lost readiness", ev.UnreadyPod)
	case "labelPod":
		return e.labelPod(ev.LabelPod, note)
	case "signals":
		e.setSignals(ev.Signals, note)
	case "kubelet":
		e.kube.AddBehaviors(ev.Kubelet...)
		note("kubelet behaviour changed: %s", string(mustJSON(ev.Kubelet)))
	case "restartController":
		e.requeueAt, e.holdRetryAt = nil, nil
		e.failures = 0
		e.restoreMemory()
		note("controller restarted (work queue emptied, full resync)")
	case "swapModule":
		return e.swapModule(ev.SwapModule, note)
	case "wait":
		if ev.Note == "" {
			note("time passes")
		}
	}
	return nil
}

// noteFunc records what a user's event did, in the world's log.
type noteFunc func(format string, args ...any)

// applySet is `kubectl apply` of an edited set: a PUT over the set there (its resourceVersion taken).
func (e *engine) applySet(manifest json.RawMessage, note noteFunc) error {
	api := e.api
	o, _ := jsonobj.DecodeObj(manifest)
	cur := api.StatefulSet()
	md := jsonobj.Ensure(o, "metadata")
	md["resourceVersion"] = jsonobj.GetStr(cur, "metadata.resourceVersion")
	if err := api.Update(world.KindSet, o); err != nil {
		return invalidWorld("apply: %v", err)
	}
	note("applied an edited StatefulSet %s (generation %s)", jsonobj.GetStr(o, "metadata.name"), fmt.Sprint(jsonobj.Get(api.StatefulSet(), "metadata.generation")))
	return nil
}

// setFields edits fields of the set by path, in one update.
func (e *engine) setFields(set json.RawMessage, note noteFunc) error {
	edits, _ := jsonobj.DecodeObj(set)
	o := jsonobj.CloneObj(e.api.StatefulSet())
	keys := slices.Sorted(maps.Keys(edits))
	for _, k := range keys {
		// null removes the field (an empty map would hash differently from an absent one); an object
		// is merged into the one there, keeping its other keys (metadata.annotations: {a: b} keeps
		// ordinal.dev/policies)
		if err := jsonobj.MergeAt(o, k, edits[k]); err != nil {
			return invalidWorld("set: %v", err)
		}
	}
	if err := e.api.Update(world.KindSet, o); err != nil {
		return invalidWorld("set: %v", err)
	}
	for _, k := range keys {
		note("set %s = %s", k, string(mustJSON(edits[k])))
	}
	return nil
}

// recreateSet deletes the set with --cascade=orphan and creates it again from a manifest of the same name.
func (e *engine) recreateSet(manifest json.RawMessage, note noteFunc) error {
	api := e.api
	o, _ := jsonobj.DecodeObj(manifest)
	name := jsonobj.GetStr(api.StatefulSet(), "metadata.name")
	if n := jsonobj.GetStr(o, "metadata.name"); n != name {
		return invalidWorld("recreateSet: the manifest names StatefulSet %q, not %q", n, name)
	}
	if ns := jsonobj.GetStr(o, "metadata.namespace"); ns != "" && ns != api.Namespace() {
		return invalidWorld("recreateSet: the manifest's namespace %q is not the world's %q", ns, api.Namespace())
	}
	jsonobj.Ensure(o, "metadata")["namespace"] = api.Namespace()
	for _, k := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp"} {
		delete(jsonobj.GetObj(o, "metadata"), k) // the API server's, for a new object
	}
	delete(o, "status")
	check := jsonobj.CloneObj(o) // refused as a create is refused, before anything is orphaned
	kube.DefaultStatefulSet(check)
	if err := world.APIAnswer(kube.ValidateStatefulSet(check, api.Gates)); err != nil {
		return invalidWorld("recreateSet: %v", err)
	}
	api.OrphanSet()
	if err := api.Create(world.KindSet, o); err != nil {
		return invalidWorld("recreateSet: %v", err)
	}
	note("deleted StatefulSet %s with --cascade=orphan (its pods, revisions and claims stay) and created it again (uid %s)", name, jsonobj.GetStr(api.StatefulSet(), "metadata.uid"))
	return nil
}

// labelPod sets or removes (null) labels of a pod, validated as kube-apiserver validates a label patch.
func (e *engine) labelPod(l *PodLabels, note noteFunc) error {
	if len(l.Labels) == 0 {
		return invalidWorld("labelPod: pod %q: no labels to set or remove", l.Pod)
	}
	keys := slices.Sorted(maps.Keys(l.Labels))
	for _, k := range keys {
		errs := validation.IsQualifiedName(k)
		if v := l.Labels[k]; v != nil {
			errs = append(errs, validation.IsValidLabelValue(*v)...)
		}
		if len(errs) > 0 {
			return invalidWorld("labelPod: label %s: %s", k, strings.Join(errs, "; "))
		}
	}
	if !e.api.MutatePod(l.Pod, func(p Obj) {
		labels := jsonobj.Ensure(jsonobj.Ensure(p, "metadata"), "labels")
		for _, k := range keys {
			if v := l.Labels[k]; v == nil {
				delete(labels, k)
			} else {
				labels[k] = *v
			}
		}
	}) {
		return invalidWorld("labelPod: pods %q not found", l.Pod)
	}
	for _, k := range keys {
		if v := l.Labels[k]; v == nil {
			note("label %s removed from pod %s", k, l.Pod)
		} else {
			note("pod %s labelled %s=%s", l.Pod, k, *v)
		}
	}
	return nil
}

// swapModule loads another module (a path relative to the scenario's directory) for the syncs after.
func (e *engine) swapModule(path string, note noteFunc) error {
	given := path
	if !filepath.IsAbs(path) && e.sc.Dir != "" {
		path = filepath.Join(e.sc.Dir, path)
	}
	if e.opts.LoadModule == nil {
		return invalidWorld("swapModule %s: this replay cannot load modules", given)
	}
	m, err := e.opts.LoadModule(e.ctx, path)
	if err != nil {
		return fmt.Errorf("swapModule %s: %w", given, err)
	}
	e.module = m
	note("controller now runs module %s", given)
	return nil
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
