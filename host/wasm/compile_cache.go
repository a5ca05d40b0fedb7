package wasm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
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
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), cacheManifest) || filepath.Ext(d.Name()) == ".tmp" {
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

// verifyCache removes dir if it has a manifest its files do not match. A directory without a manifest
// is left alone: another process may be compiling into it (wazero writes each entry atomically, and a
// Load that fails on an entry removes it and compiles again).
func verifyCache(dir string) {
	want, err := os.ReadFile(filepath.Join(dir, cacheManifest))
	if err != nil {
		return
	}
	if got, err := cacheSums(dir); err == nil && bytes.Equal(got, want) {
		return
	}
	discardCache(dir)
}

// discardCache moves dir aside (one atomic step: another process sees it whole or not at all) and
// removes it. Errors are ignored: at worst the module is compiled again.
func discardCache(dir string) {
	aside := fmt.Sprintf("%s.discarded-%d-%d", dir, os.Getpid(), time.Now().UnixNano())
	if os.Rename(dir, aside) == nil {
		_ = os.RemoveAll(aside)
	}
}

// sealCache writes dir's manifest, atomically (a reader sees the old one or the new one) and through a
// file of its own (two processes may seal the same directory at once). A failure leaves the entries
// unsealed, which verifyCache tolerates.
func sealCache(dir string) {
	sums, err := cacheSums(dir)
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, cacheManifest+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(sums)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(dir, cacheManifest)) != nil {
		_ = os.Remove(tmp.Name())
	}
}
