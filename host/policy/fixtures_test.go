package policy

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/policies"
	"github.com/ordinal-dev/ordinal/policies/kit/kittest"
)

// recording is a policy whose inputs and answers are kept.
type recording struct {
	Module
	inputs, answers [][]byte
}

func (r *recording) Evaluate(ctx context.Context, input []byte) ([]byte, error) {
	out, err := r.Module.Evaluate(ctx, input)
	r.inputs, r.answers = append(r.inputs, input), append(r.answers, out)
	return out, err
}

// A fixture's input is a whole snapshot and what the host knows beside it; a host gives a policy less (the
// plan's objects, not the whole snapshot, unless describe asks for it; context "disrupted" written by the
// host instead of the policy reading every pod). Every shipped policy, given each of its fixtures as Run
// writes its input from the fixture's snapshot, plan and context, answers what the fixture says: what a host
// leaves out is what the policy does not read. A plan with nothing a policy may hold is not shown to it,
// and the fixture's answer to it holds nothing. The host takes every answer that spends: what the shipped
// policies spend is in contract.
func TestHostInputsGetTheFixturesAnswers(t *testing.T) {
	for name, code := range policies.Builtin() {
		t.Run(name, func(t *testing.T) {
			p, err := wasm.LoadPolicy(context.Background(), code, wasm.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			for _, fx := range kittest.Load(t, filepath.Join("..", "..", "policies", name)) {
				var in struct {
					Snapshot json.RawMessage
					Plan     abi.Plan
					From     int
					Context  abi.PolicyContext
				}
				if err := json.Unmarshal(fx.Input, &in); err != nil {
					t.Fatalf("%s: %v", fx.Name, err)
				}
				rec := &recording{Module: p}
				var failed []Failure
				run := &Run{Policies: []Module{rec}, Snapshot: in.Snapshot, Signals: in.Context.Signals, Memory: &Memory{},
					PodDisruptionBudgets: in.Context.PodDisruptionBudgets, Nodes: in.Context.Nodes,
					Failed: func(f Failure) { failed = append(failed, f) }}
				for _, h := range in.Context.Held {
					since, err := time.Parse(time.RFC3339Nano, h.Since)
					if err != nil {
						t.Fatalf("%s: %v", fx.Name, err)
					}
					run.Memory.setSince(name, heldKey{h.Verb, h.Kind, h.Name}, since)
				}
				run.Judge(context.Background(), &in.Plan, in.From)
				if len(rec.answers) == 0 {
					if holds := gjson.GetBytes(fx.Answer, "holds"); len(holds.Array()) != 0 {
						t.Errorf("%s: not asked, and the fixture holds %s", fx.Name, holds.Raw)
					}
					continue
				}
				// An answer that spends is in contract: the host takes it (its spends of deletes and in-place updates).
				if len(failed) > 0 && gjson.GetBytes(fx.Answer, "spends").Exists() {
					t.Errorf("%s: the host refused the answer: %v", fx.Name, failed[0])
				}
				if !kittest.SameAnswer(rec.answers[0], fx.Answer) {
					t.Errorf("%s (%s), given\n%s\nanswer %s\nwant   %s", fx.Name, fx.Description, rec.inputs[0], rec.answers[0], fx.Answer)
				}
				if !p.Wants(abi.ContextSnapshot) && len(rec.inputs[0]) >= len(fx.Input) && strings.Contains(string(in.Snapshot), `"pods":[{`) {
					t.Errorf("%s: the host's input (%d bytes) is no smaller than the whole snapshot's (%d)", fx.Name, len(rec.inputs[0]), len(fx.Input))
				}
			}
		})
	}
}

// Healthy (a host's typed pods) and healthyJSON (a snapshot's) agree on every pod, as the snapshot encodes it.
func TestHealthyOfTypedAndEncodedPodsAgree(t *testing.T) {
	now := metav1.Now()
	cond := func(typ corev1.PodConditionType, st corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: st}
	}
	for _, c := range []struct {
		name string
		pod  corev1.Pod
		want bool
	}{
		{"ready", corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodScheduled, "True"), cond(corev1.PodReady, "True")}}}, true},
		{"not ready", corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, "False")}}}, false},
		{"unknown", corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, "Unknown")}}}, false},
		{"no conditions", corev1.Pod{}, false},
		{"the first Ready counts", corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, "False"), cond(corev1.PodReady, "True")}}}, false},
		{"terminating", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, "True")}}}, false},
		// updated in place: Ready until the kubelet restarts its containers, yet going down
		{"updated in place, not restarted", inPlacePod("web-b", "nginx:0.27"), false},
		{"updated in place, restarted", inPlacePod("web-b", "nginx:0.28"), true},
		{"an old in-place record", inPlacePod("web-a", "nginx:0.27"), true}, // moved since by other means: the label rules
	} {
		raw, err := json.Marshal(&c.pod)
		if err != nil {
			t.Fatal(err)
		}
		if got, enc := Healthy(&c.pod), healthyJSON(gjson.ParseBytes(raw)); got != c.want || enc != c.want {
			t.Errorf("%s: Healthy %v, healthyJSON %v, want %v", c.name, got, enc, c.want)
		}
	}
}

