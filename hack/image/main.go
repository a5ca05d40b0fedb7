// Command image builds the container image of `ordinal` without Docker, from Go modules only
// (github.com/google/go-containerregistry), for linux/amd64 and linux/arm64: per architecture a scratch base
// and three layers, /etc/passwd and /etc/group with the non-root user nonroot (65532:65532), the CA
// certificates at /etc/ssl/certs/ca-certificates.crt (the Mozilla NSS roots of
// golang.org/x/crypto/x509roots/fallback, so the build machine's own store does not matter) and the static
// binary at /ordinal; the images are the entries of one OCI image index (multi-arch).
//
//	make image   # per ARCH: CGO_ENABLED=0 GOARCH=ARCH go build -ldflags="-s -w -X ...stampedVersion=..." -o build/image/ordinal-ARCH ./cmd/ordinal
//	             # go run ./hack/image -binary build/image/ordinal-amd64 -binary build/image/ordinal-arm64 -layout build/ordinal-image
//
// The output is an OCI image layout tarball (oci-layout, index.json naming the index REPO:TAG, blobs/sha256/)
// which also carries a docker-save manifest.json for the linux/amd64 image: containerd (`kind load
// image-archive`, `ctr images import`, nerdctl, Docker with the containerd image store) and `podman load`
// import the index, every platform; `docker load` with Docker's classic store, and tools that read only
// manifest.json (go-containerregistry's tarball, `crane push FILE`), get the linux/amd64 image. -layout
// also writes the layout as a directory, which `crane push DIR REF` pushes as the index. The tag is
// REPO:vVERSION, VERSION being the module version the binary reports (`ordinal version`), the version the
// deploy manifests name (a test keeps them equal). Labels: org.opencontainers.image.{title,description,
// version,source,revision,created}.
//
// The build is reproducible: every timestamp (files, config, history, the archive's entries) is
// SOURCE_DATE_EPOCH, else the commit time of HEAD, else 0, and the layers and the archive are written in a
// fixed order with fixed owners, so the same binaries and commit give the same digest. The binaries are the
// same for the same commit, Go version and checkout path (make image IMAGE_GOFLAGS=-trimpath: any path).
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
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
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

// binaries is the repeatable -binary flag.
type binaries []string

func (b *binaries) String() string     { return strings.Join(*b, ",") }
func (b *binaries) Set(s string) error { *b = append(*b, s); return nil }

func main() {
	var bins binaries
	flag.Var(&bins, "binary", "a static linux binary (CGO_ENABLED=0 GOARCH=ARCH go build -o build/image/ordinal-ARCH ./cmd/ordinal); repeat it, one per architecture (default build/image/ordinal)")
	out := flag.String("out", "build/ordinal-image.tar", "the OCI image layout tarball to write (with a docker-save manifest.json for the "+DockerArch+" image)")
	layoutDir := flag.String("layout", "", "also write the OCI image layout as a directory (for `crane push DIR REF`, which takes the index from a directory)")
	repo := flag.String("repo", DefaultRepo, "repository of the image's tag")
	tag := flag.String("tag", "", "tag (default: v + the version the binary reports)")
	version := flag.String("version", "", "org.opencontainers.image.version (default: the module version the binary for this machine's architecture reports; needed when none can run here)")
	revision := flag.String("revision", "", "org.opencontainers.image.revision (default: git rev-parse HEAD, if available)")
	flag.Parse()
	if len(bins) == 0 {
		bins = binaries{"build/image/ordinal"}
	}

	meta := Meta{Version: *version, Revision: *revision, Created: created()}
	platforms := map[string][]byte{}
	var native string
	for _, p := range bins {
		arch, err := StaticArch(p)
		if err != nil {
			fatal("%v", err)
		}
		if _, dup := platforms[arch]; dup {
			fatal("two binaries for linux/%s", arch)
		}
		if platforms[arch], err = os.ReadFile(p); err != nil {
			fatal("%v", err)
		}
		if arch == runtime.GOARCH && runtime.GOOS == "linux" {
			native = p
		}
	}
	if meta.Version == "" {
		if native == "" {
			fatal("no binary for linux/%s to ask its version: pass -version", runtime.GOARCH)
		}
		var err error
		if meta.Version, err = BinaryVersion(native); err != nil {
			fatal("%v (pass -version)", err)
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
	idx, err := BuildIndex(platforms, meta)
	if err != nil {
		fatal("%v", err)
	}
	files, err := Archive(ref, idx)
	if err != nil {
		fatal("%v", err)
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fatal("%v", err)
	}
	f, err := os.Create(*out + ".tmp")
	if err != nil {
		fatal("%v", err)
	}
	if err := WriteTar(f, files, meta.Created); err != nil {
		fatal("writing %s: %v", *out, err)
	}
	if err := f.Close(); err != nil {
		fatal("%v", err)
	}
	if err := os.Rename(*out+".tmp", *out); err != nil {
		fatal("%v", err)
	}
	if *layoutDir != "" {
		if err := WriteDir(*layoutDir, files); err != nil {
			fatal("%v", err)
		}
	}
	digest, err := idx.Digest()
	if err != nil {
		fatal("%v", err)
	}
	st, err := os.Stat(*out)
	if err != nil {
		fatal("%v", err)
	}
	var archs []string
	for a := range platforms {
		archs = append(archs, "linux/"+a)
	}
	sort.Strings(archs)
	fmt.Printf("wrote %s (OCI image layout tarball, an index of %s; %.1f MB)\n", *out, strings.Join(archs, " + "), float64(st.Size())/1e6)
	fmt.Printf("image:  %s@%s\n", ref.Name(), digest)
	fmt.Printf("load:   docker load -i %[1]s  (or podman load -i, kind load image-archive %[1]s)\n", *out)
	if *layoutDir != "" {
		fmt.Printf("push:   crane push %s REGISTRY/ordinal:%s  (the index, every platform)\n", *layoutDir, ref.TagStr())
	}
}

// DockerArch is the platform of the archive's docker-save manifest.json (for a Docker without the containerd
// image store and for tools that read only manifest.json); index.json names every platform.
const DockerArch = "amd64"

// BuildIndex builds one image per architecture (arch -> static binary) and the OCI image index of them,
// ordered by architecture.
func BuildIndex(platforms map[string][]byte, meta Meta) (v1.ImageIndex, error) {
	if len(platforms) == 0 {
		return nil, errors.New("no binaries")
	}
	archs := make([]string, 0, len(platforms))
	for a := range platforms {
		archs = append(archs, a)
	}
	sort.Strings(archs)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, a := range archs {
		img, err := Build(platforms[a], a, meta)
		if err != nil {
			return nil, fmt.Errorf("linux/%s: %v", a, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: a}},
		})
	}
	return idx, nil
}

