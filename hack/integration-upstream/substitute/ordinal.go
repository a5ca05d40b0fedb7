//go:build ignore

// This file joins k8s.io/kubernetes/test/integration/statefulset at build time (scripts/integration-upstream.sh
// adds it to the patched copy of the package it builds, without the constraint above, which keeps it out
// of this repository's own build). substitute.patch makes runControllerAndInformers call startOrdinal: the tests then run against
// `ordinal controller --apps-v1` ($ORDINAL_BIN) instead of upstream's in-process StatefulSet controller.

package statefulset

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ordinalT and ordinalConfig are the test and the API server the next runControllerAndInformers starts
// Ordinal for: the patch sets them where upstream builds its controller (the package's tests run one at a time).
var (
	ordinalT      *testing.T
	ordinalConfig *restclient.Config
)

// startOrdinal runs Ordinal against ordinalConfig's API server until the returned function (or the test's
// cleanup) stops it: SIGTERM, then SIGKILL after 30 s. Its log is $ORDINAL_LOG_DIR/<test>.ordinal.log.
func startOrdinal(ctx context.Context) context.CancelFunc {
	t, config := ordinalT, ordinalConfig
	if t == nil || config == nil {
		panic("startOrdinal: the patch did not record the test's API server")
	}
	t.Helper()
	bin := os.Getenv("ORDINAL_BIN")
	if bin == "" {
		t.Fatal("ORDINAL_BIN is not set: this build of the tests runs Ordinal in place of upstream's StatefulSet controller")
	}
	dir := os.Getenv("ORDINAL_LOG_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	kubeconfig := filepath.Join(dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(kubeconfigOf(config), kubeconfig); err != nil {
		t.Fatalf("ordinal: writing %s: %v", kubeconfig, err)
	}
	// apps/v1 sets alone: the tests' API servers need not serve Ordinal's CRD (one serves no CRDs at all)
	args := []string{"controller", "--apps-v1", "--ordinal-kind=false", "--kubeconfig", kubeconfig, "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-format=text", "--shutdown-grace=20s"}
	if gates := passedGates(t, bin); gates != "" {
		args = append(args, "--feature-gates", gates)
	}
	args = append(args, strings.Fields(os.Getenv("ORDINAL_ARGS"))...)
	logPath := filepath.Join(dir, name+".ordinal.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("ordinal: starting %s: %v", bin, err)
	}
	t.Logf("ordinal: started pid %d: %s %s (log %s)", cmd.Process.Pid, bin, strings.Join(args, " "), logPath)
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			select {
			case <-exited:
				t.Errorf("ordinal: exited before the test stopped it: %v (log %s)", waitErr, logPath)
			default:
				_ = cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-exited:
					if waitErr != nil {
						t.Errorf("ordinal: on SIGTERM: %v (log %s)", waitErr, logPath)
					}
				case <-time.After(30 * time.Second):
					_ = cmd.Process.Kill()
					<-exited
					t.Errorf("ordinal: still running 30 s after SIGTERM, killed (log %s)", logPath)
				}
			}
			_ = logFile.Close()
			reportYields(t, logPath)
		})
	}
	t.Cleanup(stop)
	return stop
}

// kubeconfigOf is a kubeconfig with the rest.Config's server, TLS and credentials.
func kubeconfigOf(c *restclient.Config) clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthority: c.CAFile, CertificateAuthorityData: c.CAData,
		TLSServerName: c.ServerName, InsecureSkipTLSVerify: c.Insecure}
	cfg.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: c.BearerToken, TokenFile: c.BearerTokenFile,
		ClientCertificate: c.CertFile, ClientCertificateData: c.CertData, ClientKey: c.KeyFile, ClientKeyData: c.KeyData,
		Username: c.Username, Password: c.Password}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	cfg.CurrentContext = "test"
	return *cfg
}

// passedGates are the feature gates the test set away from their defaults (featuregatetesting), as
// Name=bool for Ordinal's --feature-gates: those Ordinal knows (`ordinal version` lists them); the others
// are logged, since Ordinal's module refuses a gate it does not know.
func passedGates(t *testing.T, bin string) string {
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("ordinal: %s version: %v\n%s", bin, err, out)
	}
	known := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "feature "); ok {
			name, _, _ := strings.Cut(f, "=")
			known[name] = true
		}
	}
	var passed []string
	for name, spec := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		on := utilfeature.DefaultFeatureGate.Enabled(name)
		if on == spec.Default {
			continue
		}
		if known[string(name)] {
			passed = append(passed, fmt.Sprintf("%s=%t", name, on))
		} else {
			t.Logf("ordinal: feature gate %s=%t set by the test is not one of Ordinal's; not passed", name, on)
		}
	}
	sort.Strings(passed)
	return strings.Join(passed, ",")
}

// reportYields logs the sets Ordinal left alone (OtherControllerActive and the like), which the test's
// verdict alone would not tell from a wrong plan.
func reportYields(t *testing.T, logPath string) {
	f, err := os.Open(logPath)
	if err != nil {
		return
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		if strings.Contains(s.Text(), "Leaving the StatefulSet alone") {
			t.Logf("ordinal: YIELDED: %s", s.Text())
		}
	}
}
