package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"encoding/pem"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/guest/statefulset"
)

// imageTarball is what `make image` writes; `make test` builds it first and sets ORDINAL_REQUIRE_IMAGE=1.
func imageTarball(t *testing.T) string {
	p := os.Getenv("ORDINAL_IMAGE")
	if p == "" {
		p = filepath.Join("..", "..", "build", "ordinal-image.tar")
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("ORDINAL_REQUIRE_IMAGE") == "1" {
			t.Fatalf("%v: run `make image`", err)
		}
		t.Skipf("%v: run `make image` to test the image (make test does)", err)
	}
	return p
}

// TestImage reads the archive `make image` wrote: an OCI image layout whose index.json names one image index
// of linux/amd64 and linux/arm64 and a docker-save manifest.json for the amd64 image. For each platform it
// checks the config (architecture, user, labels with the version), unpacks the file system, checks the
// binary's ELF machine and static linking, the version stamped in it and the CA bundle, and runs the binary of
// this machine's architecture; then it rebuilds the archive from the unpacked binaries to check the build is
// reproducible, byte for byte.
func TestImage(t *testing.T) {
	path := imageTarball(t)
	files := readTar(t, path)
	if got := string(files["oci-layout"]); !strings.Contains(got, `"imageLayoutVersion":"1.0.0"`) {
		t.Errorf("oci-layout = %q", got)
	}
	version := statefulset.ModuleVersion
	wantRef := DefaultRepo + ":" + Tag(version)

	// index.json: one entry, the image index, named as containerd and the OCI layout name images.
	var top v1.IndexManifest
	if err := json.Unmarshal(files["index.json"], &top); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if len(top.Manifests) != 1 || top.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("index.json: %+v, want one %s", top.Manifests, types.OCIImageIndex)
	}
	if a := top.Manifests[0].Annotations; a[AnnotationImageName] != wantRef || a[AnnotationRefName] != Tag(version) {
		t.Errorf("index.json annotations %v, want %s=%s and %s=%s", a, AnnotationImageName, wantRef, AnnotationRefName, Tag(version))
	}
	dir := t.TempDir()
	if err := WriteDir(filepath.Join(dir, "layout"), files); err != nil {
		t.Fatal(err)
	}
	lp, err := layout.FromPath(filepath.Join(dir, "layout"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	digest := top.Manifests[0].Digest
	idx, err = idx.ImageIndex(digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var archs []string
	for _, d := range im.Manifests {
		if d.Platform == nil || d.MediaType != types.OCIManifestSchema1 {
			t.Fatalf("index entry %+v: want an OCI manifest with a platform", d)
		}
		archs = append(archs, d.Platform.OS+"/"+d.Platform.Architecture)
	}
	if strings.Join(archs, " ") != "linux/amd64 linux/arm64" {
		t.Fatalf("the index's platforms: %v, want linux/amd64 linux/arm64", archs)
	}

	binaries := map[string][]byte{}
	var meta Meta
	var amd64Config v1.Hash
	for _, d := range im.Manifests {
		arch := d.Platform.Architecture
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != "linux" || cf.Architecture != arch {
			t.Errorf("linux/%s: config says %s/%s", arch, cf.OS, cf.Architecture)
		}
		if arch == DockerArch {
			if amd64Config, err = img.ConfigName(); err != nil {
				t.Fatal(err)
			}
		}
		checkConfig(t, arch, cf.Config, cf.Created.Time)
		meta = Meta{Version: cf.Config.Labels[LabelVersion], Revision: cf.Config.Labels[LabelRevision], Created: cf.Created.Time}
		binaries[arch] = checkFileSystem(t, arch, img, meta, filepath.Join(dir, arch))
	}

	// manifest.json: the amd64 image under the same tag, for what reads docker-save archives only.
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || len(m[0].RepoTags) != 1 || m[0].RepoTags[0] != wantRef {
		t.Errorf("manifest.json: %+v, want one image tagged %s", m, wantRef)
	}
	dimg, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cn, err := dimg.ConfigName(); err != nil || cn != amd64Config {
		t.Errorf("manifest.json's image has config %v (%v), the index's linux/%s %v", cn, err, DockerArch, amd64Config)
	}

	// Reproducible: the same binaries and metadata give the same index digest and the same archive.
	again, err := BuildIndex(binaries, meta)
	if err != nil {
		t.Fatal(err)
	}
	if d2, err := again.Digest(); err != nil || d2 != digest {
		t.Errorf("rebuilt from the same binaries and metadata: digest %s (%v), the archive's is %s", d2, err, digest)
	}
	ref, err := name.NewTag(wantRef)
	if err != nil {
		t.Fatal(err)
	}
	files2, err := Archive(ref, again)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTar(&buf, files2, meta.Created); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(orig) != sha256.Sum256(buf.Bytes()) {
		t.Errorf("rebuilt archive differs from %s (%d vs %d bytes)", path, buf.Len(), len(orig))
	}
	t.Logf("%s@%s (%s), %d bytes", wantRef, digest, strings.Join(archs, ", "), len(orig))
}

// readTar returns the regular files of the archive (path -> content); directories only as parents.
func readTar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			if files[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("%s: unexpected entry %q (type %c)", path, h.Name, h.Typeflag)
		}
	}
}

