package main

// The containers kwok does not run, for the commands that would run in them: `kubectl exec` (through the
// kubectl of kubectl.go) and exec readiness probes (prober.go). A container is a directory of this machine
// (its own files: what it changed of its image) and a command runs in it in a sandbox: new mount, UTS, PID,
// network and IPC namespaces, the machine's userland (/usr, /etc, ...) bound read-only as the image's, the
// pod's volumes at their mount paths, the pod's hostname, and chroot; the command runs as nobody
// (no_new_privs: no setuid program makes it root), with /dev/null and its kin for devices, and its processes
// end with it. So a shell, coreutils and the paths upstream's e2e specs use behave as in a container: `mv`
// of a file a probe serves, `dd` into /data, `$(hostname)`. Whatever a pod of the local cluster asks (its
// exec probes run by themselves) cannot write outside its own directories.
//
// Layout under the state directory (one per cluster, $LOCALK8S_RUN/kubelet):
//
//	pods/<pod uid>/containers/<name>-<restart count>/   a container's own files; a restart starts afresh
//	pods/<pod uid>/volumes/<volume>/                     an emptyDir volume, the pod's as long as it lives
//	claims/<claim uid>/                                  a claim's volume: kept across pods, while the claim exists
//
// A container starts with the files its HTTP probes serve (the probe's path under /): upstream's specs break
// a web server's readiness by moving that file away (`mv -v /localhost.crt /tmp/`), and restore it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// sandboxInitArg is the first argument of podreaper run as a sandbox's first process (sandboxInit).
const sandboxInitArg = "sandbox-init"

// sandboxFailed is the exit code of a sandbox that could not be set up (as `docker run`'s 125): the command
// never ran, which callers report as an error, not as the command's answer.
const sandboxFailed = 125

// container is one container of a pod as a sandbox sees it.
type container struct {
	Root     string   `json:"root"`     // the container's own files
	Hostname string   `json:"hostname"` // what hostname(1) says in it
	Mounts   []volume `json:"mounts"`   // the pod's volumes the container mounts
}

// volume is a host directory (a volume's, or a subPath within it) bound at a mount path of the container.
type volume struct {
	Source   string `json:"source"`  // the volume's directory
	SubPath  string `json:"subPath"` // within it, "" for all of it
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly"`
}

// claimUID resolves a PersistentVolumeClaim of the pod's namespace to its UID.
type claimUID func(ctx context.Context, namespace, name string) (types.UID, error)

// claimsOf resolves claims through the API server kc talks to (the prober's client, or kubectl exec's).
func claimsOf(kc kubernetes.Interface) claimUID {
	return func(ctx context.Context, namespace, name string) (types.UID, error) {
		c, err := kc.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return c.UID, nil
	}
}

// containerOf lays out (once) and returns container name of pod p under the state directory.
func containerOf(ctx context.Context, state string, p *corev1.Pod, name string, claim claimUID) (*container, error) {
	var spec *corev1.Container
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == name {
			spec = &p.Spec.Containers[i]
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("pod %s/%s has no container %q", p.Namespace, p.Name, name)
	}
	var restarts int32
	if cs := containerStatus(p, name); cs != nil {
		restarts = cs.RestartCount
	}
	podDir := filepath.Join(state, "pods", string(p.UID))
	c := &container{Root: filepath.Join(podDir, "containers", fmt.Sprintf("%s-%d", name, restarts)), Hostname: podHostname(p)}
	if err := layOut(c.Root, servedPaths(spec)); err != nil {
		return nil, err
	}
	removeDeadContainers(filepath.Join(podDir, "containers"), name, restarts)
	for _, m := range spec.VolumeMounts {
		src, err := volumeDir(ctx, state, podDir, p, m.Name, claim)
		if err != nil {
			return nil, err
		}
		if src == "" {
			continue // a ConfigMap, a Secret, a projected token: nothing the specs read
		}
		if err := os.MkdirAll(src, 0o755); err != nil {
			return nil, err
		}
		if err := ownByNobody(src); err != nil {
			return nil, err
		}
		sub := strings.TrimPrefix(path.Clean("/"+m.SubPath), "/")
		if sub != "" { // made within the volume: a symlink a container left there cannot lead out of it
			vol, err := os.OpenRoot(src)
			if err != nil {
				return nil, err
			}
			if _, err = vol.Stat(sub); errors.Is(err, os.ErrNotExist) { // a file or directory already there is bound as it is
				err = vol.MkdirAll(sub, 0o755)
				if err == nil {
					err = vol.Lchown(sub, nobody, nobody)
				}
			}
			vol.Close()
			if err != nil {
				return nil, fmt.Errorf("subPath %q of volume %s: %w", m.SubPath, m.Name, err)
			}
		}
		c.Mounts = append(c.Mounts, volume{Source: src, SubPath: sub, Target: path.Clean("/" + m.MountPath), ReadOnly: m.ReadOnly})
	}
	return c, nil
}

