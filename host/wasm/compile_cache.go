package wasm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The on-disk compilation cache holds native code that wazero loads and runs, and wazero trusts its
// lengths: a damaged entry made it allocate 96 GB and the process die, and a truncated one failed every
// later Load. So each module's entries live in a directory of their own (by module digest) with a
// manifest of their CRC-32C checksums, written after a successful Load. An entry that does not match its
// manifest is removed before wazero reads it, and the module is compiled again. The prepared module
// (prepared.go) is one more entry of the directory, under the same manifest. The manifest guards against
// damage, not against whoever can write the directory (RATIONALE.md), and CRC-32C finds damage as SHA-256
// does at a tenth of its cost (it was 3 of a warm Load's 15 ms); wazero checks its own code by it too.

const cacheManifest = "CRC32C-SUMS"

// cacheLayout names the manifest's format in the directory's name. Earlier builds sealed theirs with SHA-256
// sums under SHA256SUMS and take any other file for one of wazero's entries: sharing a directory with this
// build, each would find the other's manifest a damage and discard the directory, and both would compile
// again at every alternation.
const cacheLayout = "crc32c"

// crc32c is the Castagnoli table: hardware CRC instructions on amd64 and arm64.
var crc32c = crc32.MakeTable(crc32.Castagnoli)

// moduleCacheDir is where one module's compiled code is cached by this build of wazero. Builds that
// report another wazero version (a release binary and a test binary, "dev") keep directories of their
// own: wazero would keep its entries apart anyway, but the manifest of a shared directory covered both,
// and every Load hashed the other build's megabytes too.
func moduleCacheDir(cacheDir string, digest [sha256.Size]byte) string {
	return filepath.Join(cacheDir, hex.EncodeToString(digest[:]), wazeroBuild()+"."+cacheLayout)
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

// What Load reads of a module's directory is bounded whatever the directory holds. An entry in place of
// wazero's that was a symlink to /dev/zero was hashed for ever, and a FIFO blocked the Load until a writer
// came; so entries are listed without following links and must be regular files, opened without following
// one or waiting for a writer (openEntryFlags) and checked again on the open file, and they are read no
// further than bounds derived from the limits. A directory that breaks these holds nothing a Load writes:
// it is damaged, and discarded like one whose sums do not match (the module is compiled again).

// errDamagedCache marks a directory holding what no Load writes.
var errDamagedCache = errors.New("damaged compilation cache")

// maxManifestBytes bounds the manifest: a line of about 150 bytes per entry.
const maxManifestBytes = 1 << 20

// cacheBounds are what a Load reads of a module's directory at most: its entries in all, and the prepared
// entry alone (read whole into memory).
type cacheBounds struct{ entries, prepared int64 }

// cacheBoundsFor bounds the directory of a module of moduleBytes bytes. wazero's code measured up to 70 times
// the bytes it compiles (a chain of call_indirect, 3 bytes each, is 210 bytes of amd64 per call; the shipped
// module's is 5.5 times), and those are the module's bytes with the interrupt checks (a bare loop, 3 bytes,
// takes 14 more); the prepared entry is the checked module, within MaxBytes, after a line of header. An
// entry beyond the bound costs a compile per Load, never a failure.
func cacheBoundsFor(moduleBytes int, l ModuleLimits) cacheBounds {
	prepared := int64(l.MaxBytes) + 64<<10
	return cacheBounds{entries: 256*int64(moduleBytes) + prepared, prepared: prepared}
}

// cacheBytesRead counts the bytes read of cache entries, for the tests of the bounds.
var cacheBytesRead atomic.Int64

// cacheEntry is one of wazero's files under a module's directory, as listed.
type cacheEntry struct {
	name string // relative to the directory, slash-separated
	size int64
}

// cacheEntries lists wazero's entries under dir (every file but this package's bookkeeping), sorted by name.
// It refuses (errDamagedCache), before any is opened, an entry that is not a regular file and entries of
// more than bound bytes in all.
func cacheEntries(dir string, bound int64) ([]cacheEntry, error) {
	var entries []cacheEntry
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || isCacheBookkeeping(d.Name()) {
			return err
		}
		if !d.Type().IsRegular() { // the directory itself, too, when it is a link
			return fmt.Errorf("%w: %s is not a regular file (%s)", errDamagedCache, p, d.Type())
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > bound {
			return fmt.Errorf("%w: entries of more than %d bytes in all", errDamagedCache, bound)
		}
		rel, _ := filepath.Rel(dir, p)
		entries = append(entries, cacheEntry{filepath.ToSlash(rel), info.Size()})
		return nil
	})
	return entries, err
}

// isCacheBookkeeping reports whether a file under a module's cache directory is this package's (the
// manifest, its temporary files), not one of wazero's entries.
func isCacheBookkeeping(name string) bool {
	return strings.HasPrefix(name, cacheManifest) || filepath.Ext(name) == ".tmp"
}

