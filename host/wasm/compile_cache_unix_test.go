//go:build unix

package wasm

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ordinal-dev/ordinal/host/embedded"
)

// What a hostile probe put in a module's cache directory: a symlink to /dev/zero in an entry's place was
// hashed for ever, a FIFO blocked the Load on its open until a writer came, and a huge file was hashed whole.
// Each is now refused before a byte of it is read, whether in place of wazero's entry, the prepared entry or
// the manifest, and the directory is discarded as a damaged one is: the Load compiles and writes it again.
// Nothing here waits on a clock: a regression that opens or reads the FIFO or /dev/zero blocks until a
// timeout fails it (the Load's compile timeout when wazero is the one blocked, else go test's -timeout), and
// one that reads the huge file shows in cacheBytesRead.
func TestCacheEntriesThatAreNoRegularFiles(t *testing.T) {
	bin, template := embedded.Module(), t.TempDir()
	loadPreparing(t, bin, Config{CacheDir: template}) // compiled once, copied for each case
	bounds := cacheBoundsFor(len(bin), Config{}.withDefaults().Limits)
	damages := []struct {
		name  string
		apply func(p string, huge int64) error
	}{
		{"a symlink to /dev/zero", func(p string, _ int64) error { return os.Symlink("/dev/zero", p) }},
		{"a FIFO", func(p string, _ int64) error { return syscall.Mkfifo(p, 0o600) }},
		{"a file over the bound", func(p string, huge int64) error { // sparse: no disk, and zeros if read
			f, err := os.Create(p)
			if err == nil {
				err = errors.Join(f.Truncate(huge), f.Close())
			}
			return err
		}},
	}
	targets := []struct {
		name string
		path func(dir string) string // in the module's directory
		huge int64                   // more than a Load reads of it, and than it reads of the others
	}{
		{"wazero's entry", func(dir string) string { return compiledEntry(t, dir) }, bounds.entries + 1},
		{"the prepared entry", func(dir string) string { return filepath.Join(dir, preparedEntry) }, bounds.prepared + 1},
		{"the manifest", func(dir string) string { return filepath.Join(dir, cacheManifest) }, 64 << 20},
	}
	for _, target := range targets {
		for _, damage := range damages {
			for _, sealed := range []bool{true, false} {
				name := target.name + " replaced by " + damage.name
				if !sealed {
					if target.name == "the manifest" {
						continue
					}
					name += ", unsealed"
				}
				t.Run(name, func(t *testing.T) {
					cacheDir := t.TempDir()
					if err := os.CopyFS(cacheDir, os.DirFS(template)); err != nil {
						t.Fatal(err)
					}
					dir := moduleCacheDir(cacheDir, sha256.Sum256(bin))
					p := target.path(dir)
					if !sealed { // another process compiling into it, as far as the Load can tell
						if err := os.Remove(filepath.Join(dir, cacheManifest)); err != nil {
							t.Fatal(err)
						}
					}
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
					if err := damage.apply(p, target.huge); err != nil {
						t.Fatal(err)
					}
					before := cacheBytesRead.Load()
					if _, prepared := loadPreparing(t, bin, Config{CacheDir: cacheDir}); !prepared {
						t.Error("the Load used the damaged directory's prepared module")
					}
					if read := cacheBytesRead.Load() - before; read >= target.huge {
						t.Errorf("the Load read %d bytes of the cache; the damaged file was not refused before reading it", read)
					}
					// written again, as regular files: the next Load finds its module prepared and compiled
					for _, p := range []string{compiledEntry(t, dir), filepath.Join(dir, preparedEntry), filepath.Join(dir, cacheManifest)} {
						if info, err := os.Lstat(p); err != nil || !info.Mode().IsRegular() {
							t.Errorf("%s after the Load: %v %v; want a regular file", p, info, err)
						}
					}
					if _, prepared := loadPreparing(t, bin, Config{CacheDir: cacheDir}); prepared {
						t.Error("the directory written again was not used")
					}
				})
			}
		}
	}
}

// The refusals themselves, where a regression would otherwise hang: the listing refuses a FIFO or a
// symlink before anything opens it, and an entry put in a listed one's place after the listing is refused
// on the open file, without following the link or waiting for a FIFO's writer.
func TestCacheEntryRefusals(t *testing.T) {
	dir := t.TempDir()
	fifo, link, big := filepath.Join(dir, "fifo"), filepath.Join(dir, "link"), filepath.Join(dir, "big")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	before := cacheBytesRead.Load()
	for _, p := range []string{fifo, link} {
		sub := filepath.Join(t.TempDir(), "module")
		if err := os.Mkdir(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p, filepath.Join(sub, "entry")); err != nil {
			t.Fatal(err)
		}
		if _, err := cacheEntries(sub, 1<<30); !errors.Is(err, errDamagedCache) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("listing a directory holding %s: %v; want it refused as no regular file", filepath.Base(p), err)
		}
		if _, err := cacheEntries(filepath.Join(sub, "entry"), 1<<30); !errors.Is(err, errDamagedCache) {
			t.Errorf("listing %s as a module's directory: %v; want it refused", filepath.Base(p), err)
		}
		if _, _, err := entrySum(filepath.Join(sub, "entry"), 1<<30, make([]byte, 512)); err == nil {
			t.Errorf("%s opened as an entry", filepath.Base(p))
		} else if p == fifo && !errors.Is(err, errDamagedCache) {
			t.Errorf("a FIFO opened as an entry: %v; want it refused as no regular file", err)
		} else if p == link && !errors.Is(err, syscall.ELOOP) {
			t.Errorf("a symlink opened as an entry: %v; want the link not followed (ELOOP)", err)
		}
	}
	if _, err := cacheEntries(dir, 99); !errors.Is(err, errDamagedCache) {
		t.Errorf("entries of 100 bytes listed under a bound of 99: %v", err)
	}
	if _, _, err := entrySum(big, 99, make([]byte, 512)); !errors.Is(err, errDamagedCache) {
		t.Errorf("an entry of 100 bytes read under a bound of 99: %v", err)
	}
	if _, err := readEntry(big, 99); !errors.Is(err, errDamagedCache) {
		t.Errorf("a file of 100 bytes read whole under a bound of 99: %v", err)
	}
	if read := cacheBytesRead.Load() - before; read != 0 {
		t.Errorf("%d bytes read of refused files", read)
	}
}
