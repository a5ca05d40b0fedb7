package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A rollout verb sent mid-rollout met the controller's status writes: each is a new resourceVersion, so the
// verb's patch, preconditioned on the version it read, was refused by a status write alone and `kubectl
// ordinal pause` failed (409) when a user needed it, `kubectl ordinal undo` with "The request is invalid: the
// server rejected our request due to an error in our request" (its JSON patch's failed test of the
// resourceVersion is a 422 without details). A refusal is retried on a fresh read while the set's generation
// (its spec) is the one first read; an edit of the spec in between still refuses the verb, as a conflict.
func TestRolloutVerbRetriesAConflictOfAStatusWrite(t *testing.T) {
	for _, c := range []struct {
		name      string
		verb      string
		edited    bool // the spec is edited (generation 2) between the first read and the patch
		wantCode  int
		wantOut   string
		wantErr   string
		wantPatch int
	}{
		{name: "pause, status write", verb: "pause", wantCode: ExitOK, wantOut: "statefulset.apps/web paused", wantPatch: 2},
		{name: "pause, spec edit", verb: "pause", edited: true, wantCode: ExitUsage, wantErr: "Conflict", wantPatch: 1},
		{name: "undo, status write", verb: "undo", wantCode: ExitOK, wantOut: "statefulset.apps/web rolled back", wantPatch: 2},
		{name: "undo, spec edit", verb: "undo", edited: true, wantCode: ExitUsage,
			wantErr: `Operation cannot be fulfilled on statefulsets.apps "web": the object has been modified`, wantPatch: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			rv, generation, patches := 1, 1, []string{}
			template := func(image string) string {
				return `{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"` + image + `"}]}}`
			}
			revision := func(n int, image string) string {
				return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"web-%d","namespace":"default","uid":"r%d",`+
					`"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"u1","controller":true}]},"revision":%d,`+
					`"data":{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"%s"}]}}}}}`, n, n, n, image)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/apis/apps/v1/namespaces/default/statefulsets/web":
				case "/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/persistentvolumeclaims":
					fmt.Fprint(w, `{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`)
					return
				case "/apis/apps/v1/namespaces/default/controllerrevisions":
					fmt.Fprintf(w, `{"kind":"ControllerRevisionList","apiVersion":"apps/v1","metadata":{},"items":[%s,%s]}`, revision(1, "app:1"), revision(2, "app:2"))
					return
				default:
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
					return
				}
				if r.Method == http.MethodPatch {
					b, _ := io.ReadAll(r.Body)
					patches = append(patches, string(b))
					json := r.Header.Get("Content-Type") == "application/json-patch+json"
					precondition := fmt.Sprintf(`"resourceVersion":"%d"`, rv)
					if json {
						precondition = fmt.Sprintf(`"path":"/metadata/resourceVersion","value":"%d"`, rv)
					}
					if !strings.Contains(string(b), precondition) || len(patches) == 1 {
						// the controller wrote the status (or the user the spec) after the verb read the set
						rv++
						if c.edited {
							generation++
						}
						if json { // kube-apiserver's answer to a JSON patch whose test fails
							w.WriteHeader(http.StatusUnprocessableEntity)
							fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422}`)
							return
						}
						w.WriteHeader(http.StatusConflict)
						fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Operation cannot be fulfilled on statefulsets.apps \"web\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","code":409}`)
						return
					}
					rv++
				}
				fmt.Fprintf(w, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"default","uid":"u1","resourceVersion":"%d","generation":%d},`+
					`"spec":{"selector":{"matchLabels":{"app":"web"}},"template":%s,"updateStrategy":{"type":"RollingUpdate"}}}`, rv, generation, template("app:2"))
			}))
			defer srv.Close()
			code, out, errs := plug(c.verb, "statefulset/web", "--kubeconfig", kubeconfigFor(t, srv.URL), "-n", "default", "--cache-dir", "")
			mu.Lock()
			defer mu.Unlock()
			if code != c.wantCode || !strings.Contains(out, c.wantOut) || !strings.Contains(errs, c.wantErr) || len(patches) != c.wantPatch {
				t.Errorf("exit %d, stdout %q, stderr %q, %d patches %q; want exit %d, %q, %q, %d patches", code, out, errs, len(patches), patches, c.wantCode, c.wantOut, c.wantErr, c.wantPatch)
			}
			if len(patches) == 2 && !strings.Contains(patches[1], `"2"`) {
				t.Errorf("the retry is not preconditioned on the version it read again: %s", patches[1])
			}
		})
	}
}

// --dry-run=client is the patch applied to the set read, as the API server applies it, and sent nowhere:
// undo's JSON patch (its test of the resourceVersion read included) and the other verbs' merge patches.
func TestPatchedLocally(t *testing.T) {
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "7", Annotations: map[string]string{"a": "1"}}}
	set.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: "app:2"}}
	undo := `[{"op":"test","path":"/metadata/resourceVersion","value":"7"},` +
		`{"op":"replace","path":"/spec/template","value":{"spec":{"containers":[{"name":"app","image":"app:1"}]}}}]`
	got, err := patchedLocally(set, types.JSONPatchType, []byte(undo))
	if err != nil || got.Spec.Template.Spec.Containers[0].Image != "app:1" || got.Name != "web" {
		t.Errorf("undo's JSON patch: %v, %+v", err, got)
	}
	if _, err := patchedLocally(set, types.JSONPatchType, []byte(strings.Replace(undo, `"7"`, `"6"`, 1))); err == nil {
		t.Error("a JSON patch whose test fails applied")
	}
	got, err = patchedLocally(set, types.MergePatchType, []byte(`{"metadata":{"annotations":{"a":null,"b":"2"}}}`))
	if err != nil || got.Annotations["b"] != "2" || got.Annotations["a"] != "" || set.Annotations["a"] != "1" {
		t.Errorf("a merge patch: %v, %v (the set read: %v)", err, got.Annotations, set.Annotations)
	}
}

// A verb's write is reviewed by the webhook like kubectl rollout's, and its preview (the API server's
// warnings) is shown as kubectl shows it: kubectl ordinal restart|undo printed none of it, so a rollout the
// webhook warned would stall started unwarned.
func TestRolloutVerbShowsTheWebhooksWarnings(t *testing.T) {
	for _, dryRun := range []string{"none", "server"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch r.URL.Path {
			case "/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/persistentvolumeclaims", "/apis/apps/v1/namespaces/default/controllerrevisions":
				fmt.Fprint(w, `{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`)
				return
			case "/apis/apps/v1/namespaces/default/statefulsets/web":
			default:
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
				return
			}
			if r.Method == http.MethodPatch {
				w.Header().Add("Warning", `299 - "ordinal: rolling update of 3 pods to revision web-2: [web-2] then [web-1] then [web-0]"`)
			}
			fmt.Fprint(w, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"default","uid":"u1","resourceVersion":"1","generation":1},`+
				`"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"app:1"}]}},"updateStrategy":{"type":"RollingUpdate"}}}`)
		}))
		code, out, errs := plug("restart", "statefulset/web", "--dry-run="+dryRun, "--kubeconfig", kubeconfigFor(t, srv.URL), "-n", "default", "--cache-dir", "")
		srv.Close()
		if code != ExitOK || !strings.Contains(out, "statefulset.apps/web restarted") ||
			!strings.Contains(errs, "Warning: ordinal: rolling update of 3 pods to revision web-2") {
			t.Errorf("--dry-run=%s: exit %d, stdout %q, stderr %q; want the webhook's warning on stderr", dryRun, code, out, errs)
		}
	}
}

// --dry-run takes kubectl's values, and says which it wants before anything connects.
func TestRolloutVerbDryRunValues(t *testing.T) {
	var out, errb strings.Builder
	code := PluginMain([]string{"undo", "statefulset/web", "--dry-run=maybe", "--kubeconfig", "/nonexistent"}, strings.NewReader(""), &out, &errb)
	if errs := errb.String(); code != ExitUsage || !strings.Contains(errs, `--dry-run "maybe": want "none", "server", or "client"`) {
		t.Errorf("exit %d: %s", code, errs)
	}
}
