package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
	"github.com/ordinal-dev/ordinal/internal/yamljson"
)

// The four documents the commands read, YAML or JSON alike: an ABI snapshot, a StatefulSet manifest, a
// replay scenario, and a kubectl List (`kubectl get statefulset/web,pods,controllerrevisions,pvc -o
// yaml`), which stands for the snapshot built from its objects. A command given one it does not take
// says which command (or flag) does.
type inputKind string

const (
	inputUnknown  inputKind = ""
	inputSnapshot inputKind = "a snapshot"
	inputManifest inputKind = "a StatefulSet manifest"
	inputScenario inputKind = "a replay scenario"
	inputList     inputKind = "a kubectl List"
)

// input is a recognised document: its kind and its JSON form.
type input struct {
	kind   inputKind
	json   []byte
	text   jsonv.Text // json as jsonv.Validate accepted it (recognise's one validating pass)
	set    jsonv.Text // text's last statefulSet member, as the module reads it ("" when it has none)
	raw    []byte     // as read
	other  string     // the kind of a Kubernetes object that is none of the four (e.g. Deployment)
	memory int64      // the memory limit of the module it is for, in bytes (moduleOptions.recognise; 0: none)
	err    error      // why the document cannot be read (not YAML, several documents, ...)
}

// recognise reads the kind of a document. JSON (it starts with '{') is taken as it is, so that a broken
// snapshot reaches the module, which says what is wrong with it. A YAML stream of several documents
// (kubectl apply -f's layout: a Service, then the StatefulSet) stands for its one StatefulSet; any other
// stream of several documents is refused rather than cut to its first. b was read with limit.
func recognise(b []byte, limit int64) input {
	in := input{raw: b}
	var top topMembers
	if yamljson.IsJSON(b) {
		t := bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n")
		var ok bool
		if top, ok = readTop(t); !ok {
			return in // the module's InvalidJSON says where
		}
		in.json = t
	} else {
		docs, err := yamljson.Documents(b, limit)
		switch {
		case err != nil:
			in.err = err
			return in
		case len(docs) == 0:
			in.err = fmt.Errorf("the document is empty")
			return in
		case len(docs) == 1:
			in.json = docs[0]
		default:
			var sets [][]byte
			for _, d := range docs {
				if m, _ := readTop(d); m.kind == "StatefulSet" {
					sets = append(sets, d)
				}
			}
			if len(sets) != 1 {
				in.err = fmt.Errorf("the file holds %d YAML documents, %d of them StatefulSets; give one StatefulSet (or one snapshot, scenario or List) per file", len(docs), len(sets))
				return in
			}
			in.json = sets[0]
		}
		var ok bool
		if top, ok = readTop(in.json); !ok {
			in.err = fmt.Errorf("not a JSON or YAML object")
			return in
		}
	}
	in.text, in.set = top.text, top.set
	switch {
	case top.abi || top.statefulSet:
		in.kind = inputSnapshot
	case top.kind == "StatefulSet":
		in.kind = inputManifest
	case top.items && (top.kind == "List" || strings.HasSuffix(top.kind, "List")):
		in.kind = inputList
	case top.manifests || top.events:
		in.kind = inputScenario
	case top.kind != "":
		in.other = top.kind
	}
	if in.kind == inputManifest || in.kind == inputScenario {
		// kube-apiserver's strict field validation refuses a field given twice; JSON would keep the last.
		// (A snapshot is the module's to judge: there the last one wins, abi/README.md.)
		var v map[string]any
		if strict, err := sigsjson.UnmarshalStrict(in.json, &v, sigsjson.DisallowDuplicateFields); err == nil && len(strict) > 0 {
			in.kind, in.err = inputUnknown, fmt.Errorf("strict decoding error: %v", strict[0])
		}
	}
	return in
}

// recognise is recognise for a command that runs o's module: a List's snapshot is bounded by its memory.
func (o *moduleOptions) recognise(b []byte, limit int64) input {
	in := recognise(b, limit)
	in.memory = int64(o.memoryLimitMB) << 20
	return in
}

// topMembers are the top-level members that tell the documents apart.
type topMembers struct {
	abi, statefulSet, items, manifests, events bool
	kind                                       string
	text                                       jsonv.Text // the document, validated
	set                                        jsonv.Text // the last statefulSet member's value
}

