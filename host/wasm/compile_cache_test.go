package wasm

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordinal-dev/ordinal/host/embedded"
)

// The manifest finds one byte changed anywhere in an entry whose size is kept: in wazero's header (the
// function count it allocates by, trusted), in its code, at its end, and in the prepared entry. The
// directory is discarded before wazero reads a byte of it, and the next Load compiles again.
func TestManifestFindsAChangedByte(t *testing.T) {
	bin, cacheDir := embedded.Module(), t.TempDir()
	bounds := cacheBoundsFor(len(bin), Config{}.withDefaults().Limits)
	dir := moduleCacheDir(cacheDir, sha256.Sum256(bin))
	entries := map[string]func() string{
		"wazero's entry":     func() string { return compiledEntry(t, dir) },
		"the prepared entry": func() string { return filepath.Join(dir, preparedEntry) },
	}
	for name, path := range entries {
		for _, at := range []func(b []byte) int{
			// wazero's: the function count, after its magic (6 bytes) and its version (a length byte, then
			// the version); in the prepared entry, a byte of its header line
			func(b []byte) int { return 7 + int(b[6]) },
			func(b []byte) int { return len(b) / 2 },
			func(b []byte) int { return len(b) - 1 },
		} {
			loadPreparing(t, bin, Config{CacheDir: cacheDir}) // compiles (or finds) and seals
			if sealed, _ := verifyCache(dir, bounds); sealed == nil {
				t.Fatalf("%s: a directory a Load sealed does not verify", name)
			}
			p := path()
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			i := at(b)
			b[i] ^= 0x10
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if sealed, prepared := verifyCache(dir, bounds); sealed != nil || prepared != nil {
				t.Fatalf("%s, byte %d of %d changed: verified", name, i, len(b))
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("%s, byte %d of %d changed: the directory is still there (%v)", name, i, len(b), err)
			}
		}
	}
}

// compiledEntry is the path of wazero's only entry in the module directory dir.
func compiledEntry(t *testing.T, dir string) string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Dir(p) != dir {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("compiled entries %v; want one", found)
	}
	return found[0]
}