// Annotations of index.json's entry: the name containerd (kind, nerdctl, Docker with the containerd image
// store) gives the imported index, and the OCI layout's ref name.
const (
	AnnotationImageName = "io.containerd.image.name"
	AnnotationRefName   = "org.opencontainers.image.ref.name"
)

// Archive lays out the index as an OCI image layout (oci-layout, index.json naming ref, blobs/sha256/...)
// plus a docker-save manifest.json for the DockerArch image: path -> content. containerd reads index.json
// (every platform) when oci-layout is present; `docker load` without the containerd store and
// go-containerregistry's tarball package read manifest.json.
func Archive(ref name.Tag, idx v1.ImageIndex) (map[string][]byte, error) {
	files := map[string][]byte{"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`)}
	blob := func(h v1.Hash, b []byte) string {
		p := "blobs/" + h.Algorithm + "/" + h.Hex
		files[p] = b
		return p
	}
	raw, err := idx.RawManifest()
	if err != nil {
		return nil, err
	}
	digest, err := idx.Digest()
	if err != nil {
		return nil, err
	}
	blob(digest, raw)
	top := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIImageIndex, Digest: digest, Size: int64(len(raw)),
			Annotations: map[string]string{AnnotationImageName: ref.Name(), AnnotationRefName: ref.TagStr()},
		}},
	}
	if files["index.json"], err = json.Marshal(top); err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	type dockerEntry struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	var docker []dockerEntry
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		m, err := img.RawManifest()
		if err != nil {
			return nil, err
		}
		blob(d.Digest, m)
		c, err := img.RawConfigFile()
		if err != nil {
			return nil, err
		}
		cn, err := img.ConfigName()
		if err != nil {
			return nil, err
		}
		e := dockerEntry{Config: blob(cn, c), RepoTags: []string{ref.Name()}}
		layers, err := img.Layers()
		if err != nil {
			return nil, err
		}
		for _, l := range layers {
			h, err := l.Digest()
			if err != nil {
				return nil, err
			}
			rc, err := l.Compressed()
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return nil, err
			}
			e.Layers = append(e.Layers, blob(h, b))
		}
		if d.Platform != nil && d.Platform.Architecture == DockerArch {
			docker = append(docker, e)
		}
	}
	if len(docker) == 1 {
		if files["manifest.json"], err = json.Marshal(docker); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// WriteTar writes the files as a tar with fixed times, owners and order (directories first, then by path).
func WriteTar(w io.Writer, files map[string][]byte, t time.Time) error {
	tw := tar.NewWriter(w)
	dirs := map[string]bool{}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
		for d := filepath.ToSlash(filepath.Dir(p)); d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
			dirs[d+"/"] = true
		}
	}
	sort.Strings(paths)
	var names []string
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: t.UTC(), Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	for _, p := range paths {
		b := files[p]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: 0o644, Size: int64(len(b)), ModTime: t.UTC(), Format: tar.FormatPAX}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	return tw.Close()
}

// WriteDir writes the files under dir, which it first empties.
func WriteDir(dir string, files map[string][]byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			return err
		}
	}
	return nil
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
	// OCI media types throughout: the image is one entry of an OCI image index.
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.ConfigFile(base, cf)
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
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, tarball.WithMediaType(types.OCILayer))
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
