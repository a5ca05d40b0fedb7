package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/x509"
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
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
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

// TestImage unpacks the image `make image` wrote, checks its config, labels, user and CA bundle, runs the
// binary's `version`, and rebuilds the image from the unpacked binary to check the build is reproducible.
func TestImage(t *testing.T) {
	path := imageTarball(t)
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config

	// The version: the module version of the source, in the label, the tag and the binary's own report.
	version := c.Labels[LabelVersion]
	if version != statefulset.ModuleVersion {
		t.Errorf("label %s = %q, the source's module version is %q (stale image? run `make image`)", LabelVersion, version, statefulset.ModuleVersion)
	}
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	wantRef := DefaultRepo + ":" + Tag(version)
	if len(m) != 1 || len(m[0].RepoTags) != 1 || m[0].RepoTags[0] != wantRef {
		t.Errorf("tarball tags: %+v, want one image tagged %s", m, wantRef)
	}

	// Config.
	if cf.OS != "linux" || (cf.Architecture != "amd64" && cf.Architecture != "arm64") {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	uid, gid, ok := strings.Cut(c.User, ":")
	if n, err := strconv.Atoi(uid); !ok || err != nil || n == 0 || uid != strconv.Itoa(UID) || gid != strconv.Itoa(GID) {
		t.Errorf("User %q, want a numeric non-root %d:%d (runAsNonRoot needs a number)", c.User, UID, GID)
	}
	if strings.Join(c.Entrypoint, " ") != BinaryPath || strings.Join(c.Cmd, " ") != "controller" {
		t.Errorf("Entrypoint %q Cmd %q, want [%s] [controller]", c.Entrypoint, c.Cmd, BinaryPath)
	}
	if got := c.Labels[LabelSource]; got != Source {
		t.Errorf("label %s = %q, want %q", LabelSource, got, Source)
	}
	for _, k := range []string{LabelTitle, LabelDescription, LabelCreated} {
		if c.Labels[k] == "" {
			t.Errorf("label %s missing", k)
		}
	}
	if rev, ok := c.Labels[LabelRevision]; ok && !regexp.MustCompile(`^[0-9a-f]{40,64}$`).MatchString(rev) {
		t.Errorf("label %s = %q, want a git commit", LabelRevision, rev)
	}
	if got := c.Labels[LabelCreated]; got != cf.Created.UTC().Format(time.RFC3339) {
		t.Errorf("label %s = %q, config created %v", LabelCreated, got, cf.Created)
	}

	// The file system, flattened as a runtime would unpack it.
	dir := t.TempDir()
	headers := extract(t, mutate.Extract(img), dir)
	bin := filepath.Join(dir, BinaryPath)
	if h := headers[strings.TrimPrefix(BinaryPath, "/")]; h == nil || h.Mode&0o111 == 0 {
		t.Fatalf("%s missing or not executable: %+v", BinaryPath, h)
	}
	if h := headers["home/nonroot"]; h == nil || h.Uid != UID || h.Gid != GID {
		t.Errorf("/home/nonroot missing or not owned by %d:%d: %+v", UID, GID, h)
	}
	if _, err := StaticArch(bin); err != nil {
		t.Error(err)
	}
	checkLine(t, filepath.Join(dir, "etc/passwd"), "nonroot:x:65532:65532:")
	checkLine(t, filepath.Join(dir, "etc/group"), "nonroot:x:65532:")
	ca, err := os.ReadFile(filepath.Join(dir, CAPath))
	if err != nil {
		t.Fatal(err)
	}
	checkCABundle(t, ca)

	// The binary runs and reports the version of the label.
	if runtime.GOOS == "linux" && runtime.GOARCH == cf.Architecture {
		cmd := exec.Command(bin, "version", "--cache-dir=")
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s version: %v\n%s", BinaryPath, err, out)
		}
		if want := "ordinal " + version + " "; !strings.Contains(string(out), want) {
			t.Errorf("%s version printed\n%s\nwithout %q (the label's version)", BinaryPath, out, want)
		}
		// the host's own version is stamped (module version + commit), not the "devel" of a plain go build
		if want := "host:        ordinal " + version + "+"; !strings.Contains(string(out), want) {
			t.Errorf("%s version printed\n%s\nwithout %q (make image stamps the host version)", BinaryPath, out, want)
		}
	} else {
		t.Logf("not running the %s binary on %s/%s", cf.Architecture, runtime.GOOS, runtime.GOARCH)
	}

	// Reproducible: the same binary and metadata give the same digest and the same tarball, byte for byte.
	binBytes, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Build(binBytes, cf.Architecture, Meta{Version: version, Revision: c.Labels[LabelRevision], Created: cf.Created.Time})
	if err != nil {
		t.Fatal(err)
	}
	d1, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	d2, err := again.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 {
		t.Errorf("rebuilt from the same binary and metadata: digest %s, the tarball's is %s", d2, d1)
	}
	ref, err := name.NewTag(wantRef)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tarball.Write(ref, again, &buf); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(orig) != sha256.Sum256(buf.Bytes()) {
		t.Errorf("rebuilt tarball differs from %s (%d vs %d bytes)", path, buf.Len(), len(orig))
	}
	t.Logf("%s@%s, %d bytes", wantRef, d1, len(orig))
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
