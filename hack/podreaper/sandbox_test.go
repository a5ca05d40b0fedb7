package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// statefulPod is a pod as upstream's e2e StatefulSet specs make it: a web server whose readiness is an HTTP
// probe, its claim at /data and an emptyDir at /home.
func statefulPod(name, uid string, restarts int32) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid)},
		Spec: corev1.PodSpec{
			Hostname: name,
			Containers: []corev1.Container{{Name: "webserver", Image: "httpd",
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/localhost.crt", Port: intstr.FromInt32(80)}}},
				VolumeMounts:   []corev1.VolumeMount{{Name: "datadir", MountPath: "/data/"}, {Name: "home", MountPath: "/home"}}}},
			Volumes: []corev1.Volume{
				{Name: "datadir", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "datadir-" + name}}},
				{Name: "home", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "webserver", RestartCount: restarts,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
}

// webserver is the container "webserver" of p, laid out under state.
func webserver(t *testing.T, state string, p *corev1.Pod) *container {
	t.Helper()
	c, err := containerOf(context.Background(), state, p, "webserver", claims)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// claims resolves every claim to a UID of its name: one claim per name, kept across pods.
func claims(_ context.Context, _, name string) (types.UID, error) {
	return types.UID("uid-" + name), nil
}

// sh runs a shell command in container c the way upstream's specs exec (/bin/sh -x -c CMD).
func sh(t *testing.T, c *container, cmd string) (string, int) {
	t.Helper()
	var out, errOut strings.Builder
	code, err := c.run(context.Background(), []string{"/bin/sh", "-x", "-c", cmd}, nil, &out, &errOut, 0)
	if err != nil {
		t.Fatalf("%s: the sandbox failed: %v", cmd, err)
	}
	return out.String(), code
}

// The commands upstream's e2e StatefulSet specs run in pods behave as in a container: the probed file moves
// away and back, the hostname is the pod's, files on /data outlive the pod (its claim), and nothing of the
// sandbox touches this machine's own files.
func TestSandboxRunsUpstreamsCommands(t *testing.T) {
	state := t.TempDir()
	ctx := context.Background()
	p := statefulPod("ss-0", "pod-uid-1", 0)
	c := webserver(t, state, p)
	served := filepath.Join(c.Root, "localhost.crt")
	if _, err := os.Stat(served); err != nil {
		t.Fatalf("a new container lacks the file its HTTP probe serves: %v", err)
	}
	if out, code := sh(t, c, "printf $(hostname)"); code != 0 || out != "ss-0" {
		t.Errorf("hostname: %q (exit %d), want ss-0", out, code)
	}
	if _, code := sh(t, c, "mv -v /localhost.crt /tmp/ || true"); code != 0 {
		t.Errorf("breaking the probe: exit %d", code)
	}
	if _, err := os.Stat(served); !os.IsNotExist(err) {
		t.Errorf("the probed file is still served after mv: %v", err)
	}
	if _, code := sh(t, c, "mv -v /tmp/localhost.crt / || true"); code != 0 {
		t.Errorf("restoring the probe: exit %d", code)
	}
	if _, err := os.Stat(served); err != nil {
		t.Errorf("the probed file is not back: %v", err)
	}
	for _, cmd := range []string{"ls -idlh /data", "find /data", "touch /data/1700000000", "dd if=/dev/zero of=/data/statefulset-continue bs=1 count=1 conv=fsync",
		"echo $(hostname) | dd of=/data/hostname conv=fsync", "ln -s /data/hostname /data/hostname-symlink", "test -f /data/statefulset-continue"} {
		if out, code := sh(t, c, cmd); code != 0 {
			t.Errorf("%s: exit %d (%s)", cmd, code, out)
		}
	}
	var out strings.Builder
	if code, err := c.run(ctx, []string{"tee", "/data/from-stdin"}, strings.NewReader("piped\n"), &out, io.Discard, 0); err != nil || code != 0 || out.String() != "piped\n" {
		t.Errorf("a command reading stdin: %q, exit %d, %v", out.String(), code, err)
	}
	if _, code := sh(t, c, "test -f /data/nothing-here"); code != 1 {
		t.Errorf("test -f of a missing file: exit %d, want 1", code)
	}
	// as nobody, with no device, process or disk of this machine
	if out, code := sh(t, c, `id -u; ls /dev | tr '\n' ' '; echo; test ! -e /proc/1`); code != 0 || out != "65534\nfull null random urandom zero \n" {
		t.Errorf("the sandbox's user and devices: %q (exit %d)", out, code)
	}
	if _, code := sh(t, c, "touch /usr/written-by-a-container"); code == 0 {
		t.Error("a container wrote into the machine's /usr")
	}
	if _, err := os.Stat("/usr/written-by-a-container"); err == nil {
		os.Remove("/usr/written-by-a-container")
		t.Fatal("the sandbox wrote into the machine's own /usr")
	}

	// the pod recreated (a new UID, the same claim): a fresh container, the claim's files kept
	q := statefulPod("ss-0", "pod-uid-2", 0)
	c2 := webserver(t, state, q)
	for _, cmd := range []string{
		`if [ "$(cat /data/hostname)" = "$(hostname)" ]; then exit 0; else exit 1; fi`,
		`if [ "$(cat /data/hostname-symlink)" = "$(hostname)" ]; then exit 0; else exit 1; fi`,
		"test -f /data/statefulset-continue", "test -f /localhost.crt",
	} {
		if out, code := sh(t, c2, cmd); code != 0 {
			t.Errorf("after the pod's recreation, %s: exit %d (%s)", cmd, code, out)
		}
	}
	if _, code := sh(t, c2, "test -f /home/anything || ls /home | grep -q ."); code == 0 {
		t.Error("the new pod's emptyDir holds files")
	}
	// a restart (restart count up) starts from the image again: the moved file is back
	sh(t, c2, "mv /localhost.crt /tmp/")
	c3 := webserver(t, state, statefulPod("ss-0", "pod-uid-2", 1))
	if _, code := sh(t, c3, "test -f /localhost.crt"); code != 0 {
		t.Error("a restarted container lacks its image's file")
	}
	if _, code := sh(t, c, "no-such-command"); code != 127 {
		t.Errorf("an unknown command: exit %d, want 127", code)
	}
}

// TestMain lets the test binary be a sandbox's first process, as podreaper is (container.run runs itself).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandboxInitArg {
		sandboxInit(os.Args[2:])
	}
	os.Exit(m.Run())
}

