package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// kubeconfigFor writes a kubeconfig whose cluster is server.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: x}}]
`, server)
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// closedPort is an address nothing listens on: a dial is refused at once.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Issue 31: `kubectl ordinal status web -w` against an API server it cannot reach printed nothing for 11
// minutes. Every plugin command, --watch included, now fails at once with kubectl's message and exit 1.
func TestUnreachableAPIServerFailsAtOnceWithKubectlsMessage(t *testing.T) {
	addr := closedPort(t)
	kc := kubeconfigFor(t, "http://"+addr)
	for _, args := range [][]string{{"status", "web"}, {"status", "web", "-w"}, {"history", "web"}, {"timeline", "web"}} {
		code, _, errs := plug(append(args, "--kubeconfig", kc)...)
		want := "error: The connection to the server " + addr + " was refused - did you specify the right host or port?"
		if code != ExitUsage || strings.TrimSpace(errs) != want {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", args, code, errs, ExitUsage, want)
		}
	}
}

// A watch that loses the API server after it started says so on every failed list or watch and keeps
// retrying, as `kubectl get -w` does not leave a user guessing.
func TestWatchSaysWhenItRetries(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			fmt.Fprint(w, `{"major":"1","minor":"37","gitVersion":"v1.37.1"}`)
			return
		}
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcd is down","reason":"InternalError","code":500}`, 500)
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	said := &signalWriter{want: "; retrying", seen: make(chan struct{})}
	s := &statusView{format: "text", out: &strings.Builder{}, errOut: said}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.watch(ctx, cfg, client, snapshot.Target{}, "default", "web") }()
	select {
	case <-said.seen:
	case err := <-done:
		t.Fatalf("watch ended before it said it retries: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("watch: %v", err)
	}
	if !strings.Contains(said.String(), "watch: ") || !strings.Contains(said.String(), "etcd is down") {
		t.Errorf("stderr does not say why it retries: %q", said.String())
	}
}

// signalWriter closes seen once what it was written contains want.
type signalWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// An API server that accepts a connection and never answers holds no command past --request-timeout
// (kubectl's flag; bounded by default here): the test sets it short and waits for the error, not a time.
func TestSilentAPIServerEndsAtTheRequestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	kc := kubeconfigFor(t, srv.URL)
	for _, args := range [][]string{{"status", "web"}, {"status", "web", "-w"}} {
		code, _, errs := plug(append(args, "--kubeconfig", kc, "--request-timeout", "200ms")...)
		if code != ExitUsage || !strings.HasPrefix(errs, "error: Unable to connect to the server: ") || !(strings.Contains(errs, "deadline exceeded") || strings.Contains(errs, "Timeout")) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, kubectl's \"Unable to connect to the server\"", args, code, errs, ExitUsage)
		}
	}
	if code, _, errs := run(t, "", "snapshot", "web", "--kubeconfig", kc, "--request-timeout", "200ms"); code != ExitUsage || !strings.Contains(errs, "Unable to connect to the server") {
		t.Errorf("ordinal snapshot: exit %d, stderr %q", code, errs)
	}
}

// Hostile probe: `status -w` ignored Ctrl-C while its first request waited on a silent API server (with
// --request-timeout 0, forever): the reachability check now ends with the command's context.
func TestReachabilityCheckEndsWithTheContext(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL}) // no timeout: only ctx can end it
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }() // Ctrl-C once the request is waiting
	if err := reachable(ctx, client); err == nil || ctx.Err() == nil {
		t.Fatalf("reachable: %v (ctx %v)", err, ctx.Err())
	}
}

// Hostile probe: an API server's answer printed as "error: statefulsets.apps "x" not found" where kubectl
// prints "Error from server (NotFound): ..."; a refusal the command wraps in its own words keeps them.
func TestAPIServerAnswersReadAsKubectlPrintsThem(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"statefulsets.apps \"web\" not found","reason":"NotFound","details":{"name":"web","group":"apps","kind":"statefulsets"},"code":404}`)
	}))
	defer srv.Close()
	kc := kubeconfigFor(t, srv.URL)
	for _, args := range [][]string{{"history", "web"}, {"pause", "web"}, {"undo", "web"}} {
		code, _, errs := plug(append(args, "--kubeconfig", kc)...)
		if want := `Error from server (NotFound): statefulsets.apps "web" not found`; code != ExitUsage || strings.TrimSpace(errs) != want {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", args, code, errs, want)
		}
	}
}

// After `kubectl ordinal migrate statefulset/web --to ordinal`, `kubectl ordinal status web` (apps/v1, as
// kubectl reads a bare name) is the API server's NotFound: it names osts/web, the set that exists; and the
// other way round. A set missing in both kinds is kubectl's NotFound alone.
func TestNotFoundNamesTheSetOfTheOtherKind(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/ordinal.dev/v1/namespaces/default/statefulsets/web":
			fmt.Fprint(w, `{"apiVersion":"ordinal.dev/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"default","uid":"u1"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}}}}}`)
		case "/apis/apps/v1/namespaces/default/statefulsets/db":
			fmt.Fprint(w, `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default","uid":"u2"},"spec":{"selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"db"}}}}}`)
		default:
			parts := strings.Split(r.URL.Path, "/")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"statefulsets.%s \"%s\" not found","reason":"NotFound","code":404}`,
				parts[2], parts[len(parts)-1])
		}
	}))
	defer srv.Close()
	kc := kubeconfigFor(t, srv.URL)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "web"}, `error: statefulsets.apps "web" not found; the ordinal.dev/v1 StatefulSet default/web exists: osts/web names it`},
		{[]string{"history", "statefulset/web"}, `osts/web names it`},
		{[]string{"snapshot", "osts/db"}, `error: statefulsets.ordinal.dev "db" not found; the apps/v1 StatefulSet default/db exists: statefulset/db names it`},
		{[]string{"status", "gone"}, `Error from server (NotFound): statefulsets.apps "gone" not found`},
	} {
		code, _, errs := plug(append(c.args, "--kubeconfig", kc, "-n", "default", "--cache-dir", "")...)
		if code != ExitUsage || strings.TrimSpace(errs) != c.want && !strings.HasSuffix(strings.TrimSpace(errs), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, ExitUsage, c.want)
		}
	}
}