// openEntry opens the file at p if it is a regular file of at most max bytes, and returns its size. The
// checks are made on the open file: the listing saw a path, which may have changed since.
func openEntry(p string, max int64) (*os.File, int64, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|openEntryFlags, 0)
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	switch {
	case err != nil:
	case !info.Mode().IsRegular():
		err = fmt.Errorf("%w: %s is not a regular file (%s)", errDamagedCache, p, info.Mode().Type())
	case info.Size() > max:
		err = fmt.Errorf("%w: %s has %d bytes, more than the %d left to read", errDamagedCache, p, info.Size(), max)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}

// readEntry reads the file at p whole, if openEntry admits it under max.
func readEntry(p string, max int64) ([]byte, error) {
	f, size, err := openEntry(p, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	n, err := io.ReadFull(f, b)
	cacheBytesRead.Add(int64(n))
	return b, err
}

// cacheSums returns "<sum>  <path>" lines for entries (of dir, as cacheEntries listed them), sorted, and
// the contents of the entry named keep (at dir's top), if any. Each other entry is hashed as it is read,
// through one small buffer: wazero's entry is megabytes of native code, and reading it whole into memory of
// its own cost a short-lived CLI more than the hash (fresh pages to fault in). keep is read whole and hashed
// in memory, so the bytes the caller uses are the bytes hashed, and hashed once. Together they are read no
// further than b.
func cacheSums(dir string, entries []cacheEntry, keep string, b cacheBounds) (sums, kept []byte, err error) {
	left := b.entries
	var lines []string
	buf := make([]byte, 64<<10)
	for _, e := range entries {
		p := filepath.Join(dir, filepath.FromSlash(e.name))
		var sum uint32
		var n int64
		if e.name == keep {
			if kept, err = readEntry(p, min(b.prepared, left)); err == nil {
				sum, n = crc32.Checksum(kept, crc32c), int64(len(kept))
			}
		} else {
			sum, n, err = entrySum(p, left, buf)
		}
		if err != nil {
			return nil, nil, err
		}
		left -= n
		lines = append(lines, fmt.Sprintf("%08x  %s\n", sum, e.name))
	}
	sort.Strings(lines)
	var out bytes.Buffer
	for _, l := range lines {
		out.WriteString(l)
	}
	return out.Bytes(), kept, nil
}

// entrySum is the CRC-32C of the file at p, if openEntry admits it under max, read through buf, and its size.
func entrySum(p string, max int64, buf []byte) (uint32, int64, error) {
	f, size, err := openEntry(p, max)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	h := crc32.New(crc32c)
	n, err := io.CopyBuffer(h, io.LimitReader(f, size), buf)
	cacheBytesRead.Add(n)
	if err == nil && n != size {
		err = fmt.Errorf("%s: %d bytes read of %d", p, n, size)
	}
	return h.Sum32(), n, err
}

// verifyCache removes dir if it has a manifest its files do not match, and returns the manifest when they
// do (nil otherwise), with the prepared entry's contents as hashed (nil if there is none). A directory
// without a manifest is left alone: another process may be compiling into it (wazero writes each entry
// atomically, and a Load that fails on an entry removes it and compiles again). One that holds what no Load
// writes (cacheEntries) is removed with or without a manifest: wazero would open its entries too.
func verifyCache(dir string, b cacheBounds) (sealed, prepared []byte) {
	entries, err := cacheEntries(dir, b.entries)
	if errors.Is(err, errDamagedCache) {
		discardCache(dir)
		return nil, nil
	}
	want, merr := readEntry(filepath.Join(dir, cacheManifest), maxManifestBytes)
	if errors.Is(merr, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil && merr == nil {
		if got, prepared, err := cacheSums(dir, entries, preparedEntry, b); err == nil && bytes.Equal(got, want) {
			return want, prepared
		}
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
func sealCache(dir string, sealed []byte, b cacheBounds) {
	entries, err := cacheEntries(dir, b.entries)
	if err != nil {
		if errors.Is(err, errDamagedCache) {
			discardCache(dir)
		}
		return
	}
	if sealed != nil && sameEntries(entries, sealed) {
		if now, err := readEntry(filepath.Join(dir, cacheManifest), maxManifestBytes); err == nil && bytes.Equal(now, sealed) {
			return
		}
	}
	sums, _, err := cacheSums(dir, entries, "", b)
	if errors.Is(err, errDamagedCache) {
		discardCache(dir)
	}
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

// sameEntries reports whether entries are the files manifest lists, by name: wazero writes an entry only for
// a module it did not find (a new file, written whole and renamed into place), and never rewrites one it read.
func sameEntries(entries []cacheEntry, manifest []byte) bool {
	listed := strings.Split(strings.TrimSuffix(string(manifest), "\n"), "\n")
	if len(listed) != len(entries) {
		return false
	}
	for _, line := range listed {
		_, name, ok := strings.Cut(line, "  ")
		if !ok || !slices.ContainsFunc(entries, func(e cacheEntry) bool { return e.name == name }) {
			return false
		}
	}
	return true
}
