package wasm_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/wasm"
	wb "github.com/ordinal-dev/ordinal/internal/wasmbuild"
)

// Regression tests for the containment holes of issue 11. Modules are assembled by hand
// (internal/wasmbuild): no toolchain emits these shapes. Nothing here asserts on time; a hole that
// reopens makes these tests slow or their memory assertions fail.

const emptyPlan = `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[]}`

// withCode returns an ABI module whose describe and reconcile return valid outputs after running body
// (reconcile's own code, prepended).
func withCode(body []byte) *wb.Module {
	dlen, plen := int64(len(wb.Describe)), int64(len(emptyPlan))
	m := wb.ABI(1, wb.I64Const(dlen), wb.Cat(body, wb.I64Const(dlen<<32|plen)))
	m.Data = []wb.Data{{Offset: 0, Bytes: []byte(wb.Describe + emptyPlan)}}
	return m
}

func blocks(depth, repeat int) []byte {
	var b []byte
	for range repeat {
		for range depth {
			b = append(b, 0x02, 0x40)
		}
		for range depth {
			b = append(b, 0x0b)
		}
	}
	return b
}

func wantBadModule(t *testing.T, bin []byte, cfg wasm.Config, mention string) {
	t.Helper()
	m, err := wasm.Load(context.Background(), bin, cfg)
	if err == nil {
		m.Close(context.Background())
		t.Fatalf("module loaded; want it refused (%s)", mention)
	}
	if !errors.Is(err, wasm.ErrBadModule) || !strings.Contains(err.Error(), mention) {
		t.Fatalf("got %v; want a bad-module error mentioning %q", err, mention)
	}
}

// Hole 3: a 300 KB module of 100,000 nested blocks compiled for minutes whatever --timeout said, and so
// did 80,000 blocks at any depth (the compiler is quadratic in one function's blocks). They are refused
// before compiling, as is a module of many functions each under the per-function limit whose sum is
// too costly, and one larger than the size limit.
func TestCompileIsBounded(t *testing.T) {
	wantBadModule(t, withCode(blocks(100_000, 1)).Encode(), wasm.Config{}, "MaxFunctionBlocks")
	wantBadModule(t, withCode(blocks(100, 800)).Encode(), wasm.Config{}, "MaxFunctionBlocks")

	many := withCode(nil)
	for range 40 {
		many.Funcs = append(many.Funcs, wb.Func{Type: 2, Body: wb.Cat(blocks(1, 19_000), wb.I64Const(0))})
	}
	wantBadModule(t, many.Encode(), wasm.Config{}, "MaxCompileCost")

	big := withCode(nil)
	big.Data = append(big.Data, wb.Data{Offset: 4096, Bytes: make([]byte, 2<<20)})
	wantBadModule(t, big.Encode(), wasm.Config{Limits: wasm.ModuleLimits{MaxBytes: 1 << 20}}, "MaxBytes")

	// Under the limits, the same shapes load: the limits are about cost, not about blocks.
	m, err := wasm.Load(context.Background(), withCode(blocks(50, 100)).Encode(), wasm.Config{})
	if err != nil {
		t.Fatalf("a module of 5,000 blocks is refused: %v", err)
	}
	if s := m.Shape(); s.MaxFunctionBlocks != 5000 {
		t.Errorf("shape %+v: want 5000 blocks in the largest function", s)
	}
	m.Close(context.Background())
}

// The modules the project ships and tests with are far inside the default limits.
func TestShippedModulesWithinLimits(t *testing.T) {
	m := loadGuest(t, wasm.Config{})
	s, l := m.Shape(), m.Config().Limits
	if s.CompileCost*5 > l.MaxCompileCost || s.MaxFunctionBlocks*5 > l.MaxFunctionBlocks || s.Bytes*20 > l.MaxBytes ||
		s.ElementItems*20 > l.MaxElementItems {
		t.Errorf("the shipped module is within 5x of a limit: shape %+v, limits %+v", s, l)
	}
}

