package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// podreaper kubectl --kubectl=PATH --state-dir=DIR [kubectl's arguments]: the kubectl upstream's e2e specs
// run on the local cluster (scripts/e2e-upstream.sh gives it as --kubectl-path). `kubectl exec POD -- CMD...`
// runs CMD in the pod's container sandbox (sandbox.go), as a kubelet would run it in the container, since
// kwok runs none; every other command is the real kubectl's, unchanged. The exec answers as kubectl does: the
// command's output, and its exit code, with "command terminated with exit code N" on stderr.

// kubectlFlags are kubectl's flags that take a value (the global ones the e2e framework passes, the usual ones,
// and exec's own); the others are booleans.
var kubectlFlags = map[string]bool{"--server": true, "-s": true, "--kubeconfig": true, "--namespace": true, "-n": true,
	"--context": true, "--cluster": true, "--user": true, "--token": true, "--request-timeout": true,
	"--certificate-authority": true, "--client-certificate": true, "--client-key": true, "--tls-server-name": true,
	"--as": true, "--as-group": true, "--as-uid": true, "--cache-dir": true, "-v": true, "--v": true,
	"--container": true, "-c": true, "--pod-running-timeout": true, "--filename": true, "-f": true}

// execCall is a parsed `kubectl exec`: where, in which pod and container, what.
type execCall struct {
	server, kubeconfig, context, namespace string
	cluster, user, token                   string
	pod, container                         string
	stdin                                  bool // -i: the command reads kubectl's stdin
	argv                                   []string
}

// kubectlFlag is one flag given, with its value ("" for a boolean given bare).
type kubectlFlag struct{ name, value string }

// readFlags reads the flags of args[i] as kubectl's pflag does (--name=value, --name value, -x, -x=value,
// -xvalue, -x value, grouped shorthands -itc value) and returns them with the index of the next argument.
func readFlags(args []string, i int) ([]kubectlFlag, int, error) {
	a := args[i]
	value := func(name, attached string, has bool) (kubectlFlag, error) {
		if !has && kubectlFlags[name] {
			if i+1 == len(args) {
				return kubectlFlag{}, fmt.Errorf("flag needs an argument: %s", name)
			}
			i++
			attached = args[i]
		}
		return kubectlFlag{name, attached}, nil
	}
	if strings.HasPrefix(a, "--") {
		name, v, has := strings.Cut(a, "=")
		f, err := value(name, v, has)
		return []kubectlFlag{f}, i + 1, err
	}
	var flags []kubectlFlag
	for j := 1; j < len(a); j++ {
		name, rest := "-"+a[j:j+1], a[j+1:]
		v, has := strings.CutPrefix(rest, "=")
		if kubectlFlags[name] && rest != "" {
			has = true // -cside
		}
		if has || kubectlFlags[name] {
			f, err := value(name, v, has)
			return append(flags, f), i + 1, err
		}
		flags = append(flags, kubectlFlag{name: name})
	}
	return flags, i + 1, nil
}

// parseKubectl finds the subcommand of kubectl's arguments and, for exec, what it asks. isExec false: another
// subcommand, for the real kubectl.
func parseKubectl(args []string) (call execCall, isExec bool, err error) {
	global := func(f kubectlFlag) {
		switch f.name {
		case "--server", "-s":
			call.server = f.value
		case "--kubeconfig":
			call.kubeconfig = f.value
		case "--context":
			call.context = f.value
		case "--cluster":
			call.cluster = f.value
		case "--user":
			call.user = f.value
		case "--token":
			call.token = f.value
		case "--namespace", "-n":
			call.namespace = f.value
		case "--container", "-c":
			call.container = f.value
		case "--stdin", "-i":
			call.stdin, _ = strconv.ParseBool(cmp.Or(f.value, "true"))
		}
	}
	flag := func(a string) bool { return strings.HasPrefix(a, "-") && a != "-" && a != "--" }
	i := 0
	for i < len(args) && flag(args[i]) {
		var flags []kubectlFlag
		if flags, i, err = readFlags(args, i); err != nil {
			return call, false, nil // kubectl's to answer
		}
		for _, f := range flags {
			global(f)
		}
	}
	if i == len(args) || args[i] != "exec" {
		return call, false, nil
	}
	for i++; i < len(args); {
		a := args[i]
		switch {
		case a == "--":
			call.argv = args[i+1:]
			i = len(args)
		case flag(a):
			var flags []kubectlFlag
			if flags, i, err = readFlags(args, i); err != nil {
				return call, true, err
			}
			for _, f := range flags {
				global(f)
			}
		case call.pod == "":
			kind, name, typed := strings.Cut(a, "/")
			if typed && kind != "pod" && kind != "pods" && kind != "po" {
				return call, true, fmt.Errorf("exec into %s: only a pod's containers are emulated", a)
			}
			if !typed {
				name = a
			}
			call.pod = name
			i++
		default:
			return call, true, fmt.Errorf("exec takes one pod and a command after --, not %q", a)
		}
	}
	if call.pod == "" || len(call.argv) == 0 {
		return call, true, errors.New("expected 'exec POD -- COMMAND [args...]'")
	}
	return call, true, nil
}

