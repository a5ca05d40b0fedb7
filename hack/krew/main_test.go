package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// The manifest is a krew v1alpha2 Plugin whose every platform names an archive that holds the binary
// as kubectl-ordinal, with that archive's sha256.
func TestManifestNamesArchivesByDigest(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.WriteFile(bin, []byte("#!/bin/sh\necho ordinal\n"), 0o755)
	var archives []archive
	for _, p := range platforms {
		a, err := pack(bin, dir, p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, a)
	}
	b, err := manifest("v0.1.0", "https://example.com/releases/", archives)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		APIVersion, Kind string
		Metadata         struct{ Name string }
		Spec             struct {
			Version, ShortDescription, Description, Homepage string
			Platforms                                        []struct {
				Selector         struct{ MatchLabels map[string]string } `json:"selector"`
				URI, SHA256, Bin string
				Files            []struct{ From, To string }
			}
		}
	}
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "ordinal" ||
		m.Spec.Version != "v0.1.0" || m.Spec.ShortDescription == "" || len(m.Spec.Platforms) != len(platforms) {
		t.Fatalf("manifest:\n%s", b)
	}
	for i, p := range m.Spec.Platforms {
		a := archives[i]
		if p.Selector.MatchLabels["os"] != a.OS || p.Selector.MatchLabels["arch"] != a.Arch || p.Bin != "kubectl-ordinal" ||
			p.URI != "https://example.com/releases/v0.1.0/"+a.File {
			t.Errorf("platform %d: %+v", i, p)
		}
		raw, err := os.ReadFile(filepath.Join(dir, a.File))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != p.SHA256 {
			t.Errorf("%s: sha256 in the manifest is not the archive's", a.File)
		}
		zr, err := gzip.NewReader(bytesReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		h, err := tr.Next()
		if err != nil || h.Name != "kubectl-ordinal" || h.Mode&0o111 == 0 {
			t.Fatalf("%s: first entry %+v %v", a.File, h, err)
		}
		if got, _ := io.ReadAll(tr); string(got) != "#!/bin/sh\necho ordinal\n" {
			t.Errorf("%s: the binary in the archive differs", a.File)
		}
	}
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