// Hole 4: a 522-byte module with a 100M-entry table cost 825 MB of host memory, outside the memory cap;
// many of them crashed the host with a Go out-of-memory fatal error. Tables now count: their declared
// size, and their maximum when the code can grow them.
func TestTablesAreBounded(t *testing.T) {
	table := func(min, max int64, grow bool) []byte {
		var body []byte
		if grow { // table.grow 0 (ref.null func, 1): the module can grow its table
			body = wb.Cat([]byte{0xd0, 0x70}, wb.I32Const(1), []byte{0xfc, 15, 0}, wb.Drop)
		}
		m := withCode(body)
		m.Tables = []wb.Limits{{Min: min, Max: max}}
		return m.Encode()
	}
	wantBadModule(t, table(100_000_000, -1, false), wasm.Config{}, "MaxTableEntries")
	wantBadModule(t, table(10, -1, true), wasm.Config{}, "no maximum")
	wantBadModule(t, table(10, 100_000_000, true), wasm.Config{}, "MaxTableEntries")
	multi := withCode(nil)
	for range 20 {
		multi.Tables = append(multi.Tables, wb.Limits{Min: 100_000, Max: -1})
	}
	wantBadModule(t, multi.Encode(), wasm.Config{}, "MaxTableEntries")

	for _, ok := range [][]byte{table(10, -1, false), table(10, 1000, true)} {
		m, err := wasm.Load(context.Background(), ok, wasm.Config{})
		if err != nil {
			t.Fatalf("a small table is refused: %v", err)
		}
		if _, err := m.Reconcile(context.Background(), behave); err != nil {
			t.Fatal(err)
		}
		m.Close(context.Background())
	}
}

// Output beyond Config.MaxOutputBytes is a module failure and is never copied out.
func TestOutputIsBounded(t *testing.T) {
	m := wb.ABI(1, wb.I64Const(int64(len(wb.Describe))), wb.Cat(wb.I32Const(100), wb.MemoryGrow, wb.Drop, wb.I64Const(101*65536)))
	m.Data = []wb.Data{{Offset: 0, Bytes: []byte(wb.Describe)}}
	mod, err := wasm.Load(context.Background(), m.Encode(), wasm.Config{MaxOutputBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(context.Background())
	_, err = mod.Reconcile(context.Background(), behave)
	if !errors.Is(err, wasm.ErrBadModule) || !strings.Contains(err.Error(), "MaxOutputBytes") {
		t.Fatalf("got %v; want the output limit named", err)
	}
}

// Config values that cannot be honoured are refused, not clamped.
func TestConfigOutOfRangeIsRefused(t *testing.T) {
	for _, cfg := range []wasm.Config{{MemoryLimitPages: 65537}, {MaxOutputBytes: -1}} {
		if m, err := wasm.Load(context.Background(), guestWasm(t), cfg); err == nil {
			m.Close(context.Background())
			t.Errorf("%+v: loaded", cfg)
		}
	}
}

// Hole 5: the host's memory reached 2.3-7x the guest limit: a guest growing one page at a time made
// wazero reallocate and copy its memory (old and new buffers alive at once), and a huge plan was copied
// several times. Each hostile module runs in a child process whose peak RSS is measured against the
// guest limit.
func TestHostMemoryBoundedByGuestLimit(t *testing.T) {
	if name := os.Getenv("ORDINAL_RSS_CHILD"); name != "" {
		rssChild(name)
		return
	}
	// A guest may hold its memory limit; a plan it returns (at most Config.MaxOutputBytes, 64 MiB by
	// default) is copied out once. That is the bound, with 32 MiB for the host's own allocations.
	const limitMiB, outputMiB = 128, 64
	bound := map[string]int64{"grow-and-touch": limitMiB + 32, "oom": limitMiB + 32, "huge-output": limitMiB + outputMiB + 32}
	for _, name := range []string{"grow-and-touch", "huge-output", "oom"} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostMemoryBoundedByGuestLimit$", "-test.count=1")
			cmd.Env = append(os.Environ(), "ORDINAL_RSS_CHILD="+name, "ORDINAL_RSS_LIMIT_MIB="+strconv.Itoa(limitMiB))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var before, peak int64
			var result string
			for _, line := range strings.Split(string(out), "\n") {
				if r, ok := strings.CutPrefix(line, "RSS "); ok {
					fmt.Sscanf(r, "%d %d %q", &before, &peak, &result)
				}
			}
			if peak == 0 {
				t.Fatalf("child printed no figures:\n%s", out)
			}
			grew := (peak - before) >> 20
			t.Logf("%s: %s; RSS %d MiB before, %d MiB peak: +%d MiB for a %d MiB guest limit", name, result, before>>20, peak>>20, grew, limitMiB)
			if grew > bound[name] {
				t.Errorf("the host grew by %d MiB for a guest limited to %d MiB (bound %d MiB)", grew, limitMiB, bound[name])
			}
		})
	}
}

