package wasm

import (
	"errors"
	"fmt"
)

// What a module may cost the host before it runs a single instruction. wazero's optimizing compiler takes
// time quadratic in the number of blocks of one function (measured: a 240 KB function of 80,000 blocks
// compiles for 28 s whatever their nesting; 100,000 nested blocks for 37 s), and it allocates every
// table eagerly (a 522-byte module with a 100M-entry table cost 825 MB). Neither is bounded by a call
// timeout or the memory limit, so Load scans the binary first and refuses, deterministically and before
// compiling, a module beyond these limits. The defaults leave the shipped modules far inside them
// (RATIONALE.md has the figures).

// ModuleLimits bound a module's static shape. Zero fields take the defaults.
type ModuleLimits struct {
	// MaxBytes of the module binary (default 64 MiB; the shipped TinyGo module is 0.6 MB, a standard-Go
	// build of the same guest about 3 MB).
	MaxBytes int
	// MaxFunctionBlocks is the most blocks, loops, ifs and br_table targets one function may have
	// (default 20,000; the shipped module's largest function has 1,153, the standard-Go build's 4,456).
	MaxFunctionBlocks int
	// MaxCompileCost bounds the compiler's measured cost model, summed over functions:
	// 4*(blocks+1)^2 + 1000*(bytes+locals), about nanoseconds of compiling on a 2-core machine
	// (default 1e10, about 10 s at worst; the shipped module costs 0.54e9, the standard-Go build 3.4e9).
	MaxCompileCost int64
	// MaxTableEntries is the most entries all tables may have together: their declared minimum, and
	// their maximum when the code can grow them (table.grow), where a table without a maximum is
	// unbounded and refused (default 1M entries, 8 MB).
	MaxTableEntries int64
	// MaxFunctions, MaxLocals (per function), MaxGlobals and MaxSegments (data plus element) bound the
	// module's other eager allocations (defaults 1M, 50,000, 100,000, 100,000).
	MaxFunctions, MaxLocals, MaxGlobals, MaxSegments int
	// MaxElementItems is the most items (function references) all element segments may hold together
	// (default 1M, enough to fill the largest tables MaxTableEntries admits). wazero decodes each item into
	// an expression of its own, about 39 bytes of the compiled module, and copies a passive segment's items
	// into every instance (another 39): one segment of millions of one-byte items costs what millions of
	// segments would. A data segment's bytes need no limit of their own: wazero holds one copy of them,
	// bounded by MaxBytes, which instances share.
	MaxElementItems int
}

// Defaults of ModuleLimits.
const (
	DefaultMaxModuleBytes    = 64 << 20
	DefaultMaxFunctionBlocks = 20_000
	DefaultMaxCompileCost    = 10_000_000_000
	DefaultMaxTableEntries   = 1 << 20
	DefaultMaxFunctions      = 1 << 20
	DefaultMaxLocals         = 50_000
	DefaultMaxGlobals        = 100_000
	DefaultMaxSegments       = 100_000
	DefaultMaxElementItems   = 1 << 20
)

// validate refuses a negative limit, naming it: zero takes the default, and a negative one would refuse
// every module with a word about its shape rather than about the configuration.
func (l ModuleLimits) validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxBytes", int64(l.MaxBytes)}, {"MaxFunctionBlocks", int64(l.MaxFunctionBlocks)},
		{"MaxCompileCost", l.MaxCompileCost}, {"MaxTableEntries", l.MaxTableEntries},
		{"MaxFunctions", int64(l.MaxFunctions)}, {"MaxLocals", int64(l.MaxLocals)},
		{"MaxGlobals", int64(l.MaxGlobals)}, {"MaxSegments", int64(l.MaxSegments)},
		{"MaxElementItems", int64(l.MaxElementItems)},
	} {
		if f.v < 0 {
			return fmt.Errorf("ordinal module: ModuleLimits.%s %d is negative (0 takes the default)", f.name, f.v)
		}
	}
	return nil
}

func (l ModuleLimits) withDefaults() ModuleLimits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.MaxBytes, DefaultMaxModuleBytes)
	def(&l.MaxFunctionBlocks, DefaultMaxFunctionBlocks)
	def(&l.MaxFunctions, DefaultMaxFunctions)
	def(&l.MaxLocals, DefaultMaxLocals)
	def(&l.MaxGlobals, DefaultMaxGlobals)
	def(&l.MaxSegments, DefaultMaxSegments)
	def(&l.MaxElementItems, DefaultMaxElementItems)
	if l.MaxCompileCost == 0 {
		l.MaxCompileCost = DefaultMaxCompileCost
	}
	if l.MaxTableEntries == 0 {
		l.MaxTableEntries = DefaultMaxTableEntries
	}
	return l
}

// ModuleShape is what the scan measured of a module.
type ModuleShape struct {
	Bytes             int
	Functions         int
	MaxFunctionBlocks int   // blocks of the function that has the most
	CompileCost       int64 // sum of (blocks+1)^2 + body bytes
	TableEntries      int64 // what the tables may reach; -1: unbounded
	TableGrow         bool  // the code has a table.grow
	MaxLocals         int
	Globals, Segments int
	ElementItems      int // items of all element segments
}

// checkModuleLimits scans bin and returns its shape, or a *Error (ErrBadModule) naming the limit exceeded
// and the Config field that raises it.
func checkModuleLimits(bin []byte, l ModuleLimits) (ModuleShape, error) {
	shape := ModuleShape{Bytes: len(bin)}
	refuse := func(format string, args ...any) (ModuleShape, error) {
		return shape, &Error{Kind: ErrBadModule, Op: "load", Msg: fmt.Sprintf(format, args...)}
	}
	if len(bin) > l.MaxBytes {
		return refuse("module of %d bytes is larger than the %d-byte limit (ModuleLimits.MaxBytes)", len(bin), l.MaxBytes)
	}
	err := scanModule(bin, &shape, l)
	var le *limitError
	if errors.As(err, &le) {
		return refuse("%s", le.msg)
	}
	if err != nil {
		return refuse("not a valid wasm module: %v", err)
	}
	return shape, nil
}

type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

func overLimit(format string, args ...any) error { return &limitError{fmt.Sprintf(format, args...)} }
