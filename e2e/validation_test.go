//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ordinal-dev/ordinal/guest/statefulset"
	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// `ordinal preview` refuses the edits kube-apiserver refuses, with kube-apiserver's message, and exits 1;
// it previews the ones kube-apiserver accepts. Each edit goes to the real API server as a dry-run update
// and to `ordinal preview -f` against a live snapshot of the same set.
func TestPreviewRefusesWhatTheAPIServerRefuses(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	base := createSet(t, ctx, ns, newSet("web", 2, withClaims(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.RetainPersistentVolumeClaimRetentionPolicyType)))
	dir := t.TempDir()
	snap := filepath.Join(dir, "snapshot.json")
	out, errOut, code := runOrdinal(t, ctx, "snapshot", "statefulset/web", "-n", ns, "--kubeconfig", cfg.kubeconfig, "-o", "yaml")
	if code != 0 {
		t.Fatalf("ordinal snapshot: exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(snap, []byte(out), 0o644); err != nil { // YAML: preview --from takes it as well
		t.Fatal(err)
	}
	i32 := func(v int32) *int32 { return &v }
	resources := func(limits, requests corev1.ResourceList) func(s *appsv1.StatefulSet) {
		return func(s *appsv1.StatefulSet) {
			s.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: limits, Requests: requests}
		}
	}
	mu := func(v intstr.IntOrString) func(s *appsv1.StatefulSet) {
		return func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = &v }
	}
	cases := []struct {
		name string
		edit func(s *appsv1.StatefulSet)
		// the claim templates' value is printed from the API server's internal struct; compare the cause only
		causeOnly string
	}{
		{name: "serviceName", edit: func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "other" }},
		{name: "selector", edit: func(s *appsv1.StatefulSet) {
			s.Spec.Selector.MatchLabels["tier"] = "db"
			s.Spec.Template.Labels["tier"] = "db"
		}},
		{name: "podManagementPolicy", edit: func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement }},
		{name: "podManagementPolicy unknown", edit: func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = "Sometimes" }},
		{name: "claim template", edit: func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		}, causeOnly: "spec.volumeClaimTemplates: Invalid value: "},
		{name: "replicas negative", edit: func(s *appsv1.StatefulSet) { s.Spec.Replicas = i32(-1) }},
		{name: "template labels", edit: func(s *appsv1.StatefulSet) { s.Spec.Template.Labels = map[string]string{"app": "other"} }},
		{name: "minReadySeconds negative", edit: func(s *appsv1.StatefulSet) { s.Spec.MinReadySeconds = -5 }},
		{name: "two causes", edit: func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "other"; s.Spec.Replicas = i32(-1) }},
		{name: "partition negative", edit: func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = i32(-1) }},
		{name: "maxUnavailable 0", edit: mu(intstr.FromInt32(0))},
		{name: "maxUnavailable -1", edit: mu(intstr.FromInt32(-1))},
		{name: "maxUnavailable 0%", edit: mu(intstr.FromString("0%"))},
		{name: "maxUnavailable 150%", edit: mu(intstr.FromString("150%"))},
		{name: "maxUnavailable not a percent", edit: mu(intstr.FromString("abc"))},
		{name: "OnDelete with rollingUpdate", edit: func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType }},
		{name: "unknown strategy", edit: func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: "Sometimes"}
		}},
		{name: "retention unknown", edit: func(s *appsv1.StatefulSet) {
			s.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = "Keep"
		}},
		{name: "ordinals negative", edit: func(s *appsv1.StatefulSet) {
			s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: -4}
		}},
		// core pod-template validation, which apps/v1 runs on the set's template (ValidateResourceRequirements)
		{name: "negative cpu limit", edit: resources(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}, nil)},
		{name: "negative memory request", edit: resources(nil, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-64Mi")})},
		{name: "request above limit", edit: resources(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")})},
		{name: "request below limit (allowed)", edit: resources(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")})},
		{name: "image (allowed)", edit: func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/pause:3.9" }},
		{name: "replicas and minReadySeconds (allowed)", edit: func(s *appsv1.StatefulSet) { s.Spec.Replicas = i32(3); s.Spec.MinReadySeconds = 5 }},
	}
	// The module reproduces the validation of statefulset.KubernetesVersion's minor: against that minor the
	// messages must be the API server's own; against another (docs/install.md "Compatibility") the verdicts.
	sv, err := cfg.kc.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	serverVersion := sv.GitVersion
	reference := minorOf(serverVersion) == minorOf(statefulset.KubernetesVersion)
	for i, c := range cases {
		edited := base.DeepCopy()
		c.edit(edited)
		_, apiErr := cfg.kc.AppsV1().StatefulSets(ns).Update(ctx, edited, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		b, err := json.Marshal(edited)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "edit-"+string(rune('a'+i))+".json")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := runOrdinal(t, ctx, "preview", "-f", file, "--from", snap)
		switch {
		case apiErr == nil && code != 0:
			t.Errorf("%s: kube-apiserver accepts it; ordinal preview exit %d: %s", c.name, code, errOut)
		case apiErr != nil && code != 1:
			t.Errorf("%s: kube-apiserver refuses it (%v); ordinal preview exit %d, want 1: %s", c.name, apiErr, code, errOut)
		case apiErr != nil && c.causeOnly != "":
			if (reference && !strings.Contains(apiErr.Error(), c.causeOnly)) || !strings.Contains(errOut, c.causeOnly) || !strings.Contains(errOut, "field is immutable") {
				t.Errorf("%s: causes differ:\n kube-apiserver: %v\n ordinal:        %s", c.name, apiErr, errOut)
			}
		case apiErr != nil && !strings.Contains(errOut, apiErr.Error()) && !reference:
			// another minor words some refusals differently (v1.36: one "spec: Forbidden" for every
			// immutable field, where v1.37 names the field): the verdict must agree, the wording is v1.37's
			t.Logf("%s: both refuse; the wording differs on %s:\n kube-apiserver: %v\n ordinal:        %s", c.name, serverVersion, apiErr, strings.TrimSpace(errOut))
		case apiErr != nil && !strings.Contains(errOut, apiErr.Error()):
			t.Errorf("%s: messages differ:\n kube-apiserver: %v\n ordinal:        %s", c.name, apiErr, errOut)
		default:
			t.Logf("%s: both %s", c.name, map[bool]string{true: "refuse: " + strings.TrimSpace(errOut), false: "accept"}[apiErr != nil])
		}
	}
}

// A set whose name makes its revision label longer than 63 bytes: the replay refuses its pods with the
// message the real kube-apiserver gives for the same pod (a server-side dry-run create).
func TestReplayRefusesPodsAsTheAPIServerDoes(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	name := strings.Repeat("a", 55)
	manifest := filepath.Join(t.TempDir(), "long.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: `+name+`, namespace: `+ns+`}
spec:
  replicas: 1
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runOrdinal(t, ctx, "replay", manifest, "-o", "json")
	if code != 6 {
		t.Fatalf("ordinal replay of a set named %d a's: exit %d, want 6 (stuck)\n%s", len(name), code, errOut)
	}
	var tl struct {
		Revisions []struct{ Name string }  `json:"revisions"`
		Outcome   struct{ Summary string } `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(out), &tl); err != nil || len(tl.Revisions) == 0 {
		t.Fatalf("replay output: %v\n%s", err, firstLines(out, 20))
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-0", Namespace: ns, Labels: map[string]string{
			"app": "web", appsv1.ControllerRevisionHashLabelKey: tl.Revisions[0].Name,
			appsv1.StatefulSetPodNameLabel: name + "-0", appsv1.PodIndexLabel: "0"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
	_, err := cfg.kc.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil {
		t.Fatal("kube-apiserver accepted the pod")
	}
	if !strings.Contains(tl.Outcome.Summary, err.Error()) {
		t.Errorf("the replay's refusal differs from kube-apiserver's:\n replay: %s\n server: %s", tl.Outcome.Summary, err.Error())
	}
}

// minorOf is "v1.37" of "v1.37.2".
func minorOf(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// A pods/resize that would change the pod's QoS class: kube-apiserver refuses it, and the replay's API server
// refuses the same resize of the same stored pod with the same cause (kube.ValidatePodResize, the in-memory
// API server's check; internal/qos, the class rule the module's in-place updates use too).
func TestResizeThatChangesTheQoSClassIsRefusedAsTheAPIServerDoes(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	res := func(cpuRequest string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuRequest), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}
	}
	pod, err := cfg.kc.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "qos", Namespace: ns},
		// never scheduled: once bound to a kwok node, kube-apiserver refuses any resize for the node ("Pod
		// running on node without support for resize") before it judges the QoS class
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"e2e.ordinal.dev/no-such-node": "true"},
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: res("100m")}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.QOSClass != corev1.PodQOSGuaranteed {
		t.Fatalf("created with QoS class %q", pod.Status.QOSClass)
	}
	resized := pod.DeepCopy()
	resized.ResourceVersion = ""                      // unconditional: the scheduler and the kubelet write the pod after its creation
	resized.Spec.Containers[0].Resources = res("50m") // Burstable
	_, apiErr := cfg.kc.CoreV1().Pods(ns).UpdateResize(ctx, pod.Name, resized, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	const cause = `spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing`
	if apiErr == nil || !strings.Contains(apiErr.Error(), cause) {
		t.Fatalf("kube-apiserver's answer to a resize to Burstable: %v; want it to say %q", apiErr, cause)
	}
	toObj := func(p *corev1.Pod) jsonobj.Obj {
		b, _ := json.Marshal(p)
		o, err := jsonobj.DecodeObj(b)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	ours := kube.ValidatePodResize(toObj(pod), toObj(resized))
	if ours == nil || !strings.Contains(apiErr.Error(), ours.Error()) {
		t.Errorf("the replay's refusal differs from kube-apiserver's:\n replay: %v\n server: %v", ours, apiErr)
	}
	within := pod.DeepCopy()
	within.ResourceVersion = ""
	within.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
	within.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("200m")
	if _, err := cfg.kc.CoreV1().Pods(ns).UpdateResize(ctx, pod.Name, within, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil ||
		kube.ValidatePodResize(toObj(pod), toObj(within)) != nil {
		t.Errorf("a resize within Guaranteed: kube-apiserver %v, replay %v", err, kube.ValidatePodResize(toObj(pod), toObj(within)))
	}
}