// readTop reads them in one validating pass with the module's own JSON reader (guest/jsonv), so a
// snapshot of thousands of pods is not decoded to be recognised; ok is false for anything but a valid
// JSON object.
func readTop(js []byte) (m topMembers, ok bool) {
	t, members, err := jsonv.ValidateMembers(js) // where each member starts: no value skipped to find the next
	if err != nil || t.Kind() != jsonv.Object {
		return m, false
	}
	m.text = t
	for _, i := range members {
		k, v, _ := t.MemberAt(i)
		switch k {
		case "abi":
			m.abi = true
		case "statefulSet":
			m.statefulSet = true
			val := t[v:]
			m.set = val[:val.ValueEnd()] // the last one given, as the module reads it
		case "items":
			m.items = true
		case "manifests":
			m.manifests = true
		case "events":
			m.events = true
		case "kind":
			val := t[v:]
			m.kind = val[:val.ValueEnd()].Str()
		}
	}
	return m, true
}

// unreadable is the usage error for a document that is none of the four, or cannot be read.
func (in input) unreadable(file, wanted string) error {
	switch {
	case in.err != nil:
		return withCode(ExitUsage, fmt.Errorf("%s: %v", displayName(file), in.err))
	case in.other != "":
		return withCode(ExitUsage, fmt.Errorf("%s is a %s, not %s", displayName(file), in.other, wanted))
	}
	return nil
}

// whereTo says which command takes a document of kind k (named file).
func whereTo(k inputKind, file string) string {
	switch k {
	case inputSnapshot:
		return fmt.Sprintf("`ordinal reconcile -f %s` runs one sync on it, `ordinal replay %[1]s` replays its rollout, `ordinal preview -f EDITED --from %[1]s` previews an edit against it", file)
	case inputManifest:
		return fmt.Sprintf("`ordinal preview -f %s --from SNAPSHOT` (or `--scenario`) previews it against a recorded world, `kubectl ordinal preview -f %[1]s` against the live set, `ordinal replay %[1]s` replays creating it", file)
	case inputScenario:
		return fmt.Sprintf("`ordinal replay %s` replays it, `ordinal preview -f EDITED --scenario %[1]s` previews an edit against its end state", file)
	case inputList:
		return fmt.Sprintf("`ordinal reconcile -f %s`, `ordinal replay %[1]s` and `ordinal preview --from %[1]s` take it as the snapshot of its StatefulSet", file)
	}
	return ""
}

// wrongInput is the usage error for a document a command does not take.
func wrongInput(in input, file, wanted string) error {
	return withCode(ExitUsage, fmt.Errorf("%s is %s, not %s: %s", displayName(file), in.kind, wanted, whereTo(in.kind, displayName(file))))
}

func displayName(file string) string {
	if file == "" || file == "-" {
		return "-"
	}
	return file
}

// snapshotFile is a snapshot as a command read it: the bytes the module is given, and its set as the module
// reads it (the last statefulSet member), found by the one validating pass that read the file, so that what
// the CLI reads of the set (the module it names, its policies, -n's check, the text output) costs no
// second reading of thousands of pods.
type snapshotFile struct {
	json   []byte
	object bool       // json is a valid JSON object (else the module says what is wrong with it)
	set    jsonv.Text // "" when it names no set
}

// readSnapshotFile is the snapshotFile of a snapshot the CLI built or changed (a List's, one with unknown
// fields dropped): readTop's one validating pass, no pod read.
func readSnapshotFile(snapshot []byte) snapshotFile {
	top, ok := readTop(snapshot)
	return snapshotFile{json: snapshot, object: ok, set: top.set}
}

// setMeta is the set's apiVersion, namespace and name as the module reads them (its setMeta): each key as
// spelt and the last of a key given twice (encoding/json would take "Name" for name, and merge two metadata
// objects into one), no namespace as "default", "" for what is not a string or a set that is not an object.
func (f snapshotFile) setMeta() (apiVersion, namespace, name string) {
	if f.set == "" || f.set.Kind() != jsonv.Object {
		return "", "", ""
	}
	var top [1]jsonv.Text
	f.set.MembersInto([]string{"apiVersion"}, top[:])
	apiVersion = top[0].Str()
	if meta := memberObject(f.set, "metadata"); meta != "" {
		var v [2]jsonv.Text
		meta.MembersInto([]string{"namespace", "name"}, v[:])
		namespace, name = v[0].Str(), v[1].Str()
	}
	if namespace == "" {
		namespace = "default"
	}
	return apiVersion, namespace, name
}

