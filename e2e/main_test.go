//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// cfg is the suite's configuration, read once by TestMain.
var cfg struct {
	root       string // repository root
	kubeconfig string
	pki        string // the local cluster's PKI (its CA signs the client certificate it presents to webhooks)
	run        string // the local cluster's run directory (its bin/podreaper, its kubelet state)
	bin        string // bin/ordinal
	artifacts  string // controller logs, snapshots
	kcmScript  string // scripts/cluster-kcm.sh (restarts kube-controller-manager of the local cluster)
	keep       bool   // keep namespaces after the tests

	rest *rest.Config
	kc   kubernetes.Interface

	controllerErr error // why `ordinal controller` cannot be run, or nil
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	code := m.Run()
	// make e2e skips this wait when it stops the cluster right after (ORDINAL_E2E_CLEANUP_WAIT=0)
	if d, err := time.ParseDuration(getenv("ORDINAL_E2E_CLEANUP_WAIT", "30s")); err == nil && d > 0 && !cfg.keep {
		waitNamespacesGone(d)
	}
	os.Exit(code)
}

// waitNamespacesGone waits (bounded) for the namespaces the tests deleted to finish terminating, so that a
// cluster that stays up is left clean.
func waitNamespacesGone(max time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), max)
	defer cancel()
	for {
		l, err := cfg.kc.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: "e2e.ordinal.dev/test=true"})
		if err != nil || len(l.Items) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			fmt.Printf("e2e: %d test namespaces still terminating\n", len(l.Items))
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func setup() error {
	root, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	cfg.root = root
	run := getenv("LOCALK8S_RUN", "/tmp/ordinal-localk8s")
	cfg.kubeconfig = getenv("ORDINAL_E2E_KUBECONFIG", filepath.Join(run, "kubeconfig"))
	cfg.pki = filepath.Join(run, "pki")
	cfg.run = run
	cfg.bin = getenv("ORDINAL_E2E_BIN", filepath.Join(root, "bin", "ordinal"))
	cfg.artifacts = getenv("ORDINAL_E2E_ARTIFACTS", filepath.Join(root, "build", "e2e"))
	cfg.kcmScript = filepath.Join(root, "scripts", "cluster-kcm.sh")
	cfg.keep = os.Getenv("ORDINAL_E2E_KEEP") == "1"
	for _, p := range []*string{&cfg.kubeconfig, &cfg.bin, &cfg.artifacts} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(cfg.artifacts); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.artifacts, 0o755); err != nil {
		return err
	}

	if _, err := os.Stat(cfg.kubeconfig); err != nil {
		return fmt.Errorf("no kubeconfig at %s: start the cluster with scripts/cluster-up.sh (or `make e2e`), or set ORDINAL_E2E_KUBECONFIG", cfg.kubeconfig)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", cfg.kubeconfig, err)
	}
	rc.QPS, rc.Burst = 100, 200
	rc.UserAgent = "ordinal-e2e"
	cfg.rest = rc
	if cfg.kc, err = kubernetes.NewForConfig(rc); err != nil {
		return err
	}
	v, err := cfg.kc.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("cluster at %s does not answer: %w", rc.Host, err)
	}
	fmt.Printf("e2e: cluster %s at %s, kubeconfig %s\n", v.GitVersion, rc.Host, cfg.kubeconfig)
	// CRD mode: the controller refuses to start without the CRD statefulsets.ordinal.dev (crd_test.go)
	if err := installCRD(rc); err != nil {
		return err
	}

	if _, err := os.Stat(cfg.bin); err != nil {
		cfg.controllerErr = fmt.Errorf("%s not found (build it: go build -o bin/ordinal ./cmd/ordinal)", cfg.bin)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, cfg.bin, "controller", "--help").CombinedOutput(); err != nil {
			cfg.controllerErr = fmt.Errorf("`%s controller --help` failed (%v): %s", cfg.bin, err, firstLines(string(out), 5))
		}
	}
	// Deleted pods are removed by hack/podreaper (KWOK_POD_DELETE=kubelet, the default of cluster-up.sh).
	if b, err := os.ReadFile(filepath.Join(run, "kwok.yaml")); err == nil && strings.Contains(string(b), "name: pod-delete") {
		fmt.Printf("e2e: WARNING: kwok runs with a pod-delete stage: it can remove a pod that a controller has just recreated under the same name (an ordinal replaced twice). Start the cluster with the default KWOK_POD_DELETE=kubelet.\n")
	} else if _, err := os.Stat(filepath.Join(run, "pids", "6-podreaper.pid")); err != nil {
		fmt.Printf("e2e: WARNING: no pod reaper recorded in %s: deleted pods may stay Terminating\n", run)
	}
	if cfg.controllerErr != nil {
		fmt.Printf("e2e: WARNING: the controller tests will fail: %v\n", cfg.controllerErr)
	}
	fmt.Printf("e2e: binary %s, controller logs under %s\n", cfg.bin, cfg.artifacts)
	return nil
}
