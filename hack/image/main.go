// Command image builds the container image of `ordinal` without Docker, from Go modules only
// (github.com/google/go-containerregistry): a scratch base and three layers, /etc/passwd and /etc/group with
// the non-root user nonroot (65532:65532), the CA certificates at /etc/ssl/certs/ca-certificates.crt (the
// Mozilla NSS roots of golang.org/x/crypto/x509roots/fallback, so the build machine's own store does not
// matter) and the static binary at /ordinal.
//
//	make image   # CGO_ENABLED=0 go build -ldflags="-s -w" -o build/image/ordinal ./cmd/ordinal; go run ./hack/image -binary build/image/ordinal
//
// The output is a docker-save tarball (manifest.json, the config and gzipped layers), which `docker load`,
// `podman load`, `kind load image-archive`, `crane push` and skopeo's docker-archive: accept. The image is
// tagged REPO:vVERSION, VERSION being the module version the binary reports (`ordinal version`), the version
// the deploy manifests name (a test keeps them equal). Labels: org.opencontainers.image.{title,description,
// version,source,revision,created}.
//
// The build is reproducible: every timestamp (files, config, history) is SOURCE_DATE_EPOCH, else the commit
// time of HEAD, else 0, and the layers are written in a fixed order with fixed owners, so the same binary
// and commit give the same digest. The binary is the same for the same commit, Go version and checkout
// path (make image IMAGE_GOFLAGS=-trimpath: any path).
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

const (
	// DefaultRepo is the repository the image is tagged in (and the deploy manifests name).
	DefaultRepo = "ghcr.io/ordinal-dev/ordinal"
	// Source is the org.opencontainers.image.source label.
	Source = "https://github.com/ordinal-dev/ordinal"
	// BinaryPath is where the binary is in the image (the entrypoint).
	BinaryPath = "/ordinal"
	// CAPath is the CA bundle, where Go's crypto/x509 looks first on Linux.
	CAPath = "/etc/ssl/certs/ca-certificates.crt"
	// UID and GID of the user the image runs as.
	UID, GID = 65532, 65532
)

// Label keys.
const (
	LabelTitle       = "org.opencontainers.image.title"
	LabelDescription = "org.opencontainers.image.description"
	LabelVersion     = "org.opencontainers.image.version"
	LabelSource      = "org.opencontainers.image.source"
	LabelRevision    = "org.opencontainers.image.revision"
	LabelCreated     = "org.opencontainers.image.created"
)

// Tag is the image tag for a version the binary reports: "0.1.0" -> "v0.1.0".
func Tag(version string) string { return "v" + strings.TrimPrefix(version, "v") }

// Meta is what the image says about its build besides the binary.
type Meta struct {
	Version  string    // org.opencontainers.image.version, e.g. 0.1.0
	Revision string    // git commit, or ""
	Created  time.Time // every timestamp in the image
}

func main() {
	binary := flag.String("binary", "build/image/ordinal", "the static linux binary (CGO_ENABLED=0 go build -o build/image/ordinal ./cmd/ordinal)")
	out := flag.String("out", "build/ordinal-image.tar", "the docker-save tarball to write")
	repo := flag.String("repo", DefaultRepo, "repository of the image's tag")
	tag := flag.String("tag", "", "tag (default: v + the version the binary reports)")
	version := flag.String("version", "", "org.opencontainers.image.version (default: the module version the binary reports; needed when the binary cannot run here)")
	revision := flag.String("revision", "", "org.opencontainers.image.revision (default: git rev-parse HEAD, if available)")
	flag.Parse()

	arch, err := StaticArch(*binary)
	if err != nil {
		fatal("%v", err)
	}
	meta := Meta{Version: *version, Revision: *revision, Created: created()}
	if meta.Version == "" {
		if meta.Version, err = BinaryVersion(*binary); err != nil {
			fatal("%v (pass -version to build for another architecture)", err)
		}
	}
	if meta.Revision == "" {
		meta.Revision = gitOutput("rev-parse", "HEAD")
	}
	if *tag == "" {
		*tag = Tag(meta.Version)
	}
	ref, err := name.NewTag(*repo + ":" + *tag)
	if err != nil {
		fatal("%v", err)
	}
	bin, err := os.ReadFile(*binary)
	if err != nil {
		fatal("%v", err)
	}
	img, err := Build(bin, arch, meta)
	if err != nil {
		fatal("%v", err)
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fatal("%v", err)
	}
	if err := tarball.WriteToFile(*out+".tmp", ref, img); err != nil {
		fatal("writing %s: %v", *out, err)
	}
	if err := os.Rename(*out+".tmp", *out); err != nil {
		fatal("%v", err)
	}
	digest, err := img.Digest()
	if err != nil {
		fatal("%v", err)
	}
	st, err := os.Stat(*out)
	if err != nil {
		fatal("%v", err)
	}
	fmt.Printf("wrote %s (docker-save tarball, linux/%s, %.1f MB)\n", *out, arch, float64(st.Size())/1e6)
	fmt.Printf("image:  %s@%s\n", ref.Name(), digest)
	fmt.Printf("load:   docker load -i %[1]s  (or podman load -i, kind load image-archive)\n", *out)
	fmt.Printf("push:   crane push %s REGISTRY/ordinal:%s\n", *out, ref.TagStr())
}