// rssChild runs one hostile module in this (child) process and prints its peak RSS.
func rssChild(name string) {
	limit, _ := strconv.Atoi(os.Getenv("ORDINAL_RSS_LIMIT_MIB"))
	cfg := wasm.Config{MemoryLimitPages: uint32(limit) * 16, MaxInstances: 1}
	var bin []byte
	switch name {
	case "grow-and-touch": // loop { grow 1 page; fill it } until the limit
		dlen, plen := int64(len(wb.Describe)), int64(len(emptyPlan))
		body := wb.Cat([]byte{0x03, 0x40}, // loop
			wb.I32Const(1), wb.MemoryGrow, []byte{0x22, 0x02}, // local.tee 2 (old pages)
			wb.I32Const(-1), []byte{0x47, 0x04, 0x40}, // i32.ne, if
			[]byte{0x20, 0x02}, wb.I32Const(16), []byte{0x74}, wb.I32Const(1), wb.I32Const(65536), []byte{0xfc, 11, 0}, // memory.fill (old<<16) 1 64K
			[]byte{0x0c, 0x01, 0x0b, 0x0b}, // br 1 (the loop), end if, end loop
			wb.I64Const(dlen<<32|plen))
		m := wb.ABI(1, wb.I64Const(dlen), body)
		m.Funcs[1].Locals = []byte{wb.I32}
		m.Data = []wb.Data{{Offset: 0, Bytes: []byte(wb.Describe + emptyPlan)}}
		bin = m.Encode()
	case "huge-output": // fill the whole memory, then return the largest plan allowed (64 MiB) from it
		pages := int32(limit*16 - 34)
		body := wb.Cat(wb.I32Const(pages), wb.MemoryGrow, wb.Drop,
			wb.I32Const(0), wb.I32Const('x'), wb.I32Const(pages<<16), []byte{0xfc, 11, 0}, // memory.fill
			wb.I64Const(wasm.DefaultMaxOutputBytes))
		m := wb.ABI(32, nil, body)
		m.Data = []wb.Data{{Offset: 1 << 20, Bytes: []byte(wb.Describe)}}
		m.Funcs[2].Body = wb.I64Const(int64(1<<20)<<32 | int64(len(wb.Describe)))
		bin = m.Encode()
	case "oom":
		b, err := os.ReadFile("testdata/oom.wasm")
		if err != nil {
			panic(err)
		}
		bin = b
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	before := ru.Maxrss << 10
	ctx := context.Background()
	m, err := wasm.Load(ctx, bin, cfg)
	if err != nil {
		panic(err)
	}
	in := behave
	if name == "oom" {
		in = misbehave
	}
	_, err = m.Reconcile(ctx, in)
	result := "ok"
	if err != nil {
		result = err.Error()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("RSS %d %d %q\n", before, ru.Maxrss<<10, result)
}

// A guest that exits with wazero's own "deadline exceeded" code was reported as a timeout: only the
// call's context makes a timeout.
func TestProcExitIsNotATimeout(t *testing.T) {
	m := withCode(nil)
	exit := m.ImportFunc("wasi_snapshot_preview1", "proc_exit", wb.FuncType{Params: []byte{wb.I32}})
	m.Funcs[1].Body = wb.Cat(wb.I32Const(-268435457 /* 0xefffffff */), append([]byte{0x10}, wb.U32(exit)...), wb.I64Const(0))
	mod, err := wasm.Load(context.Background(), m.Encode(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(context.Background())
	_, err = mod.Reconcile(context.Background(), behave)
	if !errors.Is(err, wasm.ErrTrap) || errors.Is(err, wasm.ErrTimeout) || !strings.Contains(err.Error(), "exited with code 4026531839") {
		t.Fatalf("got %v; want the exit reported as such, not as a timeout", err)
	}
}

// A damaged compilation-cache entry broke every later run, or (a length field damaged) made wazero
// allocate 96 GB and the process die. Entries are checked against the manifest Load writes, dropped when
// they differ, and the module compiled again.
func TestCorruptCompileCacheIsRecompiled(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	bin := guestWasm(t)
	m, err := wasm.Load(ctx, bin, wasm.Config{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	m.Close(ctx)
	var entries []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p) // DIGEST/BUILD/wazero's own directory/entry: not the manifest or the prepared module
		if err == nil && !d.IsDir() && strings.Count(filepath.ToSlash(rel), "/") == 3 {
			entries = append(entries, p)
		}
		return nil
	})
	if len(entries) != 1 {
		t.Fatalf("compiled entries %v; want one", entries)
	}
	for _, damage := range []func(string) error{
		func(p string) error { return os.Truncate(p, 50) },
		func(p string) error { // flip the last bytes
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i := len(b) - 4; i < len(b); i++ {
				b[i] ^= 0xff
			}
			return os.WriteFile(p, b, 0o600)
		},
	} {
		if err := damage(entries[0]); err != nil {
			t.Fatal(err)
		}
		m, err := wasm.Load(ctx, bin, wasm.Config{CacheDir: dir})
		if err != nil {
			t.Fatalf("a damaged cache entry breaks Load: %v", err)
		}
		if _, err := m.Reconcile(ctx, behave); err != nil {
			t.Fatal(err)
		}
		m.Close(ctx)
		if st, err := os.Stat(entries[0]); err != nil || st.Size() <= 50 {
			t.Fatalf("the entry was not written again: %v %v", st, err)
		}
	}
}

// A Load that finds its module in a sealed cache leaves the manifest as it is: the entries it verified
// are the ones wazero read, so hashing them again to write the same manifest (as every CLI run once did,
// a third of its start) is not needed.
func TestCacheHitKeepsTheManifest(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	bin := guestWasm(t)
	manifest := func() os.FileInfo {
		t.Helper()
		m, err := wasm.Load(ctx, bin, wasm.Config{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Reconcile(ctx, behave); err != nil {
			t.Fatal(err)
		}
		m.Close(ctx)
		sums, err := filepath.Glob(filepath.Join(dir, "*", "*", "CRC32C-SUMS"))
		if err != nil || len(sums) != 1 {
			t.Fatalf("manifests %v (%v), want one", sums, err)
		}
		st, err := os.Stat(sums[0])
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	first := manifest()
	if second := manifest(); !os.SameFile(first, second) {
		t.Fatal("a Load that found its module in the cache wrote the manifest again")
	}
}

// Found by FuzzLoad (testdata/fuzz/FuzzLoad/fe125743ed7ea045): a 190-byte module whose function type
// declares 3.2 billion parameters made wazero's decoder allocate 26 GB, and the Go runtime killed the
// process. Every vector length is now checked against the bytes that follow it before wazero decodes.
func TestHugeVectorLengthsRefused(t *testing.T) {
	huge := wb.U32(0xc4000000)
	for name, bin := range map[string][]byte{
		"parameters": append(append([]byte("\x00asm\x01\x00\x00\x00\x01\x07\x01\x60"), huge...), 0x00),
		"imports":    append(append([]byte("\x00asm\x01\x00\x00\x00\x02\x05"), huge...), 0x00),
		"data":       append(append([]byte("\x00asm\x01\x00\x00\x00\x0b\x05"), huge...), 0x00),
		"name":       append(append([]byte("\x00asm\x01\x00\x00\x00\x00\x0c\x04name\x01\x06"), huge...), 0x00),
	} {
		if m, err := wasm.Load(context.Background(), bin, wasm.Config{}); err == nil || !errors.Is(err, wasm.ErrBadModule) {
			if m != nil {
				m.Close(context.Background())
			}
			t.Errorf("%s: got %v, want a bad-module error", name, err)
		}
	}
}

// A controller's replicas start together and share the compilation cache: Loads of one module into one
// cache directory at once all succeed, and leave a cache the next Load verifies and uses. (Two replicas
// once failed on the same temporary manifest name: "rename SHA256SUMS.tmp: no such file or directory",
// the manifest's name then.)
func TestConcurrentLoadsShareTheCompileCache(t *testing.T) {
	ctx := context.Background()
	bin := guestWasm(t)
	for round := range 3 {
		dir := t.TempDir()
		errs := make(chan error, 8)
		for range cap(errs) {
			go func() {
				// Eight compiles at once on a loaded CI machine can pass the default 30 s: the test is
				// about the cache, so the timeout is only a backstop (found failing at a load of 20).
				m, err := wasm.Load(ctx, bin, wasm.Config{CacheDir: dir, Timeout: time.Hour})
				if err == nil {
					_, err = m.Reconcile(ctx, behave)
					m.Close(ctx)
				}
				errs <- err
			}()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: a concurrent Load: %v", round, err)
			}
		}
		var leftovers []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".tmp") || strings.Contains(p, ".discarded-")) {
				leftovers = append(leftovers, p)
			}
			return nil
		})
		if len(leftovers) > 0 {
			t.Errorf("round %d: temporary files left: %v", round, leftovers)
		}
		sums, err := filepath.Glob(filepath.Join(dir, "*", "*", "CRC32C-SUMS"))
		if err != nil || len(sums) != 1 {
			t.Fatalf("round %d: manifests %v (%v), want one", round, sums, err)
		}
	}
}

// Builds that link another wazero (a release binary and a test binary) share a cache directory: each
// build's manifest covers its own entries only, so a Load neither hashes nor discards the other's.
func TestCompileCacheKeepsOtherBuildsApart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	bin := guestWasm(t)
	load := func() {
		t.Helper()
		m, err := wasm.Load(ctx, bin, wasm.Config{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		m.Close(ctx)
	}
	load()
	var sums []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "CRC32C-SUMS" {
			sums = append(sums, p)
		}
		return nil
	})
	if len(sums) != 1 {
		t.Fatalf("manifests %v, want one", sums)
	}
	// another build's compiled code for the same module, where it was kept before builds had directories
	// of their own: beside this build's wazero-VERSION-ARCH-OS, under the module's digest
	rel, err := filepath.Rel(dir, sums[0])
	if err != nil {
		t.Fatal(err)
	}
	module := filepath.Join(dir, strings.Split(filepath.ToSlash(rel), "/")[0])
	other := filepath.Join(module, "wazero-v0.0.0-other-amd64-linux", "entry")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("another build's compiled code"), 0o644); err != nil {
		t.Fatal(err)
	}
	load()
	manifest, err := os.ReadFile(sums[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(manifest), "wazero-other-build") || len(strings.TrimSpace(string(manifest))) == 0 {
		t.Errorf("manifest lists another build's entries, or none:\n%s", manifest)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another build's entry is gone: %v", err)
	}
}
