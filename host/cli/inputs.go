package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/host/controller"
	"github.com/ordinal-dev/ordinal/host/replay"
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
	kind inputKind
	json []byte
	raw  []byte // as read
}

// recognise reads the kind of a document. A document it cannot read as YAML or JSON is inputUnknown (the
// command then reports its own error, e.g. the module's InvalidJSON for a snapshot).
func recognise(b []byte) input {
	in := input{raw: b}
	js := b
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' || !json.Valid(b) {
		var err error
		if js, err = yaml.YAMLToJSON(b); err != nil {
			return in
		}
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(js, &top) != nil {
		return in
	}
	in.json = js
	var kind string
	_ = json.Unmarshal(top["kind"], &kind)
	switch {
	case top["abi"] != nil || top["statefulSet"] != nil:
		in.kind = inputSnapshot
	case kind == "StatefulSet":
		in.kind = inputManifest
	case top["items"] != nil && (kind == "List" || strings.HasSuffix(kind, "List")):
		in.kind = inputList
	case top["manifests"] != nil || top["events"] != nil:
		in.kind = inputScenario
	}
	return in
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

// snapshotOfList builds the snapshot of the one StatefulSet of a kubectl List from the List's pods,
// ControllerRevisions and PVCs, as the controller would build it at now.
func snapshotOfList(js []byte, now time.Time) ([]byte, error) {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(js, &list); err != nil {
		return nil, err
	}
	var objs controller.Objects
	var sets []string
	for i, raw := range list.Items {
		var tm struct{ Kind string }
		if err := json.Unmarshal(raw, &tm); err != nil {
			return nil, fmt.Errorf("items[%d]: %w", i, err)
		}
		var err error
		switch tm.Kind {
		case "StatefulSet":
			s := &appsv1.StatefulSet{}
			err = json.Unmarshal(raw, s)
			objs.Set = s
			sets = append(sets, s.Name)
		case "Pod":
			p := &corev1.Pod{}
			err = json.Unmarshal(raw, p)
			objs.Pods = append(objs.Pods, p)
		case "ControllerRevision":
			r := &appsv1.ControllerRevision{}
			err = json.Unmarshal(raw, r)
			objs.Revisions = append(objs.Revisions, r)
		case "PersistentVolumeClaim":
			c := &corev1.PersistentVolumeClaim{}
			err = json.Unmarshal(raw, c)
			objs.Claims = append(objs.Claims, c)
		}
		if err != nil {
			return nil, fmt.Errorf("items[%d] (%s): %w", i, tm.Kind, err)
		}
	}
	if len(sets) != 1 {
		return nil, fmt.Errorf("the List holds %d StatefulSets (%s); a snapshot is about exactly one: `kubectl get statefulset/NAME,pods,controllerrevisions,pvc -o yaml`", len(sets), strings.Join(sets, ", "))
	}
	snap, _, err := controller.SnapshotOf(objs, now, nil)
	if err != nil {
		return nil, err
	}
	return snap.JSON, nil
}

// snapshotInput returns the snapshot a command that runs on one (reconcile, preview --from) reads from
// in: a JSON snapshot unmodified (the module judges it, bytes and all), a YAML one as JSON, a List's
// built snapshot; anything else is refused with the command that takes it.
func snapshotInput(in input, file string) ([]byte, error) {
	switch in.kind {
	case inputSnapshot:
		if json.Valid(in.raw) {
			return in.raw, nil
		}
		return in.json, nil
	case inputList:
		s, err := snapshotOfList(in.json, time.Now())
		if err != nil {
			return nil, withCode(ExitUsage, fmt.Errorf("%s: %w", displayName(file), err))
		}
		return s, nil
	case inputManifest, inputScenario:
		return nil, wrongInput(in, file, "a snapshot")
	}
	return in.raw, nil // not recognisable: the module says what is wrong with it
}

// scenarioInput returns the scenario `replay` runs for in: a scenario as it is, the world of a snapshot
// or a List, or the creation of a manifest's set.
func scenarioInput(in input, file string) (*replay.Scenario, error) {
	switch in.kind {
	case inputSnapshot, inputList:
		snap, err := snapshotInput(in, file)
		if err != nil {
			return nil, err
		}
		sc, err := replay.ScenarioFromSnapshot(snap)
		if err != nil {
			return nil, withCode(ExitUsage, fmt.Errorf("%s: %w", displayName(file), err))
		}
		return sc, nil
	case inputManifest:
		var md struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		_ = json.Unmarshal(in.json, &md)
		doc, _ := json.Marshal(map[string]any{"name": md.Metadata.Name, "description": "create " + displayName(file),
			"manifests": []json.RawMessage{in.json}})
		sc, err := replay.ParseScenario(doc)
		if err != nil {
			return nil, withCode(ExitUsage, fmt.Errorf("%s: %w", displayName(file), err))
		}
		return sc, nil
	}
	return nil, nil // a scenario, or unrecognisable: the scenario loader says what is wrong
}