// checkConfig: the user, entrypoint and labels of one platform's image.
func checkConfig(t *testing.T, arch string, c v1.Config, created time.Time) {
	t.Helper()
	if got := c.Labels[LabelVersion]; got != statefulset.ModuleVersion {
		t.Errorf("linux/%s: label %s = %q, the source's module version is %q (stale image? run `make image`)", arch, LabelVersion, got, statefulset.ModuleVersion)
	}
	uid, gid, ok := strings.Cut(c.User, ":")
	if n, err := strconv.Atoi(uid); !ok || err != nil || n == 0 || uid != strconv.Itoa(UID) || gid != strconv.Itoa(GID) {
		t.Errorf("linux/%s: User %q, want a numeric non-root %d:%d (runAsNonRoot needs a number)", arch, c.User, UID, GID)
	}
	if strings.Join(c.Entrypoint, " ") != BinaryPath || strings.Join(c.Cmd, " ") != "controller" {
		t.Errorf("linux/%s: Entrypoint %q Cmd %q, want [%s] [controller]", arch, c.Entrypoint, c.Cmd, BinaryPath)
	}
	if got := c.Labels[LabelSource]; got != Source {
		t.Errorf("linux/%s: label %s = %q, want %q", arch, LabelSource, got, Source)
	}
	for _, k := range []string{LabelTitle, LabelDescription, LabelCreated} {
		if c.Labels[k] == "" {
			t.Errorf("linux/%s: label %s missing", arch, k)
		}
	}
	if rev, ok := c.Labels[LabelRevision]; ok && !regexp.MustCompile(`^[0-9a-f]{40,64}$`).MatchString(rev) {
		t.Errorf("linux/%s: label %s = %q, want a git commit", arch, LabelRevision, rev)
	}
	if got := c.Labels[LabelCreated]; got != created.UTC().Format(time.RFC3339) {
		t.Errorf("linux/%s: label %s = %q, config created %v", arch, LabelCreated, got, created)
	}
}

// elfMachine is the ELF machine of each GOARCH the image is built for.
var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkFileSystem unpacks the image as a runtime would into dir, checks its files and the binary (ELF
// machine, static, version stamp), runs the binary when it is this machine's, and returns the binary.
func checkFileSystem(t *testing.T, arch string, img v1.Image, meta Meta, dir string) []byte {
	t.Helper()
	headers := extract(t, mutate.Extract(img), dir)
	bin := filepath.Join(dir, BinaryPath)
	if h := headers[strings.TrimPrefix(BinaryPath, "/")]; h == nil || h.Mode&0o111 == 0 {
		t.Fatalf("linux/%s: %s missing or not executable: %+v", arch, BinaryPath, h)
	}
	if h := headers["home/nonroot"]; h == nil || h.Uid != UID || h.Gid != GID {
		t.Errorf("linux/%s: /home/nonroot missing or not owned by %d:%d: %+v", arch, UID, GID, h)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("linux/%s: %s: %v", arch, BinaryPath, err)
	}
	if f.Machine != elfMachine[arch] || f.Class != elf.ELFCLASS64 {
		t.Errorf("linux/%s: %s is an ELF %v %v, want %v", arch, BinaryPath, f.Class, f.Machine, elfMachine[arch])
	}
	f.Close()
	if got, err := StaticArch(bin); err != nil || got != arch {
		t.Errorf("linux/%s: StaticArch = %q, %v", arch, got, err)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	// make image stamps the host version (module version + the commit's 12-digit prefix) with -ldflags -X:
	// the string is in the binary, whichever architecture it runs on.
	stamp := meta.Version + "+"
	if len(meta.Revision) >= 12 {
		stamp += meta.Revision[:12]
	}
	if !bytes.Contains(b, []byte(stamp)) {
		t.Errorf("linux/%s: %s does not contain the version stamp %q (make image: -X ...stampedVersion)", arch, BinaryPath, stamp)
	}
	checkLine(t, filepath.Join(dir, "etc/passwd"), "nonroot:x:65532:65532:")
	checkLine(t, filepath.Join(dir, "etc/group"), "nonroot:x:65532:")
	ca, err := os.ReadFile(filepath.Join(dir, CAPath))
	if err != nil {
		t.Fatal(err)
	}
	checkCABundle(t, ca)

	// The binary runs and reports the version of the label.
	if runtime.GOOS != "linux" || runtime.GOARCH != arch {
		t.Logf("not running the linux/%s binary on %s/%s (its ELF header and stamp are checked)", arch, runtime.GOOS, runtime.GOARCH)
		return b
	}
	cmd := exec.Command(bin, "version", "--cache-dir=")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("linux/%s: %s version: %v\n%s", arch, BinaryPath, err, out)
	}
	if want := "ordinal " + meta.Version + " "; !strings.Contains(string(out), want) {
		t.Errorf("linux/%s: %s version printed\n%s\nwithout %q (the label's version)", arch, BinaryPath, out, want)
	}
	// the host's own version is stamped (module version + commit), not the "devel" of a plain go build
	if want := "host:        ordinal " + stamp; !strings.Contains(string(out), want) {
		t.Errorf("linux/%s: %s version printed\n%s\nwithout %q (make image stamps the host version)", arch, BinaryPath, out, want)
	}
	return b
}

// extract writes the regular files and directories of a flattened image into dir and returns the headers.
func extract(t *testing.T, rc io.ReadCloser, dir string) map[string]*tar.Header {
	t.Helper()
	defer rc.Close()
	headers := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return headers
		}
		if err != nil {
			t.Fatal(err)
		}
		headers[strings.TrimSuffix(h.Name, "/")] = h
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("entry %q outside the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm()|0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("unexpected entry %q (type %c)", h.Name, h.Typeflag)
		}
	}
}

