//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/ordinal-dev/ordinal/host/crd"
	"github.com/ordinal-dev/ordinal/host/rollout"
)

// CRD mode as a user drives it: `ordinal controller` without --apps-v1 reconciles an ordinal.dev/v1 set
// that `kubectl scale` and kube-controller-manager's HorizontalPodAutoscaler resize through the scale
// subresource (the HPA raises it to minReplicas without any metrics), recording its events on the CRD kind;
// the kubectl plugin's status (one-shot and --watch), snapshot and history read the kind as kubectl names
// it; a set kube-apiserver would refuse as apps/v1 (the CRD's schema lets it in) gets an InvalidSpec warning
// and no pod.
func TestCRDModeScaleHPAAndInvalidSpec(t *testing.T) {
	requireHookEnv(t) // the real kubectl
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	dyn, err := dynamic.NewForConfig(cfg.rest)
	if err != nil {
		t.Fatal(err)
	}
	c := startController(t, ns, ctrlOpts{crdOnly: true})
	c.waitReady(ctx)

	tr := trackPods(t, ctx, ns, "hpa", true)
	set := createOrdinalSet(t, ctx, dyn, ns, newSet("hpa", 1))
	waitOrdinalRolledOut(t, ctx, dyn, ns, "hpa", 1)
	if out, errOut, code := kubectl(t, ctx, "", "scale", "-n", ns, "statefulsets.ordinal.dev/hpa", "--replicas=2"); code != 0 {
		t.Fatalf("kubectl scale: exit %d\n%s%s", code, out, errOut)
	}
	waitOrdinalRolledOut(t, ctx, dyn, ns, "hpa", 2)

	minReplicas := int32(3)
	if _, err := cfg.kc.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "hpa"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: crd.GroupVersion.String(), Kind: crd.Kind, Name: "hpa"},
			MinReplicas:    &minReplicas, MaxReplicas: 4,
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitOrdinalRolledOut(t, ctx, dyn, ns, "hpa", 3)
	tr.waitFor(ctx, "3 pods controlled by the ordinal.dev set", time.Minute, controlledBy(3, set.GetUID()))
	tr.checkInvariants()
	wantOrdinals(t, "pods created", ordinals(tr.stepsOf(stepCreated, 0)), 0, 1, 2)
	hpa, err := cfg.kc.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "hpa", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hpa.Status.DesiredReplicas != 3 {
		t.Errorf("HPA status: desired %d, current %d, want 3", hpa.Status.DesiredReplicas, hpa.Status.CurrentReplicas)
	}

	// The kubectl plugin reads the kind as kubectl names it.
	out, perr, code := plugin(t, ctx, "status", "osts/hpa", "-n", ns, "-o", "json")
	var st rollout.Status
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.State != rollout.StateComplete || len(st.Pods) != 3 {
		t.Errorf("kubectl ordinal status osts/hpa -o json: exit %d\n%s%s", code, out, perr)
	}
	// kubectl's completion of a set argument lists the ordinal.dev sets too
	complete := exec.CommandContext(ctx, hookEnv.kubectl, "__complete", "ordinal", "status", "-n", ns, "osts/")
	complete.Env = append(os.Environ(), "PATH="+hookEnv.pathDir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+cfg.kubeconfig)
	if cout, err := complete.CombinedOutput(); err != nil || !strings.Contains(string(cout), "osts/hpa\n") {
		t.Errorf("kubectl __complete ordinal status osts/: %v\n%s", err, cout)
	}
	out, perr, code = plugin(t, ctx, "snapshot", "statefulsets.ordinal.dev/hpa", "-n", ns)
	var snap struct {
		StatefulSet struct{ APIVersion, Kind string }
		Pods        []json.RawMessage
	}
	if code != 0 || json.Unmarshal([]byte(out), &snap) != nil || snap.StatefulSet.APIVersion != crd.GroupVersion.String() || len(snap.Pods) != 3 {
		t.Errorf("kubectl ordinal snapshot statefulsets.ordinal.dev/hpa: exit %d, set %+v, %d pods\n%s", code, snap.StatefulSet, len(snap.Pods), perr)
	}
	if out, perr, code := plugin(t, ctx, "history", "osts/hpa", "-n", ns); code != 0 || !strings.Contains(out, "1 revision") {
		t.Errorf("kubectl ordinal history osts/hpa: exit %d\n%s%s", code, out, perr)
	}
	if out, perr, code := plugin(t, ctx, "status", "statefulset/hpa", "-n", ns); code == 0 {
		t.Errorf("kubectl ordinal status statefulset/hpa (apps/v1, which does not exist): exit 0\n%s%s", out, perr)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute) // a hang guard, not a budget
	defer cancel()
	watch := exec.CommandContext(wctx, hookEnv.kubectl, "ordinal", "status", "osts/hpa", "--watch", "-o", "json", "-n", ns, "--kubeconfig", cfg.kubeconfig)
	watch.Env = append(os.Environ(), "PATH="+hookEnv.pathDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	stdout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	var first rollout.Status
	err = json.NewDecoder(stdout).Decode(&first)
	_ = watch.Process.Kill()
	_ = watch.Wait()
	if err != nil || first.State != rollout.StateComplete || len(first.Pods) != 3 {
		t.Errorf("kubectl ordinal status osts/hpa --watch: first frame %+v, %v", first, err)
	}

	// A preview of an edit of the ordinal.dev set (server-side dry run on the CRD): the rollout it would be.
	edit := newSet("hpa", 3)
	edit.TypeMeta = metav1.TypeMeta{APIVersion: crd.GroupVersion.String(), Kind: crd.Kind}
	edit.Namespace = ns
	edit.Spec.Template.Annotations[annVersion] = "v2"
	eb, _ := json.Marshal(edit)
	editFile := filepath.Join(t.TempDir(), "hpa-v2.json")
	if err := os.WriteFile(editFile, eb, 0o644); err != nil {
		t.Fatal(err)
	}
	out, perr, code = plugin(t, ctx, "preview", "-f", editFile, "-o", "json")
	var pv struct {
		Preview struct {
			Outcome struct{ Result string }
			Batches [][]string
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &pv) != nil || pv.Preview.Outcome.Result != "complete" || len(pv.Preview.Batches) != 3 {
		t.Errorf("kubectl ordinal preview of the ordinal.dev set: exit %d, %+v\n%.2000s%s", code, pv, out, perr)
	}
	if s := waitOrdinalRolledOut(t, ctx, dyn, ns, "hpa", 3); s == "" {
		t.Errorf("the preview changed the set")
	}

	// Events name the CRD kind: `kubectl events --for` finds them by it.
	evs, err := eventsOf(ctx, ns, "hpa", "SuccessfulCreate")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) == 0 {
		t.Fatalf("no SuccessfulCreate event on hpa; events:\n%s", eventLog(ns))
	}
	for _, e := range evs.Items {
		if e.InvolvedObject.APIVersion != crd.GroupVersion.String() || e.InvolvedObject.Kind != crd.Kind || e.InvolvedObject.UID != set.GetUID() {
			t.Errorf("event %s on %s %s %s, want the ordinal.dev/v1 StatefulSet", e.Reason, e.InvolvedObject.APIVersion, e.InvolvedObject.Kind, e.InvolvedObject.UID)
		}
	}
	if out, _, code := kubectl(t, ctx, "", "events", "-n", ns, "--for", "statefulsets.ordinal.dev/hpa"); code != 0 || !strings.Contains(out, "SuccessfulCreate") {
		t.Errorf("kubectl events --for statefulsets.ordinal.dev/hpa: exit %d\n%s", code, out)
	}

	// The template's labels do not match the selector: the CRD accepts it, apps/v1 would not.
	bad := newSet("bad", 2)
	bad.Spec.Template.Labels = map[string]string{"app": "other"}
	createOrdinalSet(t, ctx, dyn, ns, bad)
	waitFor(t, ctx, "an InvalidSpec event on bad", time.Minute, func() bool {
		l, err := eventsOf(ctx, ns, "bad", "InvalidSpec")
		return err == nil && len(l.Items) > 0 && strings.Contains(l.Items[0].Message, "`selector` does not match template `labels`") &&
			l.Items[0].InvolvedObject.APIVersion == crd.GroupVersion.String()
	})
	// Once its sync has been logged (after the event), nothing was written for it.
	c.waitLog(ctx, "bad's sync", time.Minute, `"set":"`+ns+`/bad"`, `"result":"invalid"`)
	if pods, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=bad"}); err != nil || len(pods.Items) > 0 {
		t.Errorf("pods of the invalid set: %v %v", pods, err)
	}
	if l := c.logLines(`"set":"` + ns + `/bad"`); len(l) == 0 || strings.Contains(strings.Join(l, "\n"), `"result":"success"`) {
		t.Errorf("the invalid set was synced:\n%s", strings.Join(l, "\n"))
	}
	// Fixed by an edit: reconciled.
	patchOrdinalSet(t, ctx, dyn, ns, "bad", `{"spec":{"template":{"metadata":{"labels":{"app":"bad"}}}}}`)
	waitOrdinalRolledOut(t, ctx, dyn, ns, "bad", 2)
}
