package wasm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/embedded"
)

// loadPreparing loads bin from cacheDir and reports whether the Load prepared it (checked its limits and
// instrumented it) rather than take the prepared module from the cache.
func loadPreparing(t *testing.T, bin []byte, cfg Config) (ModuleShape, bool) {
	t.Helper()
	before := preparations.Load()
	m, err := Load(context.Background(), bin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	if m.Describe().ABI != 1 {
		t.Fatalf("describe %+v", m.Describe())
	}
	return m.Shape(), preparations.Load() != before
}

// preparedPath is the prepared entry's path in the only module directory under cacheDir.
func preparedPath(t *testing.T, cacheDir string) string {
	t.Helper()
	p, err := filepath.Glob(filepath.Join(cacheDir, "*", "*", preparedEntry))
	if err != nil || len(p) != 1 {
		t.Fatalf("prepared entries %v (%v), want one", p, err)
	}
	return p[0]
}

// A Load that finds its module prepared in a sealed cache directory neither scans nor instruments it: those
// were a third of a warm Load. What it finds is what the first Load computed.
func TestCacheHitSkipsPreparation(t *testing.T) {
	bin, dir := embedded.Module(), t.TempDir()
	first, prepared := loadPreparing(t, bin, Config{CacheDir: dir})
	if !prepared {
		t.Fatal("a Load into an empty cache did not prepare the module")
	}
	want, err := os.ReadFile(preparedPath(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	shape, checked, ok := decodePrepared(want, sha256.Sum256(bin), Config{}.withDefaults().Limits)
	if _, wantChecked, _ := prepare(bin, Config{}.withDefaults().Limits); !ok || shape != first || !bytes.Equal(checked, wantChecked) {
		t.Fatalf("the prepared entry holds shape %+v and %d bytes; want %+v and the %d instrumented bytes", shape, len(checked), first, len(wantChecked))
	}
	second, prepared := loadPreparing(t, bin, Config{CacheDir: dir})
	if prepared {
		t.Error("a Load from a sealed cache prepared the module again")
	}
	if second != first {
		t.Errorf("shape from the cache %+v, want %+v", second, first)
	}
}

// A prepared entry that does not match the manifest is not used: like a damaged compiled entry, it takes the
// module's directory with it, and the Load prepares and compiles again and writes it back.
func TestDamagedPreparedEntryIsNotUsed(t *testing.T) {
	bin, dir := embedded.Module(), t.TempDir()
	loadPreparing(t, bin, Config{CacheDir: dir})
	p := preparedPath(t, dir)
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for name, damage := range map[string]func([]byte) []byte{
		"truncated":      func(b []byte) []byte { return b[:len(b)/2] },
		"a byte flipped": func(b []byte) []byte { b[len(b)*3/4] ^= 0x01; return b },
		"shape changed": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"Functions":`), []byte(`"Functions":1`), 1)
		},
	} {
		if err := os.WriteFile(p, damage(bytes.Clone(good)), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, prepared := loadPreparing(t, bin, Config{CacheDir: dir}); !prepared {
			t.Errorf("%s: a damaged prepared entry was used", name)
		}
		if now, err := os.ReadFile(preparedPath(t, dir)); err != nil || !bytes.Equal(now, good) {
			t.Errorf("%s: the prepared entry was not written back (%v)", name, err)
		}
		if _, prepared := loadPreparing(t, bin, Config{CacheDir: dir}); prepared {
			t.Errorf("%s: the entry written back was not used", name)
		}
	}
}

// An entry another build wrote (other checks or another instrumenter), or that was judged by other limits,
// is not used, even sealed: the module is prepared again, and refused when the limits now refuse it.
func TestPreparedEntryOfAnotherVersionOrLimits(t *testing.T) {
	bin, dir := embedded.Module(), t.TempDir()
	loadPreparing(t, bin, Config{CacheDir: dir})
	p := preparedPath(t, dir)
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.Replace(good, []byte(preparerVersion()), []byte(strings.Repeat("0", len(preparerVersion()))), 1)
	if bytes.Equal(other, good) {
		t.Fatal("the entry does not name its version")
	}
	if err := os.WriteFile(p, other, 0o600); err != nil {
		t.Fatal(err)
	}
	sealCache(filepath.Dir(p), nil, cacheBoundsFor(len(bin), Config{}.withDefaults().Limits)) // as the other build would have
	if _, prepared := loadPreparing(t, bin, Config{CacheDir: dir}); !prepared {
		t.Error("an entry of another version was used")
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(now, good) {
		t.Error("the entry of another version was not replaced")
	}

	// other limits that still admit the module: prepared again (and the entry judged by them kept)
	roomy := Config{CacheDir: dir, Limits: ModuleLimits{MaxFunctionBlocks: DefaultMaxFunctionBlocks - 1}}
	if _, prepared := loadPreparing(t, bin, roomy); !prepared {
		t.Error("an entry judged by other limits was used")
	}
	// limits the module exceeds: refused, though a sealed entry says it passed looser ones
	tight := Config{CacheDir: dir, Limits: ModuleLimits{MaxFunctionBlocks: 10}}
	if m, err := Load(context.Background(), bin, tight); err == nil || !strings.Contains(err.Error(), "MaxFunctionBlocks") {
		if m != nil {
			m.Close(context.Background())
		}
		t.Errorf("Load under limits the module exceeds: %v; want it refused", err)
	}
}

// preparerVersion covers the code a prepared entry holds the output of: every function prepare calls in this
// package, directly or not, is declared in a file of preparerSource (a helper moved to another file would otherwise let
// a build that changed it use an older build's entries).
func TestPreparerVersionCoversThePreparer(t *testing.T) {
	fset := token.NewFileSet()
	decls := map[string][]*ast.FuncDecl{} // by name; methods too: the walk over-approximates
	files := map[*ast.FuncDecl]string{}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				decls[fd.Name.Name] = append(decls[fd.Name.Name], fd)
				files[fd] = name
			}
		}
	}
	seen := map[*ast.FuncDecl]bool{}
	var walk func(fd *ast.FuncDecl)
	walk = func(fd *ast.FuncDecl) {
		if seen[fd] {
			return
		}
		seen[fd] = true
		if _, err := preparerSource.Open(files[fd]); err != nil {
			t.Errorf("prepare reaches %s, declared in %s, which preparerSource does not embed", fd.Name.Name, files[fd])
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			switch f := call.Fun.(type) {
			case *ast.Ident:
				name = f.Name
			case *ast.SelectorExpr:
				name = f.Sel.Name
			}
			if name == "Error" { // an error's message: it words a refusal, it prepares nothing
				return true
			}
			for _, d := range decls[name] {
				walk(d)
			}
			return true
		})
	}
	for _, fd := range decls["prepare"] {
		walk(fd)
	}
	if len(seen) < 10 {
		t.Fatalf("the walk from prepare found %d functions; it lost its way", len(seen))
	}
}

// A module's directory holds another module's entries (copied or restored to the wrong name: its manifest
// lists names relative to the directory, so they verify): the prepared entry is not that module's, and the
// Load prepares and runs its own module, as it did before the directory kept the prepared module (wazero
// keys its compiled entries by the bytes it compiles).
func TestPreparedEntryOfAnotherModule(t *testing.T) {
	a, b := embedded.Module(), embedded.ExtendedModule()
	dir := t.TempDir()
	loadPreparing(t, a, Config{CacheDir: dir})
	from, to := moduleCacheDir(dir, sha256.Sum256(a)), moduleCacheDir(dir, sha256.Sum256(b))
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	fresh, err := Load(context.Background(), b, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close(context.Background())
	m, err := Load(context.Background(), b, Config{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	if !bytes.Equal(m.DescribeJSON(), fresh.DescribeJSON()) {
		t.Errorf("the module loaded from a directory holding another module's entries describes itself as\n%s\nnot\n%s", m.DescribeJSON(), fresh.DescribeJSON())
	}
}

// Loads under different limits at once, into one directory (controller replicas of two configurations): each
// writes the entry of its own limits over the other's, and none fails, none under limits the module exceeds
// is admitted, and each takes only an entry of its own limits (the shape of its limits' scan).
func TestConcurrentLoadsUnderOtherLimits(t *testing.T) {
	bin, dir := embedded.Module(), t.TempDir()
	roomy := ModuleLimits{MaxFunctionBlocks: DefaultMaxFunctionBlocks - 1}
	tight := ModuleLimits{MaxFunctionBlocks: 10}
	want, _, err := prepare(bin, Config{}.withDefaults().Limits)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 9)
	for i := range cap(errs) {
		go func() {
			l := []ModuleLimits{{}, roomy, tight}[i%3]
			for range 3 {
				m, err := Load(context.Background(), bin, Config{CacheDir: dir, Limits: l, Timeout: time.Hour})
				switch {
				case l == tight && err == nil:
					m.Close(context.Background())
					err = fmt.Errorf("admitted under limits it exceeds")
				case l == tight && strings.Contains(err.Error(), "MaxFunctionBlocks"):
					err = nil
				case err == nil:
					if m.Shape() != want {
						err = fmt.Errorf("shape %+v, want %+v", m.Shape(), want)
					}
					m.Close(context.Background())
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