// setStatus is the set's status as the module reads it (the last status member; nil when it is not an object).
func (f snapshotFile) setStatus() map[string]any {
	var status map[string]any
	if t := memberObject(f.set, "status"); t != "" {
		_ = json.Unmarshal(snapshot.TextBytes(t), &status)
	}
	return status
}

// snapshotOfList builds the snapshot of the List's StatefulSet (the chosen one, when it holds several)
// from the List's pods, ControllerRevisions and PVCs of its namespace, as the controller would build it at now.
//
// The objects' unknown fields (kube.UnknownFields, by their paths in the List) are reported to v and
// dropped.
func snapshotOfList(js []byte, now time.Time, choice setChoice, v fieldValidation, file string, limit int64) ([]byte, error) {
	items, err := listItems(js)
	if err != nil {
		return nil, err
	}
	kinds, objs, err := listSets(items, choice, v, file)
	if err != nil {
		return nil, err
	}
	if err := listSetObjects(items, kinds, &objs, limit); err != nil {
		return nil, err
	}
	snap, _, err := snapshot.Of(objs, now, nil)
	if err != nil {
		return nil, err
	}
	return snap.JSON, nil
}

// listSets reads the kind of each item (items' unknown fields dropped in place, reported to v) and the
// List's StatefulSets, and returns the chosen one in objs.
func listSets(items [][]byte, choice setChoice, v fieldValidation, file string) ([]string, snapshot.Objects, error) {
	var objs snapshot.Objects
	var sets, all []string
	var example string // how to choose the first of several sets: its argument and namespace
	var fields kube.FieldChecker
	var unknown []fieldcheck.Unknown
	kinds := make([]string, len(items))
	for i, raw := range items {
		var tm struct{ APIVersion, Kind string }
		if err := json.Unmarshal(raw, &tm); err != nil {
			return nil, objs, fmt.Errorf("items[%d]: %w", i, err)
		}
		kinds[i] = tm.Kind
		us := fields.UnknownFields(tm.Kind, raw)
		unknown = append(unknown, fieldcheck.In(us, "items", i)...)
		items[i] = fieldcheck.Drop(raw, us) // before Go's decoder, which would read a "Spec" as spec
		if tm.Kind != "StatefulSet" {
			continue
		}
		s := &appsv1.StatefulSet{}
		if err := json.Unmarshal(items[i], s); err != nil {
			return nil, objs, fmt.Errorf("items[%d] (%s): %w", i, tm.Kind, err)
		}
		label := s.Namespace + "/" + s.Name
		if t := setTarget(tm.APIVersion); t.Custom {
			label = t.String() + " " + label // two kinds may hold one name
		}
		all = append(all, label)
		if choice.matches(tm.APIVersion, s.Namespace, s.Name) {
			objs.Set, objs.Target = s, setTarget(tm.APIVersion)
			sets = append(sets, label)
			if example == "" {
				example = "statefulset/" + s.Name
				if setTarget(tm.APIVersion).Custom {
					example = "osts/" + s.Name
				}
				example = fmt.Sprintf("`%s -n %s`", example, s.Namespace)
			}
		}
	}
	if err := v.report(file, unknown); err != nil {
		return nil, objs, err
	}
	switch {
	case len(sets) == 0 && !choice.empty():
		return nil, objs, fmt.Errorf("the List holds no StatefulSet %s (it holds %d: %s)", choice, len(all), strings.Join(all, ", "))
	case len(sets) != 1:
		return nil, objs, fmt.Errorf("the List holds %d StatefulSets (%s); a snapshot is about exactly one: name it after the file, e.g. %s, or list one: `kubectl get statefulset/NAME,pods,controllerrevisions,pvc -o yaml`", len(sets), strings.Join(sets, ", "), example)
	}
	return kinds, objs, nil
}