// Context "disrupted": the pods not healthy in the snapshot's order, and the replicas without a pod in
// ordinal order, from spec.ordinals.start; a set of very many replicas and no pods names a bounded number.
func TestDisruptedListsPodsDownAndReplicasMissing(t *testing.T) {
	set := gjson.Parse(`{"metadata":{"name":"web"},"spec":{"replicas":5,"ordinals":{"start":2}}}`)
	pods := Pods{Names: []string{"web-5", "web-2", "web-3", "other-0", "web-04", "web-+6", "web-1"},
		Down: []json.RawMessage{json.RawMessage(`{"n":5}`), json.RawMessage(`{"n":3}`), json.RawMessage(`{"o":0}`)}}
	got, _ := json.Marshal(disruptedOf(set, pods))
	if want := `{"pods":[{"n":5},{"n":3},{"o":0}],"missing":["web-4","web-6"]}`; string(got) != want {
		t.Fatalf("disrupted %s\nwant      %s", got, want)
	}
	huge := disruptedOf(gjson.Parse(`{"metadata":{"name":"web"},"spec":{"replicas":2000000000}}`), Pods{})
	if len(huge.Missing) != abi.MaxDisruptedMissing || huge.Missing[0] != "web-0" {
		t.Fatalf("%d missing, from %v", len(huge.Missing), huge.Missing[:1])
	}
	if none, _ := json.Marshal(disruptedOf(gjson.Parse(`{"metadata":{"name":"web"}}`), Pods{})); string(none) != `{"pods":[],"missing":[]}` {
		t.Fatalf("a set without replicas: %s", none)
	}
}

// ordinalIn reads what strconv.FormatInt writes, and nothing else.
func TestOrdinalInReadsWhatFormatIntWrites(t *testing.T) {
	for _, v := range []int64{0, 7, 10, 999, -1, -42, 123456789012345678, -123456789012345678} {
		if got, ok := ordinalIn(strconv.FormatInt(v, 10)); !ok || got != v {
			t.Errorf("ordinalIn(%d) = %d, %v", v, got, ok)
		}
	}
	for _, s := range []string{"", "-", "-0", "00", "07", "+7", "7a", " 7", "1234567890123456789", "٣"} {
		if v, ok := ordinalIn(s); ok {
			t.Errorf("ordinalIn(%q) = %d, ok", s, v)
		}
	}
}

// inPlacePod is a Ready pod at revision web-b whose spec runs nginx:0.28, its in-place record naming record
// and its container's status reporting image.
func inPlacePod(record, image string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Labels: map[string]string{"controller-revision-hash": "web-b"},
			Annotations: map[string]string{"ordinal.dev/in-place-update": record}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:0.28"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: "True"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "nginx", Image: image, Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}},
	}
}
