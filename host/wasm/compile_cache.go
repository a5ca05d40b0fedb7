package wasm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// The on-disk compilation cache holds native code that wazero loads and runs, and wazero trusts its
// lengths: a damaged entry made it allocate 96 GB and the process die, and a truncated one failed every
// later Load. So each module's entries live in a directory of their own (by module digest) with a
// manifest of their SHA-256 sums, written after a successful Load. An entry that does not match its
// manifest is removed before wazero reads it, and the module is compiled again. The prepared module
// (prepared.go) is one more entry of the directory, under the same manifest.

const cacheManifest = "SHA256SUMS"

// moduleCacheDir is where one module's compiled code is cached by this build of wazero. Builds that
// report another wazero version (a release binary and a test binary, "dev") keep directories of their
// own: wazero would keep its entries apart anyway, but the manifest of a shared directory covered both,
// and every Load hashed the other build's megabytes too.
func moduleCacheDir(cacheDir string, digest [sha256.Size]byte) string {
	return filepath.Join(cacheDir, hex.EncodeToString(digest[:]), wazeroBuild())
}

// wazeroBuild names the wazero this binary links: its module version from the build information, or
// "dev" where there is none (as wazero names its own cache entries).
var wazeroBuild = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/tetratelabs/wazero" && dep.Version != "" && dep.Version != "(devel)" {
				return "wazero-" + dep.Version
			}
		}
	}
	return "wazero-dev"
})

// cacheSums returns "<sum>  <path>" lines for every file under dir but the manifest, sorted, and the
// contents of the file named keep (at dir's top), if any. Each other file is hashed as it is read, through one
// small buffer: wazero's entry is megabytes of native code, and reading it whole into memory of its own cost
// a short-lived CLI more than the hash (fresh pages to fault in). keep is read whole and hashed in memory, so
// the bytes the caller uses are the bytes hashed, and hashed once.
func cacheSums(dir, keep string) (sums, kept []byte, err error) {
	names, err := cacheEntries(dir)
	if err != nil {
		return nil, nil, err
	}
	var lines []string
	buf := make([]byte, 64<<10)
	for _, name := range names {
		var sum []byte
		if name == keep {
			if kept, err = os.ReadFile(filepath.Join(dir, name)); err == nil {
				s := sha256.Sum256(kept)
				sum = s[:]
			}
		} else {
			sum, err = fileSum(filepath.Join(dir, filepath.FromSlash(name)), buf)
		}
		if err != nil {
			return nil, nil, err
		}
		lines = append(lines, hex.EncodeToString(sum)+"  "+name+"\n")
	}
	sort.Strings(lines)
	var out bytes.Buffer
	for _, l := range lines {
		out.WriteString(l)
	}
	return out.Bytes(), kept, nil
}

// cacheEntries are the paths, relative to dir and slash-separated, of wazero's entries under dir (every
// file but this package's bookkeeping).
func cacheEntries(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || isCacheBookkeeping(d.Name()) {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	return names, err
}

// isCacheBookkeeping reports whether a file under a module's cache directory is this package's (the
// manifest, its temporary files), not one of wazero's entries.
func isCacheBookkeeping(name string) bool {
	return strings.HasPrefix(name, cacheManifest) || filepath.Ext(name) == ".tmp"
}

// fileSum is the SHA-256 of the file at p, read through buf.
func fileSum(p string, buf []byte) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, buf); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// verifyCache removes dir if it has a manifest its files do not match, and returns the manifest when they
// do (nil otherwise), with the prepared entry's contents as hashed (nil if there is none). A directory
// without a manifest is left alone: another process may be compiling into it (wazero writes each entry
// atomically, and a Load that fails on an entry removes it and compiles again).
func verifyCache(dir string) (sealed, prepared []byte) {
	want, err := os.ReadFile(filepath.Join(dir, cacheManifest))
	if err != nil {
		return nil, nil
	}
	if got, prepared, err := cacheSums(dir, preparedEntry); err == nil && bytes.Equal(got, want) {
		return want, prepared
	}
	discardCache(dir)
	return nil, nil
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
// unsealed, which verifyCache tolerates. sealed is the manifest verifyCache found the entries matching
// before the Load: when it is still there and the Load added no entry (wazero found the module in the
// cache, the usual case), it still holds and nothing is read again.
func sealCache(dir string, sealed []byte) {
	if sealed != nil && sameEntries(dir, sealed) {
		if now, err := os.ReadFile(filepath.Join(dir, cacheManifest)); err == nil && bytes.Equal(now, sealed) {
			return
		}
	}
	sums, _, err := cacheSums(dir, "")
	if err != nil {
		return
	}
	writeAtomically(dir, cacheManifest, sums)
}

// writeAtomically writes a file of dir: a reader sees the old contents or the new, never a part, and two
// processes writing it at once each write a temporary file of their own. A failure leaves the old file.
func writeAtomically(dir, name string, b []byte) {
	tmp, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(dir, name)) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// sameEntries reports whether the entries under dir are the files manifest lists, by name: wazero writes an
// entry only for a module it did not find (a new file, written whole and renamed into place), and never
// rewrites one it read.
func sameEntries(dir string, manifest []byte) bool {
	names, err := cacheEntries(dir)
	if err != nil {
		return false
	}
	listed := strings.Split(strings.TrimSuffix(string(manifest), "\n"), "\n")
	if len(listed) != len(names) {
		return false
	}
	for _, line := range listed {
		_, name, ok := strings.Cut(line, "  ")
		if !ok || !slices.Contains(names, name) {
			return false
		}
	}
	return true
}
