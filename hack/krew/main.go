// Command krew packages the kubectl plugin for krew (https://krew.sigs.k8s.io): one archive per platform
// holding the binary as kubectl-ordinal, and the plugin manifest naming each archive's URL and sha256.
//
//	go run ./hack/krew -version v0.1.0 -out build/krew     # or: make krew VERSION=v0.1.0
//
// The archives are cross-compiled with CGO_ENABLED=0 (the binary is static, the module embedded). Upload
// them as the release's assets under -base-url; the manifest (build/krew/ordinal.yaml) then goes to a
// krew index, or installs directly: kubectl krew install --manifest=build/krew/ordinal.yaml
// --archive=build/krew/kubectl-ordinal_linux_amd64.tar.gz.
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// platforms krew installs for.
var platforms = [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

func main() {
	version := flag.String("version", "", "release version, e.g. v0.1.0 (required)")
	out := flag.String("out", "build/krew", "directory for the archives and the manifest")
	baseURL := flag.String("base-url", "https://github.com/ordinal-dev/ordinal/releases/download", "where the release's assets are served; VERSION/ARCHIVE is appended")
	only := flag.String("platforms", "", "comma-separated os/arch subset (default: all)")
	flag.Parse()
	if !strings.HasPrefix(*version, "v") {
		fatal("-version must be a release tag like v0.1.0, got %q", *version)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal("%v", err)
	}
	var archives []archive
	for _, p := range platforms {
		if *only != "" && !strings.Contains(","+*only+",", ","+p[0]+"/"+p[1]+",") {
			continue
		}
		bin := filepath.Join(*out, "kubectl-ordinal_"+p[0]+"_"+p[1])
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/ordinal")
		cmd.Env = append(os.Environ(), "GOOS="+p[0], "GOARCH="+p[1], "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fatal("building for %s/%s: %v", p[0], p[1], err)
		}
		a, err := pack(bin, *out, p[0], p[1])
		if err != nil {
			fatal("%v", err)
		}
		os.Remove(bin)
		archives = append(archives, a)
	}
	m, err := manifest(*version, *baseURL, archives)
	if err != nil {
		fatal("%v", err)
	}
	path := filepath.Join(*out, "ordinal.yaml")
	if err := os.WriteFile(path, m, 0o644); err != nil {
		fatal("%v", err)
	}
	fmt.Printf("wrote %s and %d archives\n", path, len(archives))
}

// archive is one platform's package.
type archive struct {
	OS, Arch, File, SHA256 string
}

// pack writes ARCHIVE.tar.gz holding bin as kubectl-ordinal, and returns its digest.
func pack(bin, dir, goos, goarch string) (archive, error) {
	a := archive{OS: goos, Arch: goarch, File: "kubectl-ordinal_" + goos + "_" + goarch + ".tar.gz"}
	f, err := os.Create(filepath.Join(dir, a.File))
	if err != nil {
		return a, err
	}
	defer f.Close()
	h := sha256.New()
	gz := gzip.NewWriter(io.MultiWriter(f, h))
	tw := tar.NewWriter(gz)
	for _, e := range []struct{ name, from string }{{"kubectl-ordinal", bin}} {
		b, err := os.ReadFile(e.from)
		if err != nil {
			return a, err
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o755, Size: int64(len(b)), ModTime: time.Unix(0, 0)}); err != nil {
			return a, err
		}
		if _, err := tw.Write(b); err != nil {
			return a, err
		}
	}
	if err := tw.Close(); err != nil {
		return a, err
	}
	if err := gz.Close(); err != nil {
		return a, err
	}
	a.SHA256 = hex.EncodeToString(h.Sum(nil))
	return a, nil
}

// manifest is the krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2 Plugin).
func manifest(version, baseURL string, archives []archive) ([]byte, error) {
	var ps []map[string]any
	for _, a := range archives {
		ps = append(ps, map[string]any{
			"selector": map[string]any{"matchLabels": map[string]string{"os": a.OS, "arch": a.Arch}},
			"uri":      strings.TrimSuffix(baseURL, "/") + "/" + version + "/" + a.File,
			"sha256":   a.SHA256,
			"files":    []map[string]string{{"from": "kubectl-ordinal", "to": "."}},
			"bin":      "kubectl-ordinal",
		})
	}
	return yaml.Marshal(map[string]any{
		"apiVersion": "krew.googlecontainertools.github.com/v1alpha2",
		"kind":       "Plugin",
		"metadata":   map[string]string{"name": "ordinal"},
		"spec": map[string]any{
			"version":          version,
			"homepage":         "https://github.com/ordinal-dev/ordinal",
			"shortDescription": "Preview StatefulSet edits and replay rollouts with the controller's own logic",
			"description": "kubectl ordinal runs the Kubernetes StatefulSet controller's reconcile logic (a WebAssembly\n" +
				"module) against the live cluster: what applying a manifest would do (steps, batches, duration,\n" +
				"traps such as PVCs deleted by whenScaled=Delete), the current rollout replayed to completion,\n" +
				"and the controller's snapshot of a set.\n",
			"platforms": ps,
		},
	})
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "krew: "+format+"\n", args...)
	os.Exit(1)
}