// removeDeadContainers removes the files of container name's instances before the last dead one (restart
// count below restarts-1), as the kubelet's garbage collector keeps one dead container per container: a
// container restarting over and over does not grow the state directory.
func removeDeadContainers(dir, name string, restarts int32) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n, err := strconv.ParseInt(strings.TrimPrefix(e.Name(), name+"-"), 10, 32)
		if err == nil && strings.HasPrefix(e.Name(), name+"-") && int32(n) < restarts-1 {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// removeGone removes the entries of dir (pods/ or claims/ of the state directory, named by UID) whose object
// is not among those live lists: pods deleted while podreaper was not watching, claims deleted since they were
// mounted. The directory is read first, so that an object made meanwhile, not yet listed, is not taken for gone.
func removeGone(dir string, live func() (map[types.UID]bool, error)) error {
	entries, _ := os.ReadDir(dir)
	if len(entries) == 0 {
		return nil
	}
	uids, err := live()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !uids[types.UID(e.Name())] {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// podHostname is the pod's hostname as its kubelet sets it: spec.hostname, else the pod's name (at most 63
// characters, without a trailing '-' or '.').
func podHostname(p *corev1.Pod) string {
	if p.Spec.Hostname != "" {
		return p.Spec.Hostname
	}
	h := p.Name
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}

// servedPaths are the files a container's HTTP probes ask for: its image has them at first.
func servedPaths(c *corev1.Container) []string {
	var out []string
	for _, pr := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
		if pr != nil && pr.HTTPGet != nil {
			if p := path.Clean("/" + pr.HTTPGet.Path); p != "/" {
				out = append(out, p)
			}
		}
	}
	return out
}

// layOut creates a container's root with its image's files, unless it exists: built aside, then renamed into
// place, so that a sandbox and a probe starting the same container at once never see half of it.
func layOut(root string, files []string) error {
	if _, err := os.Stat(root); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(root), ".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(tmp, "tmp"), 0o1777); err != nil {
		return err
	}
	for _, f := range files {
		full := filepath.Join(tmp, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(f+"\n"), 0o644); err != nil {
			return err
		}
	}
	if err := filepath.WalkDir(tmp, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return ownByNobody(p)
	}); err != nil {
		return err
	}
	if err := os.Rename(tmp, root); err != nil && !errors.Is(err, os.ErrExist) && !isNotEmpty(err) {
		return err
	}
	return nil
}

// ownByNobody gives p to the user a sandbox's command runs as.
func ownByNobody(p string) error {
	if err := os.Lchown(p, nobody, nobody); err != nil {
		return fmt.Errorf("the sandbox's files are nobody's (it needs root): %w", err)
	}
	return nil
}

func isNotEmpty(err error) bool { return errors.Is(err, syscall.ENOTEMPTY) }

// volumeDir is the host directory behind the pod's volume name: a claim's (by its UID), an emptyDir's, or ""
// for a volume of another kind.
func volumeDir(ctx context.Context, state, podDir string, p *corev1.Pod, name string, claim claimUID) (string, error) {
	for _, v := range p.Spec.Volumes {
		if v.Name != name {
			continue
		}
		switch {
		case v.PersistentVolumeClaim != nil:
			uid, err := claim(ctx, p.Namespace, v.PersistentVolumeClaim.ClaimName)
			if err != nil {
				return "", fmt.Errorf("volume %s of pod %s/%s: claim %s: %w", name, p.Namespace, p.Name, v.PersistentVolumeClaim.ClaimName, err)
			}
			return filepath.Join(state, "claims", string(uid)), nil
		case v.EmptyDir != nil:
			return filepath.Join(podDir, "volumes", name), nil
		}
		return "", nil
	}
	return "", fmt.Errorf("pod %s/%s mounts volume %q, which it does not have", p.Namespace, p.Name, name)
}