// kubectlMain is podreaper run as kubectl; it returns the process's exit code (or never, handing over to the
// real kubectl).
func kubectlMain(args []string) int {
	var real, state string
	for len(args) > 0 {
		if v, ok := strings.CutPrefix(args[0], "--kubectl="); ok {
			real = v
		} else if v, ok := strings.CutPrefix(args[0], "--state-dir="); ok {
			state = v
		} else {
			break
		}
		args = args[1:]
	}
	if real == "" || state == "" {
		fmt.Fprintln(os.Stderr, "usage: podreaper kubectl --kubectl=PATH --state-dir=DIR [kubectl arguments]")
		return 2
	}
	call, isExec, err := parseKubectl(args)
	if !isExec {
		err := syscall.Exec(real, append([]string{real}, args...), os.Environ())
		fmt.Fprintf(os.Stderr, "podreaper kubectl: running %s: %v\n", real, err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		return 1
	}
	code, err := execInPod(context.Background(), call, state)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		return 1
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "command terminated with exit code %d\n", code)
	}
	return code
}

// clientConfig is the client configuration kubectl takes for call: its --kubeconfig, else $KUBECONFIG, else
// ~/.kube/config, with the --context, --cluster, --user, --server and --token given over it.
func clientConfig(call execCall) clientcmd.ClientConfig {
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	loading.ExplicitPath = call.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: call.context}
	overrides.Context.Cluster, overrides.Context.AuthInfo = call.cluster, call.user
	overrides.ClusterInfo.Server, overrides.AuthInfo.Token = call.server, call.token
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, overrides)
}

// execInPod runs call's command in its pod's container as `kubectl exec` would, and returns its exit code.
func execInPod(ctx context.Context, call execCall, state string) (int, error) {
	cc := clientConfig(call)
	ns := call.namespace
	if ns == "" {
		var err error
		if ns, _, err = cc.Namespace(); err != nil {
			return 0, err
		}
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return 0, err
	}
	cfg.UserAgent = "ordinal-localk8s-kubectl-exec"
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	p, err := kc.CoreV1().Pods(ns).Get(ctx, call.pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("pods %q not found", call.pod)
	} else if err != nil {
		return 0, err
	}
	name := cmp.Or(call.container, defaultContainer(p))
	if err := execable(p, name); err != nil {
		return 0, err
	}
	fs, err := containerOf(ctx, state, p, name, claimsOf(kc))
	if err != nil {
		return 0, err
	}
	var stdin io.Reader // none unless asked, as kubectl gives the command
	if call.stdin {
		stdin = os.Stdin
	}
	return fs.run(ctx, call.argv, stdin, os.Stdout, os.Stderr, 0)
}

// defaultContainer is the container kubectl execs in when not told which: the one the pod's
// kubectl.kubernetes.io/default-container annotation names, if the pod has it, else its first.
func defaultContainer(p *corev1.Pod) string {
	a := p.Annotations["kubectl.kubernetes.io/default-container"]
	for _, c := range p.Spec.Containers {
		if c.Name == a {
			return a
		}
	}
	if len(p.Spec.Containers) == 0 {
		return ""
	}
	return p.Spec.Containers[0].Name
}

// execable says why a kubelet would not exec in container name of p, if it would not: kubectl's and the
// kubelet's own words.
func execable(p *corev1.Pod, name string) error {
	switch p.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return fmt.Errorf("cannot exec into a container in a completed pod; current phase is %s", p.Status.Phase)
	}
	cs := containerStatus(p, name)
	if cs == nil || cs.State.Running == nil {
		return fmt.Errorf("unable to upgrade connection: container not found (%q)", name)
	}
	return nil
}