// A subPath is made and bound within its volume: a symlink a container left in the volume cannot lead a later
// pod's mount, or the directory made for it, out of the volume (kubelet's subPath rule).
func TestSandboxSubPathStaysInItsVolume(t *testing.T) {
	state := t.TempDir()
	ctx := context.Background()
	c := webserver(t, state, statefulPod("ss-0", "pod-uid-1", 0))
	outside := t.TempDir() // stands for a directory of this machine
	if _, code := sh(t, c, "ln -s "+outside+" /data/out && mkdir /data/sub && echo kept > /data/sub/file"); code != 0 {
		t.Fatalf("setting up the volume: exit %d", code)
	}
	withSubPath := func(sub string) *corev1.Pod {
		p := statefulPod("ss-0", "pod-uid-2", 0)
		p.Spec.Containers[0].VolumeMounts[0].SubPath = sub
		return p
	}
	c2 := webserver(t, state, withSubPath("sub"))
	if out, code := sh(t, c2, "cat /data/file"); code != 0 || out != "kept\n" {
		t.Errorf("subPath sub: %q (exit %d)", out, code)
	}
	fileMount := withSubPath("sub/file")
	fileMount.Spec.Containers[0].VolumeMounts[0].MountPath = "/etc2/file"
	if c3, err := containerOf(ctx, state, fileMount, "webserver", claims); err != nil {
		t.Errorf("subPath naming a file: %v", err)
	} else if out, code := sh(t, c3, "cat /etc2/file"); code != 0 || out != "kept\n" {
		t.Errorf("subPath naming a file: %q (exit %d)", out, code)
	}
	for _, sub := range []string{"out", "out/made-outside", "../../../" + outside} {
		if _, err := containerOf(ctx, state, withSubPath(sub), "webserver", claims); err == nil && sub != "../../../"+outside {
			t.Errorf("subPath %q through a symlink out of the volume: no error", sub)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("a subPath made %v outside its volume", entries)
	}
}

// No command in a sandbox gains a privilege by exec: the machine's userland has setuid-root programs (su,
// mount, passwd), and a container can replace its own /lib64 (a symlink on a merged /usr) with a directory
// holding its own ELF interpreter, which the kernel then runs as root for such a program, outside any chroot
// after a second chroot. Here a setuid-root copy of id stands for such a program.
func TestSandboxSetuidGivesNothing(t *testing.T) {
	c := webserver(t, t.TempDir(), statefulPod("ss-0", "pod-uid-1", 0))
	id, err := os.ReadFile("/usr/bin/id")
	if err != nil { // the sandbox's userland is this machine's: coreutils is part of it
		t.Fatalf("no setuid-able program to try: %v", err)
	}
	suid := filepath.Join(c.Root, "suid-id")
	if err := os.WriteFile(suid, id, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, 0o4755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if out, code := sh(t, c, "/suid-id -u"); code != 0 || out != "65534\n" {
		t.Errorf("a setuid-root program runs with effective uid %q (exit %d), want nobody's", out, code)
	}
}

// A sandbox is set up (as root, before its chroot) within the container's root: a symlink the container left
// where a device or a mount path goes leads nothing of the set-up out of the root, as the kubelet's runtime
// resolves mount points within a container's root.
func TestSandboxSetUpStaysInTheRoot(t *testing.T) {
	state, outside := t.TempDir(), t.TempDir() // outside stands for a directory of this machine
	p := statefulPod("ss-0", "pod-uid-1", 0)
	p.Spec.Containers[0].VolumeMounts[1].MountPath = "/deep/home"
	c := webserver(t, state, p)
	if _, code := sh(t, c, "mv /dev /dev.old && mv /deep /deep.old && ln -s "+outside+" /dev && ln -s "+outside+" /deep"); code != 0 {
		t.Fatalf("the container's symlinks: exit %d", code)
	}
	var out strings.Builder
	_, err := c.run(context.Background(), []string{"true"}, nil, &out, &out, 0)
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("setting a sandbox up made %v outside the container (sandbox: %v)", entries, err)
	}
}

// A sandbox has its own processes and network, as a pod has: its command reaches no process of this machine
// (another sandbox's, or a daemon's, also nobody's), leaves none behind when it ends, and connects to nothing
// this machine serves (the local cluster's etcd answers anyone on 127.0.0.1).
func TestSandboxReachesNoProcessOrService(t *testing.T) {
	c := webserver(t, t.TempDir(), statefulPod("ss-0", "pod-uid-1", 0))
	outside := exec.Command("sleep", "1000") // a process of this machine, nobody's
	outside.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { outside.Process.Kill(); outside.Wait() }()
	if _, code := sh(t, c, fmt.Sprintf("kill -9 %d", outside.Process.Pid)); code == 0 {
		t.Error("a sandbox's command killed a process of this machine")
	}
	if _, code := sh(t, c, "sleep 1000 >/dev/null 2>&1 &"); code != 0 {
		t.Fatalf("backgrounding: exit %d", code)
	}
	for _, pid := range rootedIn(c.Root) {
		t.Errorf("process %d of the sandbox outlived its command", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := os.Stat("/usr/bin/bash"); err == nil {
		if _, code := sh(t, c, "bash -c 'echo hi >/dev/tcp/127.0.0.1/"+strconv.Itoa(l.Addr().(*net.TCPAddr).Port)+"'"); code == 0 {
			t.Error("a sandbox's command connected to a service of this machine")
		}
	}
}

// rootedIn lists the processes whose root directory is dir.
func rootedIn(dir string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if root, err := os.Readlink(fmt.Sprintf("/proc/%d/root", pid)); err == nil && root == dir {
			out = append(out, pid)
		}
	}
	return out
}

// A command's own exit code is its answer, whatever it writes: only the sandbox says the sandbox failed.
func TestSandboxFailureIsTheSandboxs(t *testing.T) {
	c := webserver(t, t.TempDir(), statefulPod("ss-0", "pod-uid-1", 0))
	var out strings.Builder
	code, err := c.run(context.Background(), []string{"/bin/sh", "-c", "echo 'podreaper sandbox: made up' >&2; exit 125"}, nil, &out, &out, 0)
	if err != nil || code != sandboxFailed {
		t.Errorf("a command exiting %d: code %d, error %v", sandboxFailed, code, err)
	}
	c.Mounts = append(c.Mounts, volume{Source: filepath.Join(t.TempDir(), "missing"), Target: "/missing"})
	if _, err := c.run(context.Background(), []string{"true"}, nil, &out, &out, 0); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a sandbox that could not be set up: %v", err)
	}
}

// The state directory keeps what a kubelet keeps: of a container's instances the running one and the last
// dead one, of pods the live ones, and of claims' volumes those of the claims that exist.
func TestStateDirKeepsWhatAKubeletKeeps(t *testing.T) {
	state := t.TempDir()
	for restarts := range int32(4) {
		if _, err := containerOf(context.Background(), state, statefulPod("ss-0", "pod-uid-1", restarts), "webserver", claims); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(state, "pods", "pod-uid-1", "containers"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "webserver-2 webserver-3" {
		t.Errorf("after 3 restarts, containers %v, want webserver-2 webserver-3", names)
	}
	if _, err := containerOf(context.Background(), state, statefulPod("ss-1", "pod-uid-2", 0), "webserver", claims); err != nil {
		t.Fatal(err)
	}
	live := func(uids ...types.UID) func() (map[types.UID]bool, error) {
		return func() (map[types.UID]bool, error) {
			m := map[types.UID]bool{}
			for _, u := range uids {
				m[u] = true
			}
			return m, nil
		}
	}
	if err := removeGone(filepath.Join(state, "pods"), live("pod-uid-2")); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(state, "pods")); len(entries) != 1 || entries[0].Name() != "pod-uid-2" {
		t.Errorf("pods kept: %v, want pod-uid-2", entries)
	}
	if _, err := os.Stat(filepath.Join(state, "claims", "uid-datadir-ss-0")); err != nil {
		t.Errorf("a claim's volume went with its pod: %v", err)
	}
	if err := removeGone(filepath.Join(state, "claims"), live("uid-datadir-ss-1")); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(state, "claims")); len(entries) != 1 || entries[0].Name() != "uid-datadir-ss-1" {
		t.Errorf("claims kept: %v, want uid-datadir-ss-1", entries)
	}
}

// A FIFO a container left in its volume, named by a later pod's subPath, does not hold that pod's sandbox up.
func TestSandboxSubPathFIFO(t *testing.T) {
	state := t.TempDir()
	c := webserver(t, state, statefulPod("ss-0", "pod-uid-1", 0))
	if _, code := sh(t, c, "mkfifo /data/fifo"); code != 0 {
		t.Fatalf("mkfifo: exit %d", code)
	}
	p := statefulPod("ss-0", "pod-uid-2", 0)
	p.Spec.Containers[0].VolumeMounts[0].SubPath = "fifo"
	c2 := webserver(t, state, p)
	var out strings.Builder
	if code, err := c2.run(context.Background(), []string{"test", "-p", "/data"}, nil, &out, &out, 0); code != 0 || err != nil {
		t.Errorf("a FIFO bound by subPath: exit %d, %v (%s)", code, err, out.String())
	}
}

// A volume mounted readOnly is read-only in the sandbox, though nobody owns it; the others are writable.
func TestSandboxReadOnlyVolume(t *testing.T) {
	p := statefulPod("ss-0", "pod-uid-1", 0)
	p.Spec.Containers[0].VolumeMounts[1].ReadOnly = true
	c := webserver(t, t.TempDir(), p)
	if _, code := sh(t, c, "touch /home/x"); code == 0 {
		t.Error("a readOnly volume was written")
	}
	if _, code := sh(t, c, "touch /data/x"); code != 0 {
		t.Errorf("a volume not readOnly: touch exit %d", code)
	}
}

// A sandbox's processes are bounded (nobody's, machine-wide: this machine's PIDs number 32768 or so): a probe
// that forks without end cannot take every PID of the machine.
func TestSandboxProcessesBounded(t *testing.T) {
	c := webserver(t, t.TempDir(), statefulPod("ss-0", "pod-uid-1", 0))
	if _, err := os.Stat("/usr/bin/bash"); err != nil { // the sandbox's userland is this machine's
		t.Fatalf("no bash to ask ulimit -u in the sandbox: %v", err)
	}
	if out, code := sh(t, c, "bash -c 'ulimit -u'"); code != 0 || out != fmt.Sprintln(sandboxProcesses) {
		t.Errorf("ulimit -u in a sandbox: %q (exit %d), want %d", out, code, sandboxProcesses)
	}
}
