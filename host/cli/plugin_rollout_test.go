package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A rollout verb sent mid-rollout met the controller's status writes: each is a new resourceVersion, so the
// verb's patch, preconditioned on the version it read, was refused (409) by a status write alone and
// `kubectl ordinal pause` failed when a user needed it. A conflict is retried on a fresh read while the set's
// generation (its spec) is the one first read; an edit of the spec in between still refuses the verb.
func TestRolloutVerbRetriesAConflictOfAStatusWrite(t *testing.T) {
	for _, c := range []struct {
		name      string
		edited    bool // the spec is edited (generation 2) between the first read and the patch
		wantCode  int
		wantOut   string
		wantErr   string
		wantPatch int
	}{
		{name: "status write", wantCode: ExitOK, wantOut: "statefulset.apps/web paused", wantPatch: 2},
		{name: "spec edit", edited: true, wantCode: ExitUsage, wantErr: "Conflict", wantPatch: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			rv, generation, patches := 1, 1, []string{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path != "/apis/apps/v1/namespaces/default/statefulsets/web" {
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
					return
				}
				set := func() string {
					return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"default","uid":"u1","resourceVersion":"%d","generation":%d},`+
						`"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}}},"updateStrategy":{"type":"RollingUpdate"}}}`, rv, generation)
				}
				if r.Method == http.MethodPatch {
					b, _ := io.ReadAll(r.Body)
					patches = append(patches, string(b))
					if !strings.Contains(string(b), fmt.Sprintf(`"resourceVersion":"%d"`, rv)) || len(patches) == 1 {
						// the controller wrote the status (or the user the spec) after the verb read the set
						rv++
						if c.edited {
							generation++
						}
						w.WriteHeader(http.StatusConflict)
						fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Operation cannot be fulfilled on statefulsets.apps \"web\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","code":409}`)
						return
					}
					rv++
				}
				fmt.Fprint(w, set())
			}))
			defer srv.Close()
			code, out, errs := plug("pause", "statefulset/web", "--kubeconfig", kubeconfigFor(t, srv.URL), "-n", "default")
			mu.Lock()
			defer mu.Unlock()
			if code != c.wantCode || !strings.Contains(out, c.wantOut) || !strings.Contains(errs, c.wantErr) || len(patches) != c.wantPatch {
				t.Errorf("exit %d, stdout %q, stderr %q, %d patches %q; want exit %d, %q, %q, %d patches", code, out, errs, len(patches), patches, c.wantCode, c.wantOut, c.wantErr, c.wantPatch)
			}
			if len(patches) == 2 && !strings.Contains(patches[1], `"resourceVersion":"2"`) {
				t.Errorf("the retry is not preconditioned on the version it read again: %s", patches[1])
			}
		})
	}
}