func checkLine(t *testing.T, path, prefix string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), prefix) {
			return
		}
	}
	t.Errorf("%s has no line %q...", path, prefix)
}

// checkCABundle: PEM certificates only, each a CA that parses, a few well-known roots among them.
func checkCABundle(t *testing.T, ca []byte) {
	t.Helper()
	var certs []*x509.Certificate
	for rest := ca; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			if len(bytes.TrimSpace(rest)) != 0 {
				t.Errorf("CA bundle: %d bytes that are not PEM", len(rest))
			}
			break
		}
		if b.Type != "CERTIFICATE" {
			t.Errorf("CA bundle: PEM block %q", b.Type)
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Errorf("CA bundle: %v", err)
			continue
		}
		if !c.IsCA {
			t.Errorf("CA bundle: %s is not a CA", c.Subject)
		}
		certs = append(certs, c)
	}
	if len(certs) < 100 {
		t.Errorf("CA bundle: %d certificates, want the NSS store's 100+", len(certs))
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Error("CA bundle: x509.CertPool.AppendCertsFromPEM took nothing")
	}
	names := map[string]bool{}
	for _, c := range certs {
		names[c.Subject.CommonName] = true
	}
	for _, cn := range []string{"ISRG Root X1", "DigiCert Global Root G2"} {
		if !names[cn] {
			t.Errorf("CA bundle: no %q", cn)
		}
	}
}

// TestCABundle checks the bundle the build embeds, without an image.
func TestCABundle(t *testing.T) {
	ca, err := CABundle()
	if err != nil {
		t.Fatal(err)
	}
	checkCABundle(t, ca)
}

// TestManifestsNameTheStampedVersion: every deploy manifest and kustomization names the image by the tag
// `make image` gives it, so they cannot drift from the build.
func TestManifestsNameTheStampedVersion(t *testing.T) {
	// newName may point at another registry (kustomize edit set image ghcr.io/ordinal-dev/ordinal=REGISTRY/ordinal);
	// the tag is the build's.
	tag := Tag(statefulset.ModuleVersion)
	root := filepath.Join("..", "..", "examples", "deploy")
	for _, dir := range []string{root, filepath.Join(root, "webhook")} {
		var k struct {
			Images []struct {
				Name, NewName, NewTag, Digest string
			}
		}
		readYAML(t, filepath.Join(dir, "kustomization.yaml"), &k)
		if len(k.Images) != 1 || k.Images[0].Name != DefaultRepo || k.Images[0].NewTag != tag || k.Images[0].Digest != "" {
			t.Errorf("%s/kustomization.yaml images: %+v, want [{name: %s, newTag: %s}]", dir, k.Images, DefaultRepo, tag)
		}
		var d struct {
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct{ Name, Image string }
					}
				}
			}
		}
		readYAML(t, filepath.Join(dir, "deployment.yaml"), &d)
		cs := d.Spec.Template.Spec.Containers
		if len(cs) == 0 {
			t.Errorf("%s/deployment.yaml: no containers", dir)
		}
		for _, c := range cs {
			if want := DefaultRepo + ":" + tag; c.Image != want {
				t.Errorf("%s/deployment.yaml container %s: image %q, want %q", dir, c.Name, c.Image, want)
			}
		}
	}
}

// TestDocsNameTheStampedVersion: the READMEs' example commands use the tag the build gives.
func TestDocsNameTheStampedVersion(t *testing.T) {
	tag := Tag(statefulset.ModuleVersion)
	re := regexp.MustCompile(`ordinal:(v[0-9]+\.[0-9]+\.[0-9]+[^ ` + "`" + `@]*)`)
	for _, p := range []string{"README.md", "examples/deploy/README.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			n++
			if m[1] != tag {
				t.Errorf("%s: %q, the build tags the image %s", p, m[0], tag)
			}
		}
		if n == 0 {
			t.Errorf("%s names no ordinal:vX.Y.Z image", p)
		}
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestStaticArchRefusesDynamic: a dynamically linked binary would not start in a scratch image.
func TestStaticArchRefusesDynamic(t *testing.T) {
	for _, p := range []string{"/bin/sh", "/usr/bin/env"} {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		f.Close()
		if _, err := StaticArch(p); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("StaticArch(%s) = %v, want a dynamically linked error", p, err)
		}
		return
	}
	t.Skip("no dynamically linked system binary to try")
}