// listSetObjects decodes each pod, ControllerRevision and PVC of the List and keeps those of objs.Set's
// snapshot (snapshot.Selection): the others are read and let go, so a List of a namespace's thousands of
// objects costs its size, not theirs decoded (a 33 MB List of 336,000 small pods took 1.35 GB). A set with
// more of one kind than a snapshot the module's memory (limit, in bytes; 0: none) could hold is refused
// once that many are kept.
func listSetObjects(items [][]byte, kinds []string, objs *snapshot.Objects, limit int64) error {
	sel, err := snapshot.NewSelection(objs.Set)
	if err != nil {
		return err
	}
	most := listObjectsMost(limit)
	for i, raw := range items {
		var kept, bound int
		switch kinds[i] {
		case "Pod":
			p := &corev1.Pod{}
			if err = json.Unmarshal(raw, p); err == nil && sel.Pod(&p.ObjectMeta) {
				objs.Pods = append(objs.Pods, p)
				kept, bound = len(objs.Pods), most
			}
		case "ControllerRevision":
			r := &appsv1.ControllerRevision{}
			if err = json.Unmarshal(raw, r); err == nil && sel.Revision(&r.ObjectMeta) {
				objs.Revisions = append(objs.Revisions, r)
				kept, bound = len(objs.Revisions), most
			}
		case "PersistentVolumeClaim":
			c := &corev1.PersistentVolumeClaim{}
			if err = json.Unmarshal(raw, c); err == nil && sel.Claim(&c.ObjectMeta) {
				objs.Claims = append(objs.Claims, c)
				kept, bound = len(objs.Claims), most*max(1, len(objs.Set.Spec.VolumeClaimTemplates))
			}
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("items[%d] (%s): %w", i, kinds[i], err)
		}
		if most > 0 && kept > bound {
			return fmt.Errorf("the List holds more than %d %ss of StatefulSet %s/%s, more than a snapshot holds with the module's %d MiB memory limit (raise it with --memory-limit-mib)",
				bound, kinds[i], objs.Set.Namespace, objs.Set.Name, limit>>20)
		}
	}
	return nil
}

// listObjectsMost is the most objects of one kind (claims: of one template) a List may hold of its set
// with the module's memory limit (bytes; 0: no bound): twice the replicas a replay takes with it, the
// measured bound of what a snapshot holds (replay.MaxReplicas: a snapshot of 12,000 pods does not fit in
// the default 256 MiB).
func listObjectsMost(limit int64) int {
	if limit <= 0 {
		return 0
	}
	return 2 * int(replay.MaxReplicas(uint32(min(limit>>16, math.MaxUint32))))
}

// listItems are the items of a List, each sharing js's memory (a List of 30 MB is not copied to be read),
// as Go's decoder reads them: the last "items" member, none when it is null.
func listItems(js []byte) ([][]byte, error) {
	t, err := jsonv.Validate(js)
	if err != nil {
		return nil, err
	}
	if t.Kind() != jsonv.Object {
		return nil, fmt.Errorf("a List is a JSON object")
	}
	var items jsonv.Text
	t.Members(func(k string, v jsonv.Text) {
		if k == "items" {
			items = v
		}
	})
	switch {
	case items == "" || items.Kind() == jsonv.Null:
		return nil, nil
	case items.Kind() != jsonv.Array:
		return nil, fmt.Errorf("items: want an array, not %s", items.Kind())
	}
	var out [][]byte
	items.Items(func(_ int, v jsonv.Text) { out = append(out, snapshot.TextBytes(v)) })
	return out, nil
}

