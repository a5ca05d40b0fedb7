package wasm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// The on-disk compilation cache holds native code that wazero loads and runs, and wazero trusts its
// lengths: a damaged entry made it allocate 96 GB and the process die, and a truncated one failed every
// later Load. So each module's entries live in a directory of their own (by module digest) with a
// manifest of their SHA-256 sums, written after a successful Load. An entry that does not match its
// manifest is removed before wazero reads it, and the module is compiled again.

const cacheManifest = "SHA256SUMS"

// moduleCacheDir is where one module's compiled code is cached.
func moduleCacheDir(cacheDir string, digest [sha256.Size]byte) string {
	return filepath.Join(cacheDir, hex.EncodeToString(digest[:]))
}

// cacheSums returns "<sum>  <path>" lines for every file under dir but the manifest, sorted.
func cacheSums(dir string) ([]byte, error) {
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == cacheManifest || filepath.Ext(d.Name()) == ".tmp" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(b)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+filepath.ToSlash(rel)+"\n")
		return nil
	})
	sort.Strings(lines)
	var out bytes.Buffer
	for _, l := range lines {
		out.WriteString(l)
	}
	return out.Bytes(), err
}

// verifyCache removes dir unless its files are exactly those its manifest lists, with the same sums.
func verifyCache(dir string) error {
	want, err := os.ReadFile(filepath.Join(dir, cacheManifest))
	if errors.Is(err, fs.ErrNotExist) {
		if _, statErr := os.Stat(dir); errors.Is(statErr, fs.ErrNotExist) {
			return nil // nothing cached yet
		}
	}
	if err == nil {
		got, sumErr := cacheSums(dir)
		if sumErr == nil && bytes.Equal(got, want) {
			return nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("ordinal module: removing unverifiable compilation cache %s: %w", dir, err)
	}
	return nil
}

// sealCache writes dir's manifest (atomically: a reader sees the old one or the new one).
func sealCache(dir string) error {
	sums, err := cacheSums(dir)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, cacheManifest+".tmp")
	if err := os.WriteFile(tmp, sums, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, cacheManifest))
}
