// Package preview is what an edit to a live set will do, replayed before it is made: the controller's
// snapshot of the set as it is, the edit applied in the replay (host/replay) on the reconcile module, and
// the summary a person applying it reads. `kubectl ordinal preview` and the webhook share it.
package preview

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// Result is one preview: the engine's answer, the summary the warnings are made of, and the full text.
type Result struct {
	Preview *replay.Preview
	Summary Summary
	Text    string
	// Live objects the snapshot held.
	Pods, Revisions, Claims int
}

// Input is what Preview needs: the set before (nil for a create) and after the edit, the objects
// of its namespace (Objects.Set is ignored), the module and the snapshot's features and clock.
type Input struct {
	Old, New *appsv1.StatefulSet
	Objects  snapshot.Objects
	Module   hostplan.Reconciler
	// NamedModule gives the module the set names (ordinal.dev/module), as replay.Options.NamedModule.
	NamedModule func(ctx context.Context, name string) (hostplan.Reconciler, error)
	// NamedPolicy gives the policies a set names (ordinal.dev/policies), as replay.Options.NamedPolicy.
	NamedPolicy func(ctx context.Context, name string) (policy.Module, error)
	Features    map[string]bool
	Model       string
	Now         time.Time
	// Budget of the replay (zero: none but the scenario's limits and ctx).
	Budget replay.Budget
	// Progress, when set, is called after every replayed sync (a CLI's progress line).
	Progress func(replay.Progress)
	// What the set's policies read besides the snapshot (nil: nothing): PodDisruptionBudgets and Node
	// objects as the API server returns them, and the signals.
	Budgets, Nodes []json.RawMessage
	Signals        map[string]json.RawMessage
	// Events of the set (involvedObject the set; nil: none), from which the delays model learns how long its
	// pods take to go.
	Events []corev1.Event
}

// Preview builds the controller's snapshot of the set as it is (the old object, or for a create the new
// object with an empty status) and replays the new object applied to it. `kubectl ordinal preview` and the
// webhook share it.
func Preview(ctx context.Context, in Input) (*Result, error) {
	base := in.Old
	if base == nil {
		b := in.New.DeepCopy()
		b.Status = appsv1.StatefulSetStatus{}
		if b.UID == "" {
			b.UID = types.UID("00000000-0000-4000-8000-" + fmt.Sprintf("%012x", len(b.Name)))
		}
		base = b
	}
	objs := in.Objects
	objs.Set = base
	snap, sel, err := snapshot.Of(objs, in.Now, in.Features)
	if err != nil {
		return nil, err
	}
	sc, err := replay.ScenarioFromSnapshot(snap.JSON)
	if err != nil {
		return nil, err
	}
	sc.Manifests = append(append(sc.Manifests, in.Budgets...), in.Nodes...)
	if in.Model != replay.ModelTick {
		learnPace(&sc.Kubelet, sel.Pods, in.Events) // the next pods come up as the set's own did
	}
	sc.Signals = in.Signals
	edited := in.New.DeepCopy()
	t := in.Objects.Target
	if t.Kind == "" {
		t = snapshot.StatefulSetTarget
	}
	edited.TypeMeta = metav1.TypeMeta{APIVersion: t.APIVersion(), Kind: t.Kind}
	if in.Old == nil {
		edited.UID = base.UID
	}
	ej, err := json.Marshal(edited)
	if err != nil {
		return nil, err
	}
	p, err := replay.PreviewEdit(ctx, sc, ej, replay.Options{Module: in.Module, NamedModule: in.NamedModule, NamedPolicy: in.NamedPolicy, Model: in.Model, Budget: in.Budget, Progress: in.Progress})
	if err != nil {
		return nil, err
	}
	var text bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		return nil, err
	}
	return &Result{Preview: p, Summary: Summarize(p, in.Old, in.New, sel), Text: text.String(),
		Pods: len(sel.Pods), Revisions: len(sel.Revisions), Claims: len(sel.Claims)}, nil
}