// snapshotInput returns the snapshot a command that runs on one (reconcile, preview --from, replay) reads
// from in: a JSON snapshot unmodified (the module judges it, bytes and all) but for the unknown fields of its
// objects, a YAML one as JSON, a List's built snapshot; anything else is refused with the command that
// takes it. This is the one reading of a snapshot file: a member the ABI does not define is an error (a
// misspelt statefulSet is not "no statefulSet"), an unknown field of its objects is v's to judge, and
// dropped (the module would carry a template's into revisions and pods: a real API server stores none).
func snapshotInput(in input, file string, choice setChoice, v fieldValidation) (snapshotFile, error) {
	switch in.kind {
	case inputSnapshot:
		envelope, objects := snapshot.UnknownFields(in.text)
		if len(envelope) > 0 {
			return snapshotFile{}, ownFormat(file, envelope)
		}
		if err := v.report(file, objects); err != nil {
			return snapshotFile{}, err
		}
		f := snapshotFile{json: in.json, object: true, set: in.set} // JSON as read (less leading blanks), or YAML as JSON
		if len(objects) > 0 {
			f = readSnapshotFile(fieldcheck.Drop(in.json, objects))
		}
		if err := choice.checkSnapshot(f); err != nil {
			return snapshotFile{}, withCode(ExitUsage, fmt.Errorf("%s: %w", displayName(file), err))
		}
		return f, nil
	case inputList:
		s, err := snapshotOfList(in.json, time.Now(), choice, v, file, in.memory)
		var usage *exitError
		if errors.As(err, &usage) {
			return snapshotFile{}, err
		}
		if err != nil {
			return snapshotFile{}, withCode(ExitUsage, fmt.Errorf("%s: %w", displayName(file), err))
		}
		return readSnapshotFile(s), nil
	case inputManifest, inputScenario:
		return snapshotFile{}, wrongInput(in, file, "a snapshot")
	}
	if err := in.unreadable(file, "a snapshot"); err != nil {
		return snapshotFile{}, err
	}
	f := readSnapshotFile(in.raw) // JSON that is not valid, or no snapshot: the module says what is wrong with it
	if err := choice.checkSnapshot(f); err != nil {
		return snapshotFile{}, withCode(ExitUsage, fmt.Errorf("%s: %w", displayName(file), err))
	}
	return f, nil
}

// scenarioInput returns the scenario `replay` runs for in: a scenario as it is, the world of a snapshot
// or a List, or the creation of a manifest's set. The snapshot of a snapshot or a List, and JSON that is
// not valid, is returned too: the module judges it first, as `reconcile` would (issue 32, finding 9).
func scenarioInput(in input, file string, choice setChoice, v fieldValidation) (*replay.Scenario, *snapshotFile, error) {
	switch in.kind {
	case inputSnapshot, inputList:
		snap, err := snapshotInput(in, file, choice, v)
		if err != nil {
			return nil, nil, err
		}
		sc, err := replay.ScenarioFromSnapshot(snap.json)
		if err != nil {
			return nil, &snap, withCode(ExitUsage, fmt.Errorf("%s: %w", displayName(file), err))
		}
		return sc, &snap, nil
	case inputManifest:
		var md struct {
			APIVersion string                           `json:"apiVersion"`
			Metadata   struct{ Name, Namespace string } `json:"metadata"`
		}
		manifest, err := v.manifest(in.json, file, "StatefulSet")
		if err != nil {
			return nil, nil, err
		}
		// read without its unknown fields: encoding/json would take a misspelt "Name" for name
		_ = json.Unmarshal(manifest, &md)
		if choice.namespace != "" && md.Metadata.Namespace == "" { // kubectl apply -n: the manifest's namespace
			var m map[string]any
			if err := json.Unmarshal(manifest, &m); err == nil {
				if meta, ok := m["metadata"].(map[string]any); ok {
					meta["namespace"] = choice.namespace
					md.Metadata.Namespace = choice.namespace
					manifest, _ = json.Marshal(m)
				}
			}
		}
		if !choice.matches(md.APIVersion, md.Metadata.Namespace, md.Metadata.Name) {
			return nil, nil, withCode(ExitUsage, fmt.Errorf("%s: the manifest's StatefulSet is %s/%s, not %s", displayName(file), md.Metadata.Namespace, md.Metadata.Name, choice))
		}
		doc, _ := json.Marshal(map[string]any{"name": md.Metadata.Name, "description": "create " + displayName(file),
			"manifests": []json.RawMessage{manifest}})
		sc, err := replay.ParseScenario(doc)
		if err != nil {
			return nil, nil, withCode(ExitUsage, fmt.Errorf("%s: %w", displayName(file), err))
		}
		return sc, nil, nil
	}
	if err := in.unreadable(file, "a scenario"); err != nil {
		return nil, nil, err
	}
	if in.json == nil {
		return nil, &snapshotFile{json: in.raw}, nil // JSON that is not valid: the module says what is wrong with it, not a YAML parser
	}
	if !choice.empty() {
		return nil, nil, withCode(ExitUsage, fmt.Errorf("%s: a scenario names its own objects; -n and statefulset/NAME choose among the objects of a snapshot, a List or a manifest", displayName(file)))
	}
	return nil, nil, nil // a scenario: the scenario loader says what is wrong
}