// run runs argv in the container, as `kubectl exec` or an exec probe would, on stdin (nil: none), and returns
// its exit code. err is the sandbox's own failure (the command did not run), or the command running past
// timeout (0: none), counted from its start: setting the sandbox up is the emulation's time, not the
// container's.
func (c *container) run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, timeout time.Duration) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("no command")
	}
	spec, err := json.Marshal(c)
	if err != nil {
		return 0, err
	}
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	// sandbox-init's own failure comes on this pipe, which closes as the command starts
	setUp, setUpW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer setUp.Close()
	cmd := exec.CommandContext(ctx, self, append([]string{sandboxInitArg, string(spec), "--"}, argv...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = stdin, stdout, stderr, []*os.File{setUpW}
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME=" + c.Hostname, "HOME=/root"}
	// its own processes (which end with it) and network, as a pod has: nothing of this machine to signal, trace or
	// connect to (the local cluster's etcd answers anyone on 127.0.0.1)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC}
	err = cmd.Start()
	setUpW.Close()
	if errors.Is(err, syscall.EPERM) {
		return 0, fmt.Errorf("creating the sandbox's namespaces needs root (CAP_SYS_ADMIN): %w", err)
	} else if err != nil {
		return 0, err
	}
	failed, _ := io.ReadAll(io.LimitReader(setUp, 4096))
	var timedOut atomic.Bool
	if len(failed) == 0 && timeout > 0 {
		t := time.AfterFunc(timeout, func() { timedOut.Store(true); cmd.Process.Kill() }) // the namespace's init: all of it ends
		defer t.Stop()
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case len(failed) > 0:
		return 0, fmt.Errorf("podreaper sandbox: %s", strings.TrimSpace(string(failed)))
	case timedOut.Load():
		return 0, fmt.Errorf("command timed out after %s", timeout)
	case err == nil:
		return 0, nil
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode(), nil
	}
	return 0, err
}

// hostUserland is what a sandbox takes from this machine, read-only, as its image: a shell and coreutils.
var hostUserland = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr", "/etc"}

// devices are the device files a sandbox has (no disk, no terminal of this machine).
var devices = []string{"null", "zero", "full", "random", "urandom"}

// nobody is the user a sandbox's command runs as: it owns the container's files and its volumes, and nothing
// of this machine.
const nobody = 65534

// sandboxProcesses bounds the processes (and threads) of user nobody, all sandboxes' together, as a pod's
// pids limit bounds a container's: a command forking without end would otherwise take every PID of the
// machine (32768 by default) before its timeout ends it. Far above what the specs' sandboxes use at once.
const sandboxProcesses = 1024

// rlimitNproc is RLIMIT_NPROC (asm-generic/resource.h), which package syscall lacks.
const rlimitNproc = 6

// prSetNoNewPrivs is prctl's PR_SET_NO_NEW_PRIVS (linux/prctl.h), which package syscall lacks.
const prSetNoNewPrivs = 38

// sandboxInit is the first process of a sandbox (podreaper sandbox-init SPEC -- ARGV...), in its own
// namespaces: it binds the userland and the volumes into the container's root, sets the hostname,
// enters the root and becomes the command. Nothing it mounts reaches the machine's own namespace.
func sandboxInit(args []string) {
	setUp := os.NewFile(3, "set-up") // container.run's pipe: closed by the command's exec, or told why not
	syscall.CloseOnExec(3)
	fail := func(err error) {
		fmt.Fprintln(setUp, err)
		os.Exit(sandboxFailed)
	}
	if len(args) < 3 || args[1] != "--" {
		fail(errors.New("usage: podreaper sandbox-init SPEC -- COMMAND..."))
	}
	var c container
	if err := json.Unmarshal([]byte(args[0]), &c); err != nil {
		fail(err)
	}
	argv := args[2:]
	if err := mountContainer(&c); err != nil {
		fail(err)
	}
	if err := enterAsNobody(&c); err != nil {
		fail(err)
	}
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		// as a container runtime answers a command it cannot find
		fmt.Fprintf(os.Stderr, "exec: %q: %v\n", argv[0], err)
		os.Exit(commandNotFound)
	}
	// No exec gains a privilege (no_new_privs, as a container runtime sets it): the userland's setuid-root
	// programs would otherwise run as root an ELF interpreter the container put at its own /lib64. The flag is
	// the thread's, hence locked to the thread that execs.
	runtime.LockOSThread()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0); errno != 0 {
		fail(fmt.Errorf("setting no_new_privs: %w", errno))
	}
	fail(syscall.Exec(bin, argv, os.Environ()))
}