// Build assembles the image from the binary's bytes.
func Build(bin []byte, arch string, meta Meta) (v1.Image, error) {
	if meta.Version == "" {
		return nil, errors.New("no version")
	}
	t := meta.Created.UTC()
	cf, err := empty.Image.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: t}
	labels := map[string]string{
		LabelTitle:       "ordinal",
		LabelDescription: "The Kubernetes StatefulSet controller's logic as a WebAssembly module, with its Go host: ordinal controller, webhook, replay, preview",
		LabelVersion:     meta.Version,
		LabelSource:      Source,
		LabelCreated:     t.Format(time.RFC3339),
	}
	if meta.Revision != "" {
		labels[LabelRevision] = meta.Revision
	}
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", UID, GID),
		Entrypoint: []string{BinaryPath},
		Cmd:        []string{"controller"},
		WorkingDir: "/",
		Labels:     labels,
	}
	img, err := mutate.ConfigFile(empty.Image, cf)
	if err != nil {
		return nil, err
	}
	ca, err := CABundle()
	if err != nil {
		return nil, err
	}
	layers := []struct {
		by      string
		entries []entry
	}{
		{"nonroot user 65532:65532 (/etc/passwd, /etc/group), /tmp", []entry{
			{name: "etc/", mode: 0o755},
			{name: "etc/passwd", mode: 0o644, data: []byte(Passwd)},
			{name: "etc/group", mode: 0o644, data: []byte(Group)},
			{name: "home/", mode: 0o755},
			{name: "home/nonroot/", mode: 0o700, uid: UID, gid: GID},
			{name: "tmp/", mode: 0o1777},
		}},
		{"CA certificates (golang.org/x/crypto/x509roots/fallback)", []entry{
			{name: "etc/", mode: 0o755},
			{name: "etc/ssl/", mode: 0o755},
			{name: "etc/ssl/certs/", mode: 0o755},
			{name: strings.TrimPrefix(CAPath, "/"), mode: 0o644, data: ca},
		}},
		{"ordinal " + meta.Version, []entry{
			{name: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, data: bin},
		}},
	}
	for _, l := range layers {
		layer, err := tarLayer(l.entries, t)
		if err != nil {
			return nil, err
		}
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:   layer,
			History: v1.History{Created: v1.Time{Time: t}, CreatedBy: "hack/image: " + l.by, Comment: "hack/image"},
		})
		if err != nil {
			return nil, err
		}
	}
	return img, nil
}

// Passwd and Group: root, nobody and the user the image runs as.
const (
	Passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	Group = "root:x:0:\n" +
		"nobody:x:65534:\n" +
		"nonroot:x:65532:\n"
)

// CABundle is the Mozilla NSS root store of golang.org/x/crypto/x509roots/fallback as PEM. Roots that carry a
// constraint PEM cannot express (a distrust-after date) are left out rather than trusted without it.
func CABundle() ([]byte, error) {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
	}
	if b.Len() == 0 {
		return nil, errors.New("x509roots/fallback: no roots")
	}
	return b.Bytes(), nil
}

// entry is a file (data) or a directory (name ending in /) of a layer.
type entry struct {
	name     string
	mode     int64
	uid, gid int
	data     []byte
}

// tarLayer writes the entries as a gzipped tar with fixed times and owners, deterministic for the same input
// and Go version.
func tarLayer(entries []entry, t time.Time) (v1.Layer, error) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: t, Format: tar.FormatPAX}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	data := gz.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// StaticArch checks that path is a statically linked Linux executable and returns its GOARCH.
func StaticArch(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: %v (make image builds it)", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return "", fmt.Errorf("%s is dynamically linked and would not run in a scratch image: build it with CGO_ENABLED=0", path)
		}
	}
	if f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		return "", fmt.Errorf("%s is not a Linux executable (%v)", path, f.OSABI)
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	}
	return "", fmt.Errorf("%s: unsupported machine %v", path, f.Machine)
}

// BinaryVersion runs `BINARY version -o json` and returns the module version it reports.
func BinaryVersion(path string) (string, error) {
	out, err := exec.Command(path, "version", "-o", "json", "--cache-dir=").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%v: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("%s version: %v", path, err)
	}
	var v struct {
		Module struct {
			ModuleVersion string `json:"moduleVersion"`
		} `json:"module"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return "", fmt.Errorf("%s version -o json: %v", path, err)
	}
	if v.Module.ModuleVersion == "" {
		return "", fmt.Errorf("%s version -o json: no module.moduleVersion in %s", path, out)
	}
	return v.Module.ModuleVersion, nil
}

// created is SOURCE_DATE_EPOCH, else the commit time of HEAD, else the Unix epoch.
func created() time.Time {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		s = gitOutput("log", "-1", "--format=%ct")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC()
	}
	if s != "" && os.Getenv("SOURCE_DATE_EPOCH") != "" {
		fatal("SOURCE_DATE_EPOCH=%q is not a number of seconds", s)
	}
	return time.Unix(0, 0).UTC()
}

// gitOutput runs a read-only git command; "" when git or the repository is missing.
func gitOutput(args ...string) string {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "image: "+format+"\n", args...)
	os.Exit(1)
}