// mountContainer makes the sandbox's mounts private, then mounts into the container's root the userland, the
// devices and the volumes. The container (nobody) owns its root and may have left symlinks anywhere in it:
// every mount point is made and opened within the root (os.Root), and mounted on by its descriptor.
func mountContainer(c *container) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	root, err := os.OpenRoot(c.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, d := range hostUserland {
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 { // /bin -> usr/bin on a merged /usr
			link, err := os.Readlink(d)
			if err != nil {
				return err
			}
			if err := root.Symlink(link, inRoot(d)); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
			continue
		}
		if err := bind(root, d, d, false, true); err != nil {
			return err
		}
	}
	for _, d := range devices {
		if err := bind(root, "/dev/"+d, "/dev/"+d, true, false); err != nil {
			return err
		}
	}
	for _, v := range c.Mounts {
		src, err := volumeSource(v)
		if err != nil {
			return err
		}
		fi, err := src.Stat()
		if err == nil {
			err = bind(root, fdPath(src), v.Target, !fi.IsDir(), v.ReadOnly)
		}
		src.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// enterAsNobody gives the sandbox the pod's hostname, enters the container's root and becomes nobody, with a
// bound on its processes.
func enterAsNobody(c *container) error {
	if err := syscall.Sethostname([]byte(c.Hostname)); err != nil {
		return fmt.Errorf("setting the hostname: %w", err)
	}
	if err := syscall.Chroot(c.Root); err != nil {
		return fmt.Errorf("entering the container's root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := syscall.Setrlimit(rlimitNproc, &syscall.Rlimit{Cur: sandboxProcesses, Max: sandboxProcesses}); err != nil {
		return fmt.Errorf("bounding the processes: %w", err)
	}
	if err := syscall.Setgroups(nil); err != nil {
		return err
	}
	if err := syscall.Setgid(nobody); err != nil {
		return err
	}
	return syscall.Setuid(nobody)
}

// volumeSource opens what v binds within its volume (os.Root: no symlink leads out of it), to be bound by its
// descriptor's /proc path: what is bound is what was opened, whatever a container renames meanwhile.
func volumeSource(v volume) (*os.File, error) {
	if v.SubPath == "" {
		return os.Open(v.Source)
	}
	vol, err := os.OpenRoot(v.Source)
	if err != nil {
		return nil, err
	}
	defer vol.Close()
	f, err := vol.OpenFile(v.SubPath, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO left there does not block
	if err != nil {
		return nil, fmt.Errorf("subPath %s of %s: %w", v.SubPath, v.Source, err)
	}
	return f, nil
}

// bind mounts source at target, a path of the container's root made (a file if asked, else a directory) and
// resolved within it; read-only if asked.
func bind(root *os.Root, source, target string, file, readOnly bool) error {
	rel := inRoot(target)
	if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
		return fmt.Errorf("mount point %s: %w", target, err)
	}
	if file { // O_NONBLOCK: a FIFO the container left there does not hold the sandbox up
		f, err := root.OpenFile(rel, os.O_RDONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
		if err != nil {
			return fmt.Errorf("mount point %s: %w", target, err)
		}
		f.Close()
	} else if err := root.Mkdir(rel, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("mount point %s: %w", target, err)
	}
	at, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("mount point %s: %w", target, err)
	}
	err = syscall.Mount(source, fdPath(at), "", syscall.MS_BIND|syscall.MS_REC, "")
	at.Close()
	if err != nil {
		return fmt.Errorf("binding %s at %s: %w", source, target, err)
	}
	if !readOnly {
		return nil
	}
	top, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0) // now the mount just made
	if err != nil {
		return fmt.Errorf("mount point %s: %w", target, err)
	}
	defer top.Close()
	if err := syscall.Mount("", fdPath(top), "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("making %s read-only: %w", target, err)
	}
	return nil
}

// inRoot is an absolute path of the container as a path within its root.
func inRoot(p string) string { return "." + path.Clean("/"+p) }

// fdPath names an open file by its descriptor: what mount(2) acts on is what was opened.
func fdPath(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }
